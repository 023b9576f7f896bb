import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { encodeInferRequest } from '@tritonserver-ts/client/protocol';

import { get, post, startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
let url: string;

beforeAll(async () => {
  srv = await startTestServer({
    only: ['simple', 'identity_fp16', 'identity_string', 'identity_fp32', 'python_model', 'slow_identity'],
    httpMaxInputSize: 64 * 1024,
    // Shared-memory refusals below are the ones of a server that allows client shared memory.
    allowClientShm: true,
  });
  url = srv.url;
});

afterAll(async () => {
  await srv.close();
});

afterEach(async () => {
  // Whatever the previous request did, the server is still live and serving.
  expect((await get(url, '/v2/health/live')).status).toBe(200);
});

const simpleJson = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    inputs: [
      { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array<number>(16).fill(1) },
      { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array<number>(16).fill(2) },
    ],
    ...overrides,
  });

/** Asserts Triton's status and a JSON `{"error": …}` body; returns the message. */
function expectError(r: { status: number; headers: Headers; json: unknown }, status: number): string {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toBe('application/json');
  const error = (r.json as { error?: unknown } | undefined)?.error;
  expect(typeof error).toBe('string');
  return error as string;
}

describe('malformed bodies and headers', () => {
  it('answers malformed JSON with 400', async () => {
    const msg = expectError(await post(url, '/v2/models/simple/infer', '{"inputs": ['), 400);
    expect(msg.length).toBeGreaterThan(0);
  });

  it('answers a JSON body that is not an object, or has no inputs, with 400', async () => {
    expectError(await post(url, '/v2/models/simple/infer', '[1,2]'), 400);
    expectError(await post(url, '/v2/models/simple/infer', '{"outputs":[]}'), 400);
  });

  it.each([
    ['negative', '-5'],
    ['non-numeric', 'abc'],
    ['larger than the body', '100000'],
  ])('answers an Inference-Header-Content-Length that is %s with 400', async (_what, value) => {
    const body = simpleJson();
    expectError(
      await post(url, '/v2/models/simple/infer', body, { 'Inference-Header-Content-Length': value }),
      400,
    );
  });

  it('answers a JSON data length that does not match the shape with 400', async () => {
    const body = JSON.stringify({
      inputs: [
        { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: [1, 2, 3] },
        { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array<number>(16).fill(2) },
      ],
    });
    expectError(await post(url, '/v2/models/simple/infer', body), 400);
  });

  it('answers a binary tail shorter than binary_data_size with 400', async () => {
    const header = JSON.stringify({
      inputs: [{ name: 'INPUT0', shape: [1, 4], datatype: 'FP32', parameters: { binary_data_size: 16 } }],
    });
    const body = Buffer.concat([Buffer.from(header), Buffer.alloc(8)]);
    const r = await post(url, '/v2/models/identity_fp32/infer', body, {
      'Inference-Header-Content-Length': String(Buffer.byteLength(header)),
    });
    expectError(r, 400);
  });

  it('answers a BYTES length prefix that runs past the end with 400', async () => {
    const tensor = Buffer.alloc(8);
    tensor.writeUInt32LE(1000, 0);
    const header = JSON.stringify({
      inputs: [
        {
          name: 'INPUT0',
          shape: [1, 1],
          datatype: 'BYTES',
          parameters: { binary_data_size: tensor.byteLength },
        },
      ],
    });
    const r = await post(
      url,
      '/v2/models/identity_string/infer',
      Buffer.concat([Buffer.from(header), tensor]),
      {
        'Inference-Header-Content-Length': String(Buffer.byteLength(header)),
      },
    );
    expect(expectError(r, 400)).toContain('past the end');
  });

  it('answers FP16 data sent as JSON with 400', async () => {
    const body = JSON.stringify({
      inputs: [{ name: 'INPUT0', shape: [1, 2], datatype: 'FP16', data: [1, 2] }],
    });
    expect(expectError(await post(url, '/v2/models/identity_fp16/infer', body), 400)).toContain(
      'FP16 data via JSON is not supported',
    );
  });

  it('answers an FP16 output requested as JSON with 400', async () => {
    const { body, headerLength } = encodeInferRequest(
      [{ name: 'INPUT0', datatype: 'FP16', shape: [1, 1], data: Uint16Array.from([0x3c00]) }],
      { outputs: [{ name: 'OUTPUT0', binaryData: false }] },
    );
    const r = await post(url, '/v2/models/identity_fp16/infer', body, {
      'Inference-Header-Content-Length': String(headerLength),
    });
    expect(expectError(r, 400)).toMatch(/^sending FP16 data via JSON is not supported/);
  });

  it('answers an unknown datatype with 400', async () => {
    const body = JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP8', data: [1] }] });
    expectError(await post(url, '/v2/models/identity_fp32/infer', body), 400);
  });

  it('answers an unsupported Content-Encoding with 415 and Accept-Encoding: gzip, deflate', async () => {
    const r = await post(url, '/v2/models/simple/infer', simpleJson(), { 'Content-Encoding': 'br' });
    expectError(r, 415);
    expect(r.headers.get('accept-encoding')).toBe('gzip, deflate');
  });

  it('answers a corrupt gzip body with 400', async () => {
    expectError(
      await post(url, '/v2/models/simple/infer', 'not gzip at all', { 'Content-Encoding': 'gzip' }),
      400,
    );
  });

  it('answers a body over --http-max-input-size with 400 and Triton’s hint', async () => {
    const r = await post(url, '/v2/models/simple/infer', Buffer.alloc(100 * 1024, 0x20));
    expect(expectError(r, 400)).toMatch(
      /^Request JSON size of \d+ exceeds the maximum allowed value of 65536\. Use --http-max-input-size to increase the limit\.$/,
    );
  });

  it('answers a gzip body that inflates past the limit with 400', async () => {
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20));
    expect(bomb.byteLength).toBeLessThan(64 * 1024);
    const r = await post(url, '/v2/models/simple/infer', bomb, { 'Content-Encoding': 'gzip' });
    expect(expectError(r, 400)).toContain('--http-max-input-size');
  });

  it('answers a chunked body over the limit with 400', async () => {
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new Uint8Array(32 * 1024));
        controller.close();
      },
    });
    const response = await fetch(`${url}/v2/models/simple/infer`, {
      method: 'POST',
      body: chunks,
      duplex: 'half',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain(
      'exceeds the maximum allowed value',
    );
  });
});

