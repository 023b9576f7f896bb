/**
 * Issue 11: the gateway sends input tensors through Triton's system shared memory when the server is
 * co-located, on real embedded servers with real photos:
 * - same predictions through a region as in the request body (HTTP and gRPC);
 * - regions registered once and reused across requests;
 * - the wire when the server refuses client shared memory or cannot open the key (a server looking
 *   in another directory stands for another IPC namespace), with one log line;
 * - a server that forgot its regions (as after a restart) gets them again;
 * - cleanup: unregistered and removed on close and on SIGTERM, stale ones swept at start.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TritonClient, type InferInput } from '@tritonserver-ts/client';
import type { RunningServer } from '@tritonserver-ts/server';
import { startServer } from '@tritonserver-ts/server';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { POST } from '../src/app/api/predict/route';
import { parseEnv } from '../src/env';
import type { Prediction } from '../src/lib/types';
import { SELF, isStale, ownerOf, poolPrefix } from '../src/server/shm-names';
import { SHM_DIR, ShmPool, ShmPoolError } from '../src/server/shm-pool';
import { closeSharedMemory, isLoopbackUrl, sharedMemoryState } from '../src/server/shared-memory';
import { json, MODELS, photo, PYTHON, ROOT, uploadRequest, useEnv } from './helpers';

const PHOTOS = ['P005', 'A015', 'L001'];
const TENSOR_BYTES = 3 * 224 * 224 * 4;

/** An embedded server on free ports; `allowClientShm` as `--allow-client-shm`. */
function start(opts: { allowClientShm: boolean; sharedMemoryDir?: string }): Promise<RunningServer> {
  return startServer({
    modelRepositories: [MODELS],
    httpPort: 0,
    grpcPort: 0,
    exitTimeoutSecs: 1,
    python: { interpreter: PYTHON },
    allowClientShm: opts.allowClientShm,
    ...(opts.sharedMemoryDir ? { sharedMemoryDir: opts.sharedMemoryDir } : {}),
  });
}

/** Our objects in /dev/shm (this process's prefix). */
function ourFiles(): string[] {
  const mine = `gourmetgram_web_${SELF.host}_${SELF.pid}_${SELF.token}_`;
  return readdirSync(SHM_DIR).filter((f) => f.startsWith(mine));
}

async function predict(code: string): Promise<Prediction> {
  const res = await POST(uploadRequest(photo(code)));
  expect(res.status).toBe(200);
  return json<Prediction>(res);
}

/**
 * The input of every prediction's `infer` while `fn` ran (those with a request id: not the blank
 * warm-up inference that reads the model's labels).
 */
async function inputsSent(fn: () => Promise<unknown>): Promise<InferInput[]> {
  const spy = vi.spyOn(TritonClient.prototype, 'infer');
  try {
    await fn();
    return spy.mock.calls.filter((c) => c[2]?.requestId !== undefined).map((c) => c[1][0]!);
  } finally {
    spy.mockRestore();
  }
}

const ranking = (p: Prediction) => p.top.map((t) => [t.label, t.probability.toFixed(6)]);

let shmServer: RunningServer; // --allow-client-shm=true
let feedbackDir: string;
const admin = () => new TritonClient({ url: shmServer.url, timeoutMs: 5000 });

beforeAll(async () => {
  shmServer = await start({ allowClientShm: true });
  feedbackDir = mkdtempSync(join(tmpdir(), 'gg-shm-feedback-'));
  useEnv({ FEEDBACK_DIR: feedbackDir, GATEWAY_LOG: 'false', FEEDBACK_STORAGE: 'none' });
});
afterEach(async () => {
  await closeSharedMemory();
  vi.restoreAllMocks();
});
afterAll(async () => {
  await closeSharedMemory();
  await shmServer?.close();
  rmSync(feedbackDir, { recursive: true, force: true });
  useEnv({
    TRITON_SHARED_MEMORY: undefined,
    TRITON_SHARED_MEMORY_SLOTS: undefined,
    TRITON_SERVER_URL: undefined,
    TRITON_PROTOCOL: undefined,
    FEEDBACK_STORAGE: undefined,
  });
  expect(ourFiles()).toEqual([]);
});

