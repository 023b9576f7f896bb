/**
 * A seeded protocol fuzzer against the real server (the built CLI in a child process, so its memory
 * is its own). Families: JSON infer bodies, binary framing, compression, the other endpoints, and
 * raw HTTP. Every answer to a client error must be a 4xx with a JSON `{"error": "<message>"}` body
 * (never a 5xx, a crash or a hang); after each family the server is live and still answers a valid
 * request correctly; its resident memory stays bounded.
 *
 * `FUZZ_SEED` picks the sequence (printed on failure), `FUZZ_CASES` the number of cases per family
 * (default 600: about 3,000 cases in all, a few seconds in CI; any number locally).
 */
import { rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { encodeInferRequest } from '@tritonserver-ts/protocol/http';

import { Random, makeTestRepository, startCli, type CliServer } from './helpers.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const CASES = Number(process.env.FUZZ_CASES ?? 600);
const MAX_INPUT = 1 << 20;

let random = new Random(SEED);
const int = (n: number): number => random.int(n);
const pick = <T>(items: readonly T[]): T => random.pick(items);

const ODD_VALUES: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 31,
  2 ** 53,
  -(2 ** 63),
  1e308,
  '',
  'x',
  'FP32',
  '\u0000',
  '../../etc/passwd',
  [],
  [[]],
  {},
  { a: 1 },
  'A'.repeat(1000),
];

/** A random JSON value, depth-bounded (the server must survive deep nesting on its own). */
function randomValue(depth = 0): unknown {
  const r = int(10);
  if (depth > 3 || r < 5) return structuredClone(pick(ODD_VALUES)); // a copy: mutations must not create cycles
  if (r < 8) return Array.from({ length: int(4) }, () => randomValue(depth + 1));
  return Object.fromEntries(Array.from({ length: int(3) }, (_, i) => [`k${i}`, randomValue(depth + 1)]));
}

/** Replaces, removes or adds one field somewhere in a JSON tree (in place). */
function mutate(node: unknown, depth = 0): void {
  if (node === null || typeof node !== 'object') return;
  const keys: (string | number)[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
  const target = node as Record<string | number, unknown>;
  if (keys.length === 0 || (depth > 0 && int(3) === 0)) {
    const key = Array.isArray(node)
      ? node.length
      : pick(['extra', 'datatype', 'shape', 'data', 'parameters']);
    target[key] = randomValue();
    return;
  }
  const key = pick(keys);
  const child = target[key];
  const r = int(4);
  if (r === 0) delete target[key];
  else if (r === 1 || child === null || typeof child !== 'object') target[key] = randomValue();
  else mutate(child, depth + 1);
}

const validRequests = (): { model: string; body: Record<string, unknown> }[] => [
  {
    model: 'simple',
    body: {
      id: 'r1',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Array(16).fill(1) },
      ],
      outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1', parameters: { binary_data: false } }],
    },
  },
  {
    model: 'identity_string',
    body: { inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['a', 'bc'] }] },
  },
  {
    model: 'classifier',
    body: {
      inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 5], data: [1, 2, 3, 4, 5] }],
      outputs: [{ name: 'probs', parameters: { classification: 2 } }],
    },
  },
  {
    model: 'identity_fp16',
    body: { inputs: [{ name: 'INPUT0', datatype: 'FP16', shape: [1, 1], data: [1] }] },
  },
];

interface Answer {
  readonly status: number;
  readonly text: string;
}

let server: CliServer;
let url = '';
let repository = '';
let startRss = 0;

const rssKiB = (): number => server.rssKiB();