describe('model and version resolution', () => {
  it('answers an unknown model with 400 and Triton’s message', async () => {
    const r = await post(url, '/v2/models/nope/infer', simpleJson());
    expect(expectError(r, 400)).toBe("Request for unknown model: 'nope' is not found");
    expect(expectError(await get(url, '/v2/models/nope'), 400)).toMatch(
      /^Request for unknown model: 'nope' is not found/,
    );
  });

  it('answers an unknown version with 404', async () => {
    const r = await post(url, '/v2/models/simple/versions/7/infer', simpleJson());
    expect(expectError(r, 404)).toBe("Request for unknown model: 'simple' version 7 is not found");
  });

  it('answers a model that failed to load with 404 no available versions', async () => {
    const r = await post(url, '/v2/models/python_model/infer', simpleJson());
    expect(expectError(r, 404)).toBe("Request for unknown model: 'python_model' has no available versions");
  });

  it('answers a non-numeric version path with 404 Not Found', async () => {
    const r = await post(url, '/v2/models/simple/versions/latest/infer', simpleJson());
    expect(expectError(r, 404)).toBe('Not Found');
  });
});

describe('request validation against the model config', () => {
  it('answers a datatype mismatch with Triton’s message', async () => {
    const body = JSON.stringify({
      inputs: [
        { name: 'INPUT0', shape: [1, 16], datatype: 'FP32', data: Array<number>(16).fill(1) },
        { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array<number>(16).fill(2) },
      ],
    });
    expect(expectError(await post(url, '/v2/models/simple/infer', body), 400)).toBe(
      "inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'",
    );
  });

  it('answers a shape that does not match the dims with Triton’s message', async () => {
    const body = JSON.stringify({
      inputs: [
        { name: 'INPUT0', shape: [1, 8], datatype: 'INT32', data: Array<number>(8).fill(1) },
        { name: 'INPUT1', shape: [1, 8], datatype: 'INT32', data: Array<number>(8).fill(2) },
      ],
    });
    expect(expectError(await post(url, '/v2/models/simple/infer', body), 400)).toBe(
      "unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,8]",
    );
  });

  it('answers a batch larger than max_batch_size with 400', async () => {
    const body = JSON.stringify({
      inputs: ['INPUT0', 'INPUT1'].map((name) => ({
        name,
        shape: [9, 16],
        datatype: 'INT32',
        data: Array<number>(9 * 16).fill(1),
      })),
    });
    expect(expectError(await post(url, '/v2/models/simple/infer', body), 400)).toBe(
      "inference request batch-size must be <= 8 for 'simple'",
    );
  });

  it('answers a missing input and an unexpected input with 400', async () => {
    const missing = JSON.stringify({
      inputs: [{ name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array<number>(16).fill(1) }],
    });
    expect(expectError(await post(url, '/v2/models/simple/infer', missing), 400)).toMatch(
      /^expected 2 inputs but got 1 inputs for model 'simple'/,
    );
    const unexpected = JSON.stringify({
      inputs: [
        { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array<number>(16).fill(1) },
        { name: 'INPUTX', shape: [1, 16], datatype: 'INT32', data: Array<number>(16).fill(2) },
      ],
    });
    expect(expectError(await post(url, '/v2/models/simple/infer', unexpected), 400)).toBe(
      "unexpected inference input 'INPUTX' for model 'simple'",
    );
  });

  it('answers duplicate and unknown requested outputs with 400', async () => {
    const dup = simpleJson({ outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT0' }] });
    expect(expectError(await post(url, '/v2/models/simple/infer', dup), 400)).toBe(
      "output 'OUTPUT0' already exists in request",
    );
    const unknown = simpleJson({ outputs: [{ name: 'OUTPUT9' }] });
    expect(expectError(await post(url, '/v2/models/simple/infer', unknown), 400)).toBe(
      "unexpected inference output 'OUTPUT9' for model 'simple'",
    );
  });

  it('answers a reserved triton_ parameter with 400', async () => {
    const body = simpleJson({ parameters: { triton_enable_empty_final_response: true } });
    expect(expectError(await post(url, '/v2/models/simple/infer', body), 400)).toBe(
      "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.",
    );
  });
});

describe('routing and other endpoints', () => {
  it('answers unknown paths with 404 and wrong methods with 405', async () => {
    expect(expectError(await get(url, '/v2/nothing'), 404)).toBe('Not Found');
    expect(expectError(await get(url, '/v1/models/simple'), 404)).toBe('Not Found');
    expect(expectError(await get(url, '/v2/models/simple/versions/1/trace/setting'), 404)).toBe('Not Found');
    expect(expectError(await get(url, '/v2/models/simple/infer'), 405)).toBe('Method Not Allowed');
    expect(expectError(await post(url, '/v2/health/live', ''), 405)).toBe('Method Not Allowed');
  });

  it('refuses load and unload in none mode with 503', async () => {
    const msg = expectError(await post(url, '/v2/repository/models/simple/unload', undefined), 503);
    expect(msg).toBe('explicit model load / unload is not allowed if polling is enabled');
    expectError(await post(url, '/v2/repository/models/simple/load', '{}'), 503);
  });

  it('refuses CUDA shared memory: no GPU', async () => {
    const r = await post(
      url,
      '/v2/cudasharedmemory/region/r0/register',
      JSON.stringify({ raw_handle: { b64: 'AAAA' }, device_id: 0, byte_size: 16 }),
    );
    expect(expectError(r, 501)).toBe(
      "failed to register CUDA shared memory region: 'r0', GPUs not supported",
    );
    expect((await get(url, '/v2/cudasharedmemory/status')).json).toEqual([]);
  });

  it('answers malformed JSON on control endpoints with 400', async () => {
    expectError(await post(url, '/v2/repository/index', '{'), 400);
    expectError(await post(url, '/v2/logging', 'nope'), 400);
    expectError(await post(url, '/v2/systemsharedmemory/region/x/register', '{"key":5}'), 400);
  });

  it('cancels a queued request whose client went away, without running it, and keeps serving', async () => {
    type Stats = {
      model_stats: { inference_stats: { success: { count: number }; fail: { count: number } } }[];
    };
    const stats = async () =>
      ((await get(url, '/v2/models/slow_identity/stats')).json as Stats).model_stats[0]?.inference_stats;
    const before = await stats();
    const header = JSON.stringify({
      inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', data: [1] }],
    });
    // A occupies the single instance for 50 ms; B waits in the queue, then its client disconnects.
    const a = post(url, '/v2/models/slow_identity/infer', header);
    await new Promise((r) => setTimeout(r, 10));
    const { hostname, port } = new URL(url);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          `POST /v2/models/slow_identity/infer HTTP/1.1\r\nHost: x\r\nContent-Length: ${header.length}\r\n\r\n${header}`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 10);
      });
      socket.on('error', reject);
    });
    expect((await a).status).toBe(200);
    await new Promise((r) => setTimeout(r, 120));
    const after = await stats();
    expect(after?.success.count).toBe((before?.success.count ?? 0) + 1);
    expect(after?.fail.count).toBe((before?.fail.count ?? 0) + 1);
    const r = await post(url, '/v2/models/slow_identity/infer', header);
    expect(r.status).toBe(200);
  });
});