describe('the gateway through system shared memory', () => {
  it('answers the same predictions through a region as in the request body (HTTP, then gRPC)', async () => {
    for (const protocol of ['http', 'grpc'] as const) {
      const url = protocol === 'http' ? shmServer.url : `grpc://${shmServer.grpcUrl}`;
      useEnv({ TRITON_PROTOCOL: protocol, TRITON_SERVER_URL: url, TRITON_SHARED_MEMORY: 'none' });
      const wire: Prediction[] = [];
      const wireInputs = await inputsSent(async () => {
        for (const c of PHOTOS) wire.push(await predict(c));
      });
      expect(wireInputs.every((i) => i.data !== undefined && i.sharedMemory === undefined)).toBe(true);

      useEnv({ TRITON_SHARED_MEMORY: 'auto' });
      const shm: Prediction[] = [];
      const shmInputs = await inputsSent(async () => {
        for (const c of PHOTOS) shm.push(await predict(c));
      });
      // Every request named a region and carried no data.
      expect(shmInputs).toHaveLength(PHOTOS.length);
      for (const i of shmInputs) {
        expect(i.data).toBeUndefined();
        expect(i.sharedMemory).toMatchObject({ byteSize: TENSOR_BYTES });
      }
      expect(shm.map(ranking)).toEqual(wire.map(ranking));
      expect(new Set(shm.map((p) => p.label)).size).toBeGreaterThan(1); // different photos, different answers
      await closeSharedMemory();
    }
  });

  it('registers each region once and reuses it across requests', async () => {
    useEnv({ TRITON_PROTOCOL: 'http', TRITON_SERVER_URL: shmServer.url, TRITON_SHARED_MEMORY: 'auto' });
    const register = vi.spyOn(TritonClient.prototype, 'registerSystemSharedMemory');
    for (let i = 0; i < 12; i++) await predict(PHOTOS[i % PHOTOS.length]!);
    // One request at a time: one region, registered once.
    expect(register).toHaveBeenCalledTimes(1);
    const client = admin();
    const status = await client.getSystemSharedMemoryStatus();
    const [region] = sharedMemoryState().regions;
    expect(status.filter((r) => r.name === region)).toEqual([
      { name: region, key: `/${region}`, offset: 0, byte_size: TENSOR_BYTES },
    ]);
    expect(ourFiles()).toEqual([region]);

    // Eight at once, twice: at most TRITON_SHARED_MEMORY_SLOTS (8) regions, none registered again.
    await Promise.all(Array.from({ length: 8 }, (_, i) => predict(PHOTOS[i % PHOTOS.length]!)));
    const after = sharedMemoryState().regions;
    expect(after.length).toBeGreaterThanOrEqual(1);
    expect(after.length).toBeLessThanOrEqual(8);
    expect(register).toHaveBeenCalledTimes(after.length);
    await Promise.all(Array.from({ length: 8 }, (_, i) => predict(PHOTOS[i % PHOTOS.length]!)));
    expect(register.mock.calls.length).toBeLessThanOrEqual(8);
    const names = (await client.getSystemSharedMemoryStatus()).map((r) => r.name);
    for (const r of sharedMemoryState().regions) expect(names).toContain(r);
    await client.close();
  });

  it('registers the regions again when the server forgot them (as after a restart), then uses them', async () => {
    useEnv({ TRITON_PROTOCOL: 'http', TRITON_SERVER_URL: shmServer.url, TRITON_SHARED_MEMORY: 'auto' });
    const before = await predict('P005');
    const [region] = sharedMemoryState().regions;
    const client = admin();
    await client.unregisterSystemSharedMemory(); // every region: what a restarted server knows
    expect(await client.getSystemSharedMemoryStatus()).toEqual([]);
    let again!: Prediction;
    const inputs = await inputsSent(async () => {
      again = await predict('P005');
    });
    // Tried through the region, refused, registered again, retried through the region.
    expect(inputs.map((i) => i.sharedMemory?.region)).toEqual([region, region]);
    expect(ranking(again)).toEqual(ranking(before));
    expect((await client.getSystemSharedMemoryStatus()).map((r) => r.name)).toEqual([region]);
    expect(sharedMemoryState().active).toBe(true);
    await client.close();
  });

  it('survives a real server restart on the same port: registers again, retries once, keeps using the region; a server down at registration is no refusal', async () => {
    let server = await start({ allowClientShm: true });
    const port = new URL(server.url).port;
    try {
      useEnv({ TRITON_PROTOCOL: 'http', TRITON_SERVER_URL: server.url, TRITON_SHARED_MEMORY: 'auto' });
      const before = await predict('L001');
      const [region] = sharedMemoryState().regions;
      await server.close();
      server = await startServer({
        modelRepositories: [MODELS],
        httpPort: Number(port),
        grpcPort: 0,
        exitTimeoutSecs: 1,
        python: { interpreter: PYTHON },
        allowClientShm: true,
      });
      let after!: Prediction;
      const inputs = await inputsSent(async () => {
        after = await predict('L001');
      });
      expect(inputs.map((i) => i.sharedMemory?.region)).toEqual([region, region]);
      expect(ranking(after)).toEqual(ranking(before));
      const client = new TritonClient({ url: server.url });
      expect((await client.getSystemSharedMemoryStatus()).map((r) => r.name)).toEqual([region]);
      await client.close();

      // A registration that gets no answer (server down) is not a refusal: that request fails as it
      // would in the body (503), the next one, with the server back, uses a region.
      await server.close();
      await closeSharedMemory(); // no regions left: the next request must register one
      const down = await POST(uploadRequest(photo('L001')));
      expect(down.status).toBe(503);
      expect(sharedMemoryState()).toMatchObject({ disabled: false, regions: [] });
      server = await startServer({
        modelRepositories: [MODELS],
        httpPort: Number(port),
        grpcPort: 0,
        exitTimeoutSecs: 1,
        python: { interpreter: PYTHON },
        allowClientShm: true,
      });
      const back = await inputsSent(async () => {
        expect(ranking(await predict('L001'))).toEqual(ranking(before));
      });
      expect(back.at(-1)!.sharedMemory).toBeDefined();
      expect(sharedMemoryState()).toMatchObject({ active: true, disabled: false });
    } finally {
      await closeSharedMemory();
      await server.close();
    }
  });

  it('cleans up: regions unregistered and objects removed on close', async () => {
    useEnv({ TRITON_PROTOCOL: 'http', TRITON_SERVER_URL: shmServer.url, TRITON_SHARED_MEMORY: 'auto' });
    await Promise.all(PHOTOS.map((c) => predict(c)));
    const { files, regions } = sharedMemoryState();
    expect(regions.length).toBeGreaterThan(0);
    for (const f of files) expect(existsSync(f)).toBe(true);
    await closeSharedMemory();
    for (const f of files) expect(existsSync(f)).toBe(false);
    const client = admin();
    const left = (await client.getSystemSharedMemoryStatus()).map((r) => r.name);
    for (const r of regions) expect(left).not.toContain(r);
    await client.close();
  });

  it('sweeps what a killed gateway process of this host left behind, not other hosts', async () => {
    useEnv({ TRITON_PROTOCOL: 'http', TRITON_SERVER_URL: shmServer.url, TRITON_SHARED_MEMORY: 'auto' });
    // A process id that is certainly gone: a child that has exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.pid'], { stdio: 'ignore' }).pid;
    const stale = `gourmetgram_web_${SELF.host}_${dead}_0badc0de_${TENSOR_BYTES}_0`;
    const foreign = `gourmetgram_web_otherhost-${SELF.token}_${dead}_0badc0de_${TENSOR_BYTES}_0`;
    const client = admin();
    try {
      for (const f of [stale, foreign]) writeFileSync(join(SHM_DIR, f), Buffer.alloc(TENSOR_BYTES));
      await client.registerSystemSharedMemory(stale, `/${stale}`, TENSOR_BYTES);
      await predict('P005');
      expect(existsSync(join(SHM_DIR, stale))).toBe(false);
      expect((await client.getSystemSharedMemoryStatus()).map((r) => r.name)).not.toContain(stale);
      expect(existsSync(join(SHM_DIR, foreign))).toBe(true);
    } finally {
      for (const f of [stale, foreign]) rmSync(join(SHM_DIR, f), { force: true });
      await client.unregisterSystemSharedMemory(stale).catch(() => undefined);
      await client.close();
    }
  });
});