async function send(
  path: string,
  body: Uint8Array | string | undefined,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<Answer> {
  const response = await fetch(url + path, {
    method,
    headers,
    ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { body } : {}),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, text: await response.text() };
}

/**
 * The 5xx answers Triton itself gives to these requests (protocol.md §6.4, §6.5): loading a model
 * the repository does not have is INTERNAL, a bad `log_format` is UNAVAILABLE, CUDA shared memory
 * without a GPU is UNSUPPORTED. Anything else in the 5xx range is a server fault.
 */
const TRITON_5XX: readonly { readonly status: number; readonly error: RegExp }[] = [
  { status: 500, error: /^failed to load '.*', failed to poll from model repository$/s },
  { status: 503, error: /^invalid argument for --log_format, got: /s },
  // A Triton built without GPU support answers CUDA shared-memory registration this way.
  { status: 501, error: /^failed to register CUDA shared memory region: '.*', GPUs not supported$/s },
];

/** The rules every answer obeys: no 5xx (but Triton's own); an error is JSON with a message. */
function check(answer: Answer, what: string): void {
  const context = `${what} (FUZZ_SEED=${SEED})`;
  const error = (): string => {
    try {
      return String((JSON.parse(answer.text) as { error?: unknown }).error);
    } catch {
      return '';
    }
  };
  const tritons = TRITON_5XX.some((t) => t.status === answer.status && t.error.test(error()));
  if (!tritons) expect(answer.status, `${context}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  if (answer.status >= 400) {
    let error: unknown;
    try {
      error = (JSON.parse(answer.text) as { error?: unknown }).error;
    } catch {
      error = undefined;
    }
    expect(typeof error, `${context}: error body ${answer.text.slice(0, 300)}`).toBe('string');
    expect((error as string).length, context).toBeGreaterThan(0);
  }
}

/** The server is live and still computes `simple` correctly. */
async function stillServing(): Promise<void> {
  expect((await send('/v2/health/live', undefined, {}, 'GET')).status).toBe(200);
  const r = await send('/v2/models/simple/infer', JSON.stringify(validRequests()[0]?.body));
  expect(r.status).toBe(200);
  const out = (JSON.parse(r.text) as { outputs: { name: string; data: number[] }[] }).outputs;
  expect(out.find((o) => o.name === 'OUTPUT1')?.data).toEqual(Array.from({ length: 16 }, (_, i) => i - 1));
}

beforeAll(async () => {
  random = new Random(SEED);
  repository = await makeTestRepository(['simple', 'identity_string', 'identity_fp16', 'classifier']);
  server = await startCli([
    `--model-repository=${repository}`,
    '--http-port=0',
    '--grpc-port=0',
    '--http-address=127.0.0.1',
    '--allow-metrics=false',
    '--model-control-mode=explicit',
    '--load-model=*',
    `--http-max-input-size=${MAX_INPUT}`,
    '--allow-client-shm=true',
  ]);
  url = server.url;
  await stillServing();
  startRss = rssKiB();
}, 60_000);

afterAll(async () => {
  server.kill();
  await rm(repository, { recursive: true, force: true });
});

describe(`protocol fuzzer (seed ${SEED}, ${CASES} cases per family)`, () => {
  it('JSON infer bodies: mutated requests, truncated and corrupted text, deep nesting', async () => {
    for (let i = 0; i < CASES; i++) {
      const { model, body } = pick(validRequests());
      for (let m = 1 + int(3); m > 0; m--) mutate(body);
      let text = JSON.stringify(body);
      const r = int(10);
      if (r === 0) text = text.slice(0, int(text.length));
      else if (r === 1) {
        const at = int(text.length);
        text = text.slice(0, at) + String.fromCharCode(int(256)) + text.slice(at + 1);
      } else if (r === 2) text = `${'['.repeat(1 + int(200_000))}1${']'.repeat(int(3))}`;
      else if (r === 3) {
        const depth = 1 + int(100_000);
        text = JSON.stringify({
          inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: 'X' }],
        }).replace('"X"', `${'['.repeat(depth)}1${']'.repeat(depth)}`);
      }
      check(await send(`/v2/models/${model}/infer`, text), `json case ${i}: ${text.slice(0, 200)}`);
    }
    await stillServing();
  }, 120_000);

  it('binary framing: header lengths, sizes and tails that do not add up', async () => {
    for (let i = 0; i < CASES; i++) {
      const encoded = encodeInferRequest(
        [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(i) },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(1) },
        ],
        { binaryData: true },
      );
      let body = Buffer.from(encoded.body);
      let header = String(encoded.headerLength ?? 0);
      const r = int(6);
      if (r === 0) header = String(pick([-1, 0, 1, body.length, body.length + 1, 2 ** 31, 2 ** 53]));
      else if (r === 1) header = pick(['', 'abc', '1e3', ' 12', '0x10', '+12', '12abc']);
      else if (r === 2) body = body.subarray(0, int(body.length));
      else if (r === 3) body = Buffer.concat([body, Buffer.alloc(1 + int(64), int(256))]);
      else if (r === 4) {
        const json = body.subarray(0, encoded.headerLength ?? 0).toString('utf8');
        const changed = json.replace(
          /"binary_data_size":\d+/,
          `"binary_data_size":${pick([-1, 0, 63, 65, 2 ** 40])}`,
        );
        body = Buffer.concat([Buffer.from(changed), body.subarray(encoded.headerLength ?? 0)]);
        header = String(Buffer.byteLength(changed));
      } else body[int(body.length)] = int(256);
      check(
        await send('/v2/models/simple/infer', body, { 'Inference-Header-Content-Length': header }),
        `binary case ${i} (header ${header}, ${body.length} bytes)`,
      );
    }
    await stillServing();
  }, 120_000);

  it('compression: corrupt, truncated, mislabelled and oversized compressed bodies', async () => {
    const json = Buffer.from(JSON.stringify(validRequests()[0]?.body));
    for (let i = 0; i < CASES; i++) {
      const encoding = pick(['gzip', 'deflate', 'br', 'identity', 'gzip, deflate', 'x']);
      let body: Buffer = encoding === 'deflate' ? deflateSync(json) : gzipSync(json);
      const r = int(5);
      if (r === 0) body = body.subarray(0, int(body.length));
      else if (r === 1) {
        const at = int(body.length);
        body[at] = (body[at] ?? 0) ^ (1 + int(255));
      } else if (r === 2) body = Buffer.from(Array.from({ length: int(100) }, () => int(256)));
      else if (r === 3) body = gzipSync(Buffer.alloc(MAX_INPUT + 1 + int(MAX_INPUT), 0x20)); // a bomb past the limit
      check(
        await send('/v2/models/simple/infer', body, { 'Content-Encoding': encoding }),
        `compression case ${i} (${encoding}, variant ${r})`,
      );
    }
    await stillServing();
  }, 120_000);

  it('other endpoints: random bodies to every route, random methods and paths', async () => {
    const routes = [
      '/v2/repository/index',
      '/v2/repository/models/simple/load',
      '/v2/repository/models/nope/unload',
      '/v2/logging',
      '/v2/trace/setting',
      '/v2/models/simple/trace/setting',
      '/v2/systemsharedmemory/region/r/register',
      '/v2/systemsharedmemory/region/r/unregister',
      '/v2/cudasharedmemory/region/r/register',
      '/v2/models/simple/versions/1/infer',
      '/v2/models/simple/stats',
    ];
    for (let i = 0; i < CASES; i++) {
      let path = pick(routes);
      if (int(5) === 0)
        path = path.replace('simple', pick(['%2e%2e', 'a%00b', 'simple%2F..', '%ff', 'x'.repeat(300)]));
      const method = pick(['POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE']);
      let value = randomValue();
      // Loads with real configs would start instances; keep them to refusals and no-ops.
      if (path.endsWith('/load') && value !== null && typeof value === 'object')
        value = { parameters: value };
      const body = int(4) === 0 ? String(value).slice(0, 50) : JSON.stringify(value);
      const answer = await send(path, body, { 'Content-Type': 'application/json' }, method);
      // A load can legitimately fail with 500 on a real config problem; a random body never is one.
      check(answer, `endpoint case ${i}: ${method} ${path} ${body.slice(0, 200)}`);
    }
    await stillServing();
  }, 120_000);

  it('raw HTTP: malformed request lines, headers, lengths and chunking', async () => {
    const { hostname, port } = new URL(url);
    const raw = (payload: string | Buffer): Promise<string> =>
      new Promise((resolve) => {
        const socket = connect(Number(port), hostname);
        let data = '';
        const timer = setTimeout(() => socket.destroy(), 3000);
        socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
        socket.on('close', () => {
          clearTimeout(timer);
          resolve(data);
        });
        socket.on('error', () => undefined);
        socket.end(payload);
      });
    const cases: (() => string | Buffer)[] = [
      () => `GARBAGE ${'x'.repeat(int(100))}\r\n\r\n`,
      () =>
        `POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: ${pick(['-1', 'abc', '99999999999999999999', '5, 6'])}\r\n\r\n{}`,
      () =>
        `POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${pick(['zz', 'fffffffffffffffff', '-1', '3'])}\r\nabc\r\n0\r\n\r\n`,
      () =>
        `GET /v2/health/live HTTP/1.1\r\nHost: x\r\n${'X-Big: ' + 'a'.repeat(20_000 + int(80_000))}\r\n\r\n`,
      () => `GET /v2/health/live HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n`,
      () =>
        `POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nContent-Length: 20\r\n\r\n0123456789`,
      () => Buffer.from(Array.from({ length: 1 + int(200) }, () => int(256))),
    ];
    const rounds = Math.max(cases.length, Math.floor(CASES / 4));
    for (let i = 0; i < rounds; i++) {
      const reply = await raw(pick(cases)());
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(reply)?.[1];
      // Either a refusal (4xx) or a closed connection; never a server error.
      if (status !== undefined)
        expect(Number(status), `raw case ${i}: ${reply.slice(0, 200)}`).toBeLessThan(500);
    }
    await stillServing();
  }, 120_000);

  it('keeps the server’s memory bounded', () => {
    const grown = rssKiB() - startRss;
    expect(grown, `RSS grew by ${grown} KiB`).toBeLessThan(256 * 1024);
  });
});
