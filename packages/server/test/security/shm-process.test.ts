/**
 * Issue 23, items 5 and 6: shared-memory attacks against a server in its own process
 * (`test/helpers/memory-server.ts`, HTTP and gRPC), measured from the outside: its open files and
 * RSS from /proc, and the latency of `/v2/health/live` on fresh connections while the attack runs.
 *
 * - Item 5: every registration used to keep its `/dev/shm` object open, so 19,860 registrations
 *   used up the 20,000-descriptor limit and the server could not accept connections any more. Now no
 *   descriptor is held per region, and registrations past `--client-shm-max-regions` are refused.
 * - Item 6: a 1 GiB sparse region read as one input took 11.5 s on the event loop, peaked at 5.6 GB
 *   and answered 500. Now shared-memory inputs count against the per-request input limit (400 before
 *   a byte is read) and the in-flight budget (503 / UNAVAILABLE), and are read off the event loop.
 */
import { closeSync, ftruncateSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';

import { encodeInferRequest, type InferRequestOptions } from '@tritonserver-ts/protocol/http';
import { type InferInput } from '@tritonserver-ts/protocol';
import { Metadata, type ServiceError } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';

import { peakRss, startMemoryChild, type MemoryChild } from '../helpers/memory-child.js';
import type { MemoryServerOptions } from '../helpers/memory-server.js';
import { GrpcStatus, GrpcTestClient, grpcError } from '../grpc/helpers.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const tag = `tritonserver-ts-shm-process-${process.pid}`;

/** A memory-test server with a gRPC client of its own. */
interface Child extends MemoryChild {
  readonly grpc: GrpcTestClient;
}

let child: Child | undefined;
const files: string[] = [];

afterEach(async () => {
  const c = child;
  child = undefined;
  for (const f of files.splice(0)) rmSync(f, { force: true });
  if (c === undefined) return;
  c.grpc.close();
  await c.stop();
});

async function startChild(options: MemoryServerOptions): Promise<Child> {
  const started = await startMemoryChild(options);
  const c: Child = Object.assign(started, { grpc: new GrpcTestClient(`127.0.0.1:${started.grpcPort}`) });
  child = c;
  return c;
}

/** One HTTP request on a connection of its own: status and body text. */
function send(
  port: number,
  method: string,
  path: string,
  body?: Uint8Array,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, agent: false, headers: { Connection: 'close', ...headers } },
      (res) => {
        // The first 64 KiB of the answer is all any check reads.
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (d: Buffer) => {
          if (kept < 64 * 1024) chunks.push(d);
          kept += d.byteLength;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks)
              .subarray(0, 64 * 1024)
              .toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Probes `/v2/health/live` on a fresh connection every 10 ms until stopped; the worst latency (a
 * probe still waiting when stopped counts with its time so far) and the statuses seen.
 */
function healthProbe(port: number): () => Promise<{ worst: number; probes: number; failures: number }> {
  let stop = false;
  let worst = 0;
  let probes = 0;
  let failures = 0;
  let pendingSince: number | undefined;
  const loop = (async () => {
    while (!stop) {
      const t = performance.now();
      pendingSince = t;
      const status = await send(port, 'GET', '/v2/health/live').then(
        (r) => r.status,
        () => 0,
      );
      pendingSince = undefined;
      worst = Math.max(worst, performance.now() - t);
      probes++;
      if (status !== 200) failures++;
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return async () => {
    stop = true;
    if (pendingSince !== undefined) worst = Math.max(worst, performance.now() - pendingSince);
    await loop;
    return { worst, probes, failures };
  };
}

/** A binary infer request over HTTP. */
async function inferHttp(
  port: number,
  model: string,
  inputs: readonly InferInput[],
  options: InferRequestOptions = {},
): Promise<{ status: number; text: string; bodyBytes: number }> {
  const { body, headerLength } = encodeInferRequest(inputs, options);
  const headers: Record<string, string> = { 'Content-Type': 'application/octet-stream' };
  if (headerLength !== undefined) headers['Inference-Header-Content-Length'] = String(headerLength);
  const r = await send(port, 'POST', `/v2/models/${model}/infer`, body, headers);
  return { ...r, bodyBytes: body.byteLength };
}

/** A gRPC call's status code and details (0 and '' when it succeeded). */
async function grpcOutcome(call: Promise<unknown>): Promise<{ code: GrpcStatus; details: string }> {
  try {
    await call;
    return { code: GrpcStatus.OK, details: '' };
  } catch (error) {
    const e = error as ServiceError;
    return { code: e.code, details: e.details };
  }
}

const str = (value: string): object => ({ parameterChoice: { case: 'stringParam', value } });
const int = (value: number): object => ({ parameterChoice: { case: 'int64Param', value: BigInt(value) } });
/** gRPC shared-memory parameters of a tensor. */
const shmParams = (region: string, byteSize: number, offset = 0): Record<string, object> => ({
  shared_memory_region: str(region),
  shared_memory_byte_size: int(byteSize),
  ...(offset !== 0 ? { shared_memory_offset: int(offset) } : {}),
});

/** A `/dev/shm` object of `size` bytes (sparse: no memory is used until written). */
function shmObject(name: string, size: number): string {
  const path = `/dev/shm/${name}`;
  files.push(path);
  const fd = openSync(path, 'w', 0o600);
  try {
    ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
  }
  return `/${name}`;
}

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

const mb = (bytes: number): number => Math.round(bytes / MiB);
/**
 * The bound on a health probe's latency (a fresh connection, from this process) during an attack:
 * 500 ms, or three times the worst of the idle server's probes on a slower host, never more than 1 s.
 * Loose because the machine is shared: probes took 10–70 ms while it was quiet, and up to 300 ms at
 * load averages of 13–19 on two cores, where a collection after a large buffer stretches to that.
 * A blocked event loop is far above it: the unbounded server stalled probes for 9.6 s under the
 * issue's attack and 1.9 s reading 1 GiB.
 */
async function healthBound(port: number): Promise<number> {
  const idle = healthProbe(port);
  await new Promise((r) => setTimeout(r, 300));
  const { worst } = await idle();
  return Math.min(1000, Math.max(500, 3 * worst));
}

describe('issue 23 item 5: shared-memory registrations hold no descriptor and are capped', () => {
  it('1024 regions over HTTP and gRPC cost no descriptors; the next is refused on both wires; fresh connections keep working', async () => {
    const c = await startChild({ models: ['simple'], http: {}, grpc: {}, core: { allowClientShm: true } });
    const keys = Array.from({ length: 1025 }, (_, i) => {
      const name = `${tag}-r${i}`;
      files.push(`/dev/shm/${name}`);
      // INPUT0 = 0..15 at 0, INPUT1 = 1 × 16 at 64, OUTPUT0 at 128.
      const region = Buffer.alloc(192);
      for (let k = 0; k < 16; k++) {
        region.writeInt32LE(k, k * 4);
        region.writeInt32LE(1, 64 + k * 4);
      }
      writeFileSync(`/dev/shm/${name}`, region, { mode: 0o600 });
      return `/${name}`;
    });
    const baseFds = c.fds();
    const base = c.rss();
    const peak = peakRss(c);
    const bound = await healthBound(c.port);
    const health = healthProbe(c.port);
    const started = performance.now();
    // Half over HTTP, half over gRPC, eight at a time.
    for (let i = 0; i < 1024; i += 8) {
      await Promise.all(
        Array.from({ length: 8 }, async (_, j) => {
          const n = i + j;
          const key = keys[n] as string;
          if (n % 2 === 0) {
            const r = await send(
              c.port,
              'POST',
              `/v2/systemsharedmemory/region/r${n}/register`,
              Buffer.from(JSON.stringify({ key, offset: 0, byte_size: 192 })),
            );
            expect(r.status, r.text).toBe(200);
          } else {
            await c.grpc.call('SystemSharedMemoryRegister', {
              name: `r${n}`,
              key,
              offset: 0n,
              byteSize: 192n,
            });
          }
        }),
      );
    }
    const registerMs = performance.now() - started;
    const fds = c.fds();
    const { worst, probes, failures } = await health();
    const peakRssBytes = peak();
    console.info(
      `item 5: ${mb(base)} MiB RSS before, peak ${mb(peakRssBytes)} MiB; open files ${baseFds} → ${fds} ` +
        `after 1024 registrations (${registerMs.toFixed(0)} ms); health worst ${worst.toFixed(1)} ms over ${probes} probes (bound ${bound.toFixed(0)} ms)`,
    );

    // The 1025th region is refused on both wires, with the flag in the message.
    const refusal =
      "failed to register shared memory region 'extra': 1024 regions are registered, the most this server allows (--client-shm-max-regions)";
    const http = await send(
      c.port,
      'POST',
      '/v2/systemsharedmemory/region/extra/register',
      Buffer.from(JSON.stringify({ key: keys[1024], offset: 0, byte_size: 192 })),
    );
    expect(http.status).toBe(400);
    expect(JSON.parse(http.text)).toEqual({ error: refusal });
    const grpc = await grpcError(
      c.grpc.call('SystemSharedMemoryRegister', {
        name: 'extra',
        key: keys[1024],
        offset: 0n,
        byteSize: 192n,
      }),
    );
    expect(grpc.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(grpc.details).toBe(refusal);

    // The regions work (each use opens its object again), and a freed slot can be taken.
    const r = await inferHttp(
      c.port,
      'simple',
      [
        {
          name: 'INPUT0',
          datatype: 'INT32',
          shape: [1, 16],
          sharedMemory: { region: 'r1022', byteSize: 64 },
        },
        {
          name: 'INPUT1',
          datatype: 'INT32',
          shape: [1, 16],
          sharedMemory: { region: 'r1023', byteSize: 64, offset: 64 },
        },
      ],
      { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: 'r1023', byteSize: 64, offset: 128 } }] },
    );
    expect(r.status, r.text).toBe(200);
    const written = readFileSync(`/dev/shm/${tag}-r1023`);
    expect(Array.from({ length: 16 }, (_, k) => written.readInt32LE(128 + k * 4))).toEqual(
      Array.from({ length: 16 }, (_, k) => k + 1),
    );
    expect((await send(c.port, 'POST', '/v2/systemsharedmemory/region/r0/unregister')).status).toBe(200);
    await c.grpc.call('SystemSharedMemoryRegister', {
      name: 'extra',
      key: keys[1024],
      offset: 0n,
      byteSize: 192n,
    });
    expect((await send(c.port, 'GET', '/v2/health/ready')).status).toBe(200);

    expect(fds - baseFds).toBeLessThan(16);
    expect(peakRssBytes - base).toBeLessThan(64 * MiB);
    expect(failures).toBe(0);
    expect(worst).toBeLessThan(bound);
  }, 60_000);
});

describe('issue 23 item 6: shared-memory inputs are bounded like bodies and read off the event loop', () => {
  it('a 1 GiB sparse region as one input is refused (400 / INVALID_ARGUMENT) before it is read', async () => {
    const c = await startChild({
      models: ['identity_fp32'],
      http: {},
      grpc: {},
      core: { allowClientShm: true },
    });
    const key = shmObject(`${tag}-sparse`, GiB);
    const reg = await send(
      c.port,
      'POST',
      '/v2/systemsharedmemory/region/big/register',
      Buffer.from(JSON.stringify({ key, offset: 0, byte_size: GiB })),
    );
    expect(reg.status, reg.text).toBe(200);
    const base = c.rss();
    const peak = peakRss(c);
    const bound = await healthBound(c.port);
    const health = healthProbe(c.port);
    const n = GiB / 4;
    const t0 = performance.now();
    const http = await inferHttp(c.port, 'identity_fp32', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, n], sharedMemory: { region: 'big', byteSize: GiB } },
    ]);
    const httpMs = performance.now() - t0;
    const t1 = performance.now();
    const grpc = await grpcOutcome(
      c.grpc.call('ModelInfer', {
        modelName: 'identity_fp32',
        inputs: [
          { name: 'INPUT0', datatype: 'FP32', shape: [1n, BigInt(n)], parameters: shmParams('big', GiB) },
        ],
      }),
    );
    const grpcMs = performance.now() - t1;
    const { worst, probes, failures } = await health();
    const peakRssBytes = peak();
    console.info(
      `item 6 (1 GiB region): HTTP ${http.status} in ${httpMs.toFixed(0)} ms, gRPC ${grpc.code} in ` +
        `${grpcMs.toFixed(0)} ms; RSS ${mb(base)} → peak ${mb(peakRssBytes)} MiB; health worst ${worst.toFixed(1)} ms over ${probes} probes (bound ${bound.toFixed(0)} ms)`,
    );
    expect(http.status, http.text).toBe(400);
    expect(JSON.parse(http.text)).toEqual({
      error: `Request size of ${GiB + http.bodyBytes} including shared memory inputs exceeds the maximum allowed value of ${64 * MiB}. Use --http-max-input-size to increase the limit.`,
    });
    expect(grpc.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(grpc.details).toMatch(
      /^Request size of \d+ including shared memory inputs exceeds the maximum allowed value of 268435456\. Use --http-max-inflight-body-bytes to increase the limit\.$/,
    );
    expect(httpMs).toBeLessThan(1000);
    expect(grpcMs).toBeLessThan(1000);
    expect(peakRssBytes - base).toBeLessThan(64 * MiB);
    expect(failures).toBe(0);
    expect(worst).toBeLessThan(bound);
  }, 60_000);

  it('concurrent 16 MiB inputs over both wires are held to the in-flight budget (503 / UNAVAILABLE past it)', async () => {
    const c = await startChild({
      models: ['identity_fp32'],
      http: { maxInflightBodyBytes: 48 * MiB },
      grpc: {},
      core: { allowClientShm: true },
    });
    const key = shmObject(`${tag}-budget`, GiB);
    await c.grpc.call('SystemSharedMemoryRegister', { name: 'big', key, offset: 0n, byteSize: BigInt(GiB) });
    const size = 16 * MiB;
    const n = size / 4;
    const out = 512 * MiB;
    const base = c.rss();
    const peak = peakRss(c);
    // Twice the usual bound, for liveness only: the admitted inferences' own work (copies to the
    // model's worker, outputs written into the region, the collections their buffers bring) runs on
    // the event loop too, 130–540 ms at worst on a host loaded 7- to 10-fold (the unbounded server:
    // 1.0 s). This test's discriminating checks are the budget's refusals and the RSS.
    const bound = 2 * (await healthBound(c.port));
    const health = healthProbe(c.port);
    const started = performance.now();
    const [http, grpc] = await Promise.all([
      Promise.all(
        Array.from({ length: 12 }, () =>
          inferHttp(
            c.port,
            'identity_fp32',
            [
              {
                name: 'INPUT0',
                datatype: 'FP32',
                shape: [1, n],
                sharedMemory: { region: 'big', byteSize: size },
              },
            ],
            { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: 'big', byteSize: size, offset: out } }] },
          ),
        ),
      ),
      Promise.all(
        Array.from({ length: 12 }, () =>
          grpcOutcome(
            c.grpc.call('ModelInfer', {
              modelName: 'identity_fp32',
              inputs: [
                {
                  name: 'INPUT0',
                  datatype: 'FP32',
                  shape: [1n, BigInt(n)],
                  parameters: shmParams('big', size),
                },
              ],
              outputs: [{ name: 'OUTPUT0', parameters: shmParams('big', size, out) }],
            }),
          ),
        ),
      ),
    ]);
    const ms = performance.now() - started;
    const { worst, probes, failures } = await health();
    const peakRssBytes = peak();
    const after = await c.stats();
    const ok =
      http.filter((r) => r.status === 200).length + grpc.filter((r) => r.code === GrpcStatus.OK).length;
    console.info(
      `item 6 (budget): ${ok} of 24 answered, the rest refused, in ${ms.toFixed(0)} ms; HTTP ${http.map((r) => r.status).join(',')}; ` +
        `gRPC ${grpc.map((r) => r.code).join(',')}; RSS ${mb(base)} → peak ${mb(peakRssBytes)} MiB; ` +
        `health worst ${worst.toFixed(1)} ms over ${probes} probes (bound ${bound.toFixed(0)} ms)`,
    );
    const busy =
      "request bodies in flight exceed the server's limit of 50331648 bytes (--http-max-inflight-body-bytes); retry later";
    for (const r of http) {
      if (r.status !== 200) expect(JSON.parse(r.text)).toEqual({ error: busy });
      expect([200, 503]).toContain(r.status);
    }
    for (const r of grpc) {
      if (r.code !== GrpcStatus.OK) expect(r.details).toBe(busy);
      expect([GrpcStatus.OK, GrpcStatus.UNAVAILABLE]).toContain(r.code);
    }
    expect(ok).toBeGreaterThan(0);
    expect(http.some((r) => r.status === 503)).toBe(true);
    expect(grpc.some((r) => r.code === GrpcStatus.UNAVAILABLE)).toBe(true);
    expect(after.bodyBudgetUsed).toBe(0);
    // At most three 16 MiB inputs are in memory at once (with their copies for the model and its
    // outputs); unbounded, all 24 were read at once.
    expect(peakRssBytes - base).toBeLessThan(250 * MiB);
    expect(failures).toBe(0);
    expect(worst).toBeLessThan(bound);
  }, 60_000);

  it('a 1 GiB input the limits admit is read off the event loop (HTTP and gRPC)', async () => {
    const c = await startChild({
      models: ['identity_fp32'],
      http: { maxInputSize: 1536 * MiB, maxInflightBodyBytes: 2 * GiB },
      grpc: {},
      core: { allowClientShm: true },
    });
    const key = shmObject(`${tag}-read`, GiB);
    await c.grpc.call('SystemSharedMemoryRegister', { name: 'big', key, offset: 0n, byteSize: BigInt(GiB) });
    const n = GiB / 4;
    const input: InferInput = {
      name: 'INPUT0',
      datatype: 'FP32',
      shape: [1, n],
      sharedMemory: { region: 'big', byteSize: GiB },
    };
    // Each client goes away once its request is in (the model is then not run: only the read is
    // measured; the server still reads the whole input, which the RSS shows).
    const wires: Record<string, () => Promise<void>> = {
      HTTP: async () => {
        const { body, headerLength } = encodeInferRequest([input]);
        const head =
          `POST /v2/models/identity_fp32/infer HTTP/1.1\r\nHost: x\r\n` +
          (headerLength !== undefined ? `Inference-Header-Content-Length: ${headerLength}\r\n` : '') +
          `Content-Length: ${body.byteLength}\r\n\r\n`;
        const socket = connect(c.port, '127.0.0.1');
        socket.on('error', () => undefined);
        await new Promise<void>((resolve) => socket.once('connect', resolve));
        socket.write(Buffer.concat([Buffer.from(head), Buffer.from(body)]));
        await new Promise((r) => setTimeout(r, 50));
        socket.destroy();
      },
      gRPC: async () => {
        const outcome = await grpcOutcome(
          new Promise((resolve, reject) => {
            const call = c.grpc.inference.ModelInfer as (...args: unknown[]) => unknown;
            call.call(
              c.grpc.inference,
              {
                modelName: 'identity_fp32',
                inputs: [
                  {
                    name: 'INPUT0',
                    datatype: 'FP32',
                    shape: [1n, BigInt(n)],
                    parameters: shmParams('big', GiB),
                  },
                ],
              },
              new Metadata(),
              { deadline: Date.now() + 50 },
              (error: ServiceError | null, response: unknown) =>
                error !== null ? reject(error) : resolve(response),
            );
          }),
        );
        expect(outcome.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
      },
    };
    for (const [wire, attack] of Object.entries(wires)) {
      const base = c.rss();
      const peak = peakRss(c);
      const bound = await healthBound(c.port);
      const health = healthProbe(c.port);
      await attack();
      // The server reads the whole input into memory (RSS from /proc: no GC in the child while the
      // probes run)…
      const read = await until(() => c.rss() - base > 900 * MiB, 20_000);
      const { worst, probes, failures } = await health();
      const peakRssBytes = peak();
      // …and gives its budget back once the request is over.
      const released = await until(async () => (await c.stats()).bodyBudgetUsed === 0, 10_000);
      console.info(
        `item 6 (1 GiB read, ${wire}): RSS ${mb(base)} → peak ${mb(peakRssBytes)} MiB; health worst ${worst.toFixed(1)} ms over ${probes} probes (bound ${bound.toFixed(0)} ms)`,
      );
      expect(read).toBe(true);
      expect(released).toBe(true);
      // The event loop kept answering while the input was read.
      expect(probes).toBeGreaterThan(5);
      expect(failures).toBe(0);
      expect(worst).toBeLessThan(bound);
    }
  }, 60_000);
});