describe('the wire when shared memory cannot be used', () => {
  /** Runs predictions and answers what was logged and sent. */
  async function fallback(): Promise<{ logs: string[]; inputs: InferInput[]; predictions: Prediction[] }> {
    const logs: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      logs.push(String(chunk));
      return true;
    });
    const register = vi.spyOn(TritonClient.prototype, 'registerSystemSharedMemory');
    const predictions: Prediction[] = [];
    const inputs = await inputsSent(async () => {
      for (const c of [...PHOTOS, ...PHOTOS]) predictions.push(await predict(c));
    });
    // Tried once, then the wire for good.
    expect(register).toHaveBeenCalledTimes(1);
    expect(sharedMemoryState()).toMatchObject({ active: false, disabled: true, regions: [] });
    expect(inputs).toHaveLength(6);
    for (const i of inputs) expect(i.sharedMemory).toBeUndefined();
    expect(ourFiles()).toEqual([]);
    const lines = logs.filter((l) => l.includes('system shared memory unavailable'));
    expect(lines).toHaveLength(1);
    return { logs: lines, inputs, predictions };
  }

  it('a server refusing client shared memory (Triton ≥ 26.05 without --allow-client-shm): one log line, then the wire', async () => {
    const server = await start({ allowClientShm: false });
    try {
      useEnv({
        TRITON_PROTOCOL: 'http',
        TRITON_SERVER_URL: server.url,
        TRITON_SHARED_MEMORY: 'auto',
        GATEWAY_LOG: 'true', // auto's line is information: logged with the request lines
      });
      const { logs, predictions } = await fallback();
      useEnv({ GATEWAY_LOG: 'false' });
      expect(logs[0]).toContain('Client shared memory is disabled');
      expect(JSON.parse(logs[0]!)).toMatchObject({ level: 'info' });
      useEnv({ TRITON_SHARED_MEMORY: 'none' });
      const wire = await Promise.all(PHOTOS.map((c) => predict(c)));
      expect(predictions.slice(0, 3).map(ranking)).toEqual(wire.map(ranking));
    } finally {
      await closeSharedMemory();
      await server.close();
    }
  });

  it('a server that cannot open the key (another IPC namespace), TRITON_SHARED_MEMORY=system: logged as an error, then the wire', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'gg-other-ipc-'));
    const server = await start({ allowClientShm: true, sharedMemoryDir: elsewhere });
    try {
      useEnv({ TRITON_PROTOCOL: 'http', TRITON_SERVER_URL: server.url, TRITON_SHARED_MEMORY: 'system' });
      const { logs } = await fallback();
      expect(logs[0]).toContain('Unable to open shared memory region');
      expect(JSON.parse(logs[0]!)).toMatchObject({ level: 'error' });
      const client = new TritonClient({ url: server.url });
      expect(await client.getSystemSharedMemoryStatus()).toEqual([]);
      await client.close();
    } finally {
      await closeSharedMemory();
      await server.close();
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('TRITON_SHARED_MEMORY=none, and auto with a non-loopback address: no registration at all', async () => {
    const register = vi.spyOn(TritonClient.prototype, 'registerSystemSharedMemory');
    useEnv({ TRITON_PROTOCOL: 'http', TRITON_SERVER_URL: shmServer.url, TRITON_SHARED_MEMORY: 'none' });
    const inputs = await inputsSent(() => predict('P005'));
    expect(inputs[0]!.sharedMemory).toBeUndefined();
    expect(register).not.toHaveBeenCalled();
    expect(isLoopbackUrl('http://127.0.0.1:8000')).toBe(true);
    expect(isLoopbackUrl('http://localhost:8000')).toBe(true);
    expect(isLoopbackUrl('http://[::1]:8000')).toBe(true);
    expect(isLoopbackUrl('grpc://127.0.0.1:8001')).toBe(true);
    expect(isLoopbackUrl('http://triton_server:8000')).toBe(false);
    expect(isLoopbackUrl('grpc://10.0.0.5:8001')).toBe(false);
    expect(isLoopbackUrl('http://127.example.com:8000')).toBe(false);
  });
});

describe('ShmPool and region names', () => {
  it('leases at most `slots` regions, reuses a released one, and cleans up what it could not register', async () => {
    const client = admin();
    const pool = new ShmPool({ client, byteSize: 64, slots: 2, prefix: poolPrefix() });
    try {
      const a = await pool.lease();
      const b = await pool.lease();
      expect(a && b).toBeTruthy();
      expect(await pool.lease()).toBeUndefined(); // both busy: the caller uses the wire
      a!.write(new Uint8Array(64).fill(7));
      expect(() => a!.write(new Uint8Array(65))).toThrow(RangeError);
      a!.release();
      const c = await pool.lease();
      expect(c!.region).toBe(a!.region);
      expect(pool.regions).toHaveLength(2);
    } finally {
      await pool.close();
    }
    expect(pool.files.length).toBe(0);
    expect((await client.getSystemSharedMemoryStatus()).filter((r) => ownerOf(r.name))).toEqual([]);

    // A name the server already holds: refused, and the object is removed.
    const prefix = poolPrefix();
    const taken = `${prefix}_64_0`;
    writeFileSync(join(SHM_DIR, `${taken}-other`), Buffer.alloc(64));
    await client.registerSystemSharedMemory(taken, `/${taken}-other`, 64);
    const clash = new ShmPool({ client, byteSize: 64, slots: 1, prefix });
    try {
      const err = await clash.lease().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ShmPoolError);
      expect((err as ShmPoolError).code).toBe('SHM_REGISTER_FAILED');
      expect(existsSync(join(SHM_DIR, taken))).toBe(false);
    } finally {
      await clash.close();
      await client.unregisterSystemSharedMemory(taken);
      rmSync(join(SHM_DIR, `${taken}-other`), { force: true });
      await client.close();
    }
  });

  it('tells stale names from live ones', () => {
    const self = { host: 'h1', pid: 100, token: 'aaaaaaaa' };
    const alive = (pid: number) => pid === 200;
    expect(isStale('gourmetgram_web_h1_100_aaaaaaaa_1_602112_0', self, alive)).toBe(false); // mine
    expect(isStale('gourmetgram_web_h1_100_bbbbbbbb_1_602112_0', self, alive)).toBe(true); // my pid, earlier
    expect(isStale('gourmetgram_web_h1_200_bbbbbbbb_1_602112_0', self, alive)).toBe(false); // running
    expect(isStale('gourmetgram_web_h1_300_bbbbbbbb_1_602112_0', self, alive)).toBe(true); // gone
    expect(isStale('gourmetgram_web_h2_300_bbbbbbbb_1_602112_0', self, alive)).toBe(false); // other host
    expect(isStale('perf_analyzer_ts_300_1_input_0_0', self, alive)).toBe(false);
  });
});

describe('process end', () => {
  it('SIGTERM unregisters the regions and removes the objects', async () => {
    const script = `
      import { TritonClient } from '@tritonserver-ts/client';
      import { inferTensor, sharedMemoryState } from './src/server/shared-memory.ts';
      const client = new TritonClient({ url: process.env.TRITON_SERVER_URL });
      await inferTensor(client, 'food_classifier_onnx',
        { name: 'input', shape: [1, 3, 224, 224], data: new Float32Array(3 * 224 * 224) },
        { outputs: [{ name: 'output' }] });
      console.log(JSON.stringify(sharedMemoryState()));
      setInterval(() => {}, 1000);
    `;
    const child = spawn(
      process.execPath,
      ['--conditions=react-server', '--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: join(ROOT, 'apps/web'),
        env: { ...process.env, TRITON_SERVER_URL: shmServer.url, TRITON_SHARED_MEMORY: 'auto' },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    const state = await new Promise<{ regions: string[]; files: string[] }>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line) as { regions: string[]; files: string[] });
      });
      child.on('exit', (code) => reject(new Error(`child exited (${code}): ${out}`)));
    });
    expect(state.regions).toHaveLength(1);
    expect(existsSync(state.files[0]!)).toBe(true);
    const client = admin();
    expect((await client.getSystemSharedMemoryStatus()).map((r) => r.name)).toContain(state.regions[0]);
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, sig) => r(sig)));
    child.kill('SIGTERM');
    expect(await exited).toBe('SIGTERM'); // the signal still ends the process
    expect(existsSync(state.files[0]!)).toBe(false);
    expect((await client.getSystemSharedMemoryStatus()).map((r) => r.name)).not.toContain(state.regions[0]);
    await client.close();
  });
});

describe('the shared-memory settings', () => {
  it('take auto, system or none (any case) and 1-256 slots; anything else is refused by name', () => {
    expect(parseEnv({}).sharedMemory).toBe('auto');
    expect(parseEnv({}).sharedMemorySlots).toBe(8);
    expect(parseEnv({ TRITON_SHARED_MEMORY: ' System ' }).sharedMemory).toBe('system');
    expect(parseEnv({ TRITON_SHARED_MEMORY_SLOTS: '256' }).sharedMemorySlots).toBe(256);
    expect(() => parseEnv({ TRITON_SHARED_MEMORY: 'cuda' })).toThrow(/TRITON_SHARED_MEMORY/);
    for (const slots of ['0', '257', '1.5', 'many']) {
      expect(() => parseEnv({ TRITON_SHARED_MEMORY_SLOTS: slots })).toThrow(/TRITON_SHARED_MEMORY_SLOTS/);
    }
  });
});
