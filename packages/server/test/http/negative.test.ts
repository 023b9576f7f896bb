import { rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { decodeInferResponse, encodeInferRequest } from '@tritonserver-ts/protocol/http';

import { get, post, startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
let url: string;

beforeAll(async () => {
  srv = await startTestServer({
    only: ['simple', 'identity_fp16', 'identity_string', 'identity_fp32', 'tensorrt_model', 'slow_identity'],
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
      /^request JSON size of \d+ exceeds the maximum allowed value of 65536\. Use --http-max-input-size to increase the limit\.$/,
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
    const r = await post(url, '/v2/models/tensorrt_model/infer', simpleJson());
    expect(expectError(r, 404)).toBe("Request for unknown model: 'tensorrt_model' has no available versions");
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

describe('deep nesting never recurses (issue 12)', () => {
  // Bodies of a few hundred kilobytes: this suite's server keeps the default --http-max-input-size.
  let deepSrv: TestServer;
  let url: string;
  beforeAll(async () => {
    deepSrv = await startTestServer({
      only: ['simple', 'identity_fp32', 'identity_string'],
      allowClientShm: true,
    });
    url = deepSrv.url;
  });
  afterAll(async () => {
    await deepSrv.close();
  });
  afterEach(async () => {
    expect((await get(url, '/v2/health/live')).status).toBe(200);
  });

  const deepBody = (datatype: string, depth: number, leaf: string, extra = '') =>
    `{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"${datatype}","data":${'['.repeat(depth)}${leaf}${']'.repeat(depth)}}]${extra}}`;

  it('answers a 100,000-deep data array quickly with 400 and Triton’s message', async () => {
    const started = Date.now();
    const r = await post(url, '/v2/models/identity_fp32/infer', deepBody('FP32', 100_000, '1'));
    expect(expectError(r, 400)).toBe(
      "Unable to parse 'data': JSON nesting depth exceeds maximum allowed limit (100)",
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('does the same when the body also holds a 64-bit integer (the exact-integer parse path)', async () => {
    const r = await post(
      url,
      '/v2/models/identity_fp32/infer',
      deepBody('FP32', 50_000, '1', ',"parameters":{"x":12345678901234567890}'),
    );
    expect(expectError(r, 400)).toBe(
      "Unable to parse 'data': JSON nesting depth exceeds maximum allowed limit (100)",
    );
  });

  it('accepts 100 levels and refuses 101; BYTES data gets the message without the prefix, as in Triton', async () => {
    const ok = await post(url, '/v2/models/identity_fp32/infer', deepBody('FP32', 100, '1'));
    expect(ok.status).toBe(200);
    expectError(await post(url, '/v2/models/identity_fp32/infer', deepBody('FP32', 101, '1')), 400);
    const bytes = await post(url, '/v2/models/identity_string/infer', deepBody('BYTES', 120, '"a"'));
    expect(expectError(bytes, 400)).toBe('JSON nesting depth exceeds maximum allowed limit (100)');
  });

  it('answers a deeply nested object element with 400, not a stack overflow', async () => {
    const element = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const r = await post(
      url,
      '/v2/models/identity_fp32/infer',
      `{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FP32","data":[${element}]}]}`,
    );
    expect(expectError(r, 400)).toBe("Unable to parse 'data': attempt to access JSON non-number as double");
  });

  it('answers deep bodies on the other JSON endpoints without a 5xx', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const logging = await post(url, '/v2/logging', `{"log_format":${deep}}`);
    expect(expectError(logging, 400)).toBe('attempt to access JSON non-string as string');
    expect((await post(url, '/v2/repository/index', `{"ready":${deep}}`)).status).toBe(400);
    expect((await post(url, '/v2/repository/models/simple/load', `{"parameters":${deep}}`)).status).toBe(400);
    const register = await post(url, '/v2/systemsharedmemory/region/deep/register', `{"key":${deep}}`);
    expect(expectError(register, 400)).toBe('attempt to access JSON non-string as string');
  });
});

describe('request JSON read in Triton’s order with TritonJson’s messages (issue 12)', () => {
  const input = (fields: string) => `{"inputs":[{"name":"INPUT0","datatype":"FP32",${fields}}]}`;

  it('refuses a negative dimension as Triton reads shapes (uint64 dims) — Triton says 500, we 400', async () => {
    const r = await post(url, '/v2/models/identity_fp32/infer', input('"shape":[2,-5],"data":[1]'));
    expect(expectError(r, 400)).toBe(
      "Unable to parse 'shape': attempt to access JSON non-unsigned-integer as unsigned-integer",
    );
  });

  it('refuses shapes whose element count or byte size overflows int64 with Triton’s words', async () => {
    const count = await post(
      url,
      '/v2/models/identity_fp32/infer',
      input('"shape":[16,1152921504606846978],"data":[1]'),
    );
    expect(expectError(count, 400)).toBe(
      "input 'INPUT0' with shape [16,1152921504606846978] causes total element count to exceed maximum size of 9223372036854775807",
    );
    const bytes = await post(
      url,
      '/v2/models/identity_fp32/infer',
      input('"shape":[4,1152921504606846978],"data":[1]'),
    );
    expect(expectError(bytes, 400)).toMatch(/^byte size overflow for input 'INPUT0'/);
  });

  it('names the missing or mistyped field with TritonJson’s reason', async () => {
    expect(expectError(await post(url, '/v2/models/simple/infer', '{"outputs":[]}'), 400)).toBe(
      "Unable to parse 'inputs': attempt to access non-existing object member 'inputs'",
    );
    expect(
      expectError(await post(url, '/v2/models/identity_fp32/infer', input('"shape":[1],"data":"x"')), 400),
    ).toBe("Unable to parse 'data': attempt to access JSON non-array as array");
    expect(expectError(await post(url, '/v2/models/identity_fp32/infer', input('"shape":[1,1]')), 400)).toBe(
      "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But no field is set",
    );
    expect(
      expectError(
        await post(url, '/v2/models/identity_fp32/infer', input('"shape":[1,2],"data":[1,"x"]')),
        400,
      ),
    ).toBe("Unable to parse 'data': attempt to access JSON non-number as double");
  });

  it('matches data against the shape as Triton walks it: one element too many is met first', async () => {
    const r = await post(url, '/v2/models/identity_fp32/infer', input('"shape":[1,1],"data":[1,2,"x"]'));
    expect(expectError(r, 400)).toBe(
      "Unable to parse 'data': Shape does not match true shape of 'data' field",
    );
  });

  it('answers data shorter than its shape with Triton 2.73’s wording', async () => {
    const short = await post(url, '/v2/models/identity_fp32/infer', input('"shape":[1,3],"data":[1,2]'));
    expect(expectError(short, 400)).toBe("Failed to parse 'data' field: shape does not match true shape");
    const nested = await post(
      url,
      '/v2/models/identity_fp32/infer',
      input('"shape":[2,2],"data":[[1,2],[3]]'),
    );
    expect(expectError(nested, 400)).toBe("Failed to parse 'data' field: shape does not match true shape");
  });

  it('checks request parameters before the inputs', async () => {
    const r = await post(
      url,
      '/v2/models/identity_fp32/infer',
      '{"parameters":{"priority":-1},"inputs":[{"name":"INPUT0"}]}',
    );
    expect(expectError(r, 400)).toBe(
      "Unable to parse 'priority': attempt to access JSON non-unsigned-integer as unsigned-integer",
    );
  });

  it('reports a bad input before a bad outputs field (inputs are read first)', async () => {
    const r = await post(
      url,
      '/v2/models/identity_fp32/infer',
      '{"outputs":7,"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,1],"data":[true]}]}',
    );
    expect(expectError(r, 400)).toBe("Unable to parse 'data': attempt to access JSON non-number as double");
  });

  it('treats an empty infer body without the header as a raw request, as Triton does', async () => {
    const r = await post(url, '/v2/models/simple/infer', '');
    expect(expectError(r, 400)).toBe(
      "Raw request must only have 1 input (found 1) to be deduced but got 2 inputs in 'simple' model configuration",
    );
  });

  it('reads the other endpoints’ bodies as Triton does (members of a non-object are absent)', async () => {
    expect((await post(url, '/v2/repository/index', '[1]')).status).toBe(200);
    const register = await post(url, '/v2/systemsharedmemory/region/x/register', '[1]');
    expect(expectError(register, 400)).toBe("Shared memory register request has no 'key' field");
    const load = await post(url, '/v2/repository/models/simple/load', '{"parameters":{"config":5}}');
    expect(expectError(load, 400)).toBe('attempt to access JSON non-string as string');
    const logging = await post(url, '/v2/logging', '{"log_info":"yes","not_a_setting":1}');
    expect(expectError(logging, 400)).toBe('attempt to access JSON non-boolean as boolean');
    expect((await post(url, '/v2/logging', '{"not_a_setting":1}')).status).toBe(200);
  });
});

describe('classification of a BYTES output (issue 12)', () => {
  it('answers 400 with Triton’s message naming the type, not a 500', async () => {
    const r = await post(
      url,
      '/v2/models/identity_string/infer',
      JSON.stringify({
        inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['a', 'b'] }],
        outputs: [{ name: 'OUTPUT0', parameters: { classification: 1 } }],
      }),
    );
    expect(expectError(r, 400)).toBe("class result not available for output due to unsupported type 'BYTES'");
  });
});

describe('binary_data_output with an explicit outputs list (issue 12)', () => {
  const body = (outputs: unknown) =>
    JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [1, 2] }],
      parameters: { binary_data_output: true },
      ...(outputs !== undefined ? { outputs } : {}),
    });
  const kinds = async (outputs: unknown) => {
    const response = await fetch(`${url}/v2/models/identity_fp32/infer`, {
      method: 'POST',
      body: body(outputs),
    });
    expect(response.status).toBe(200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const decoded = decodeInferResponse(bytes, response.headers.get('inference-header-content-length'));
    const out = (decoded.json.outputs ?? [])[0] as { data?: unknown; parameters?: Record<string, unknown> };
    return out.data !== undefined
      ? 'json'
      : out.parameters?.binary_data_size !== undefined
        ? 'binary'
        : 'none';
  };

  it('returns a listed output as JSON unless its own binary_data is true; unlisted outputs follow binary_data_output', async () => {
    expect(await kinds(undefined)).toBe('binary');
    expect(await kinds([{ name: 'OUTPUT0' }])).toBe('json');
    expect(await kinds([{ name: 'OUTPUT0', parameters: { binary_data: false } }])).toBe('json');
    expect(await kinds([{ name: 'OUTPUT0', parameters: { binary_data: true } }])).toBe('binary');
  });
});

describe('shared-memory offsets and sizes near 2^64 (issue 12)', () => {
  const key = `/tritonserver-ts-negative-${process.pid}`;
  beforeAll(async () => {
    writeFileSync(`/dev/shm${key}`, Buffer.alloc(64));
    const r = await post(
      url,
      '/v2/systemsharedmemory/region/neg/register',
      JSON.stringify({ key, offset: 0, byte_size: 64 }),
    );
    expect(r.status).toBe(200);
  });
  afterAll(async () => {
    await post(url, '/v2/systemsharedmemory/region/neg/unregister', undefined);
    rmSync(`/dev/shm${key}`, { force: true });
  });

  const shmInfer = (params: string, datatype = 'FP32') =>
    post(
      url,
      '/v2/models/identity_fp32/infer',
      `{"inputs":[{"name":"INPUT0","datatype":"${datatype}","shape":[1,1],"parameters":{"shared_memory_region":"neg",${params}}}]}`,
    );

  it('reports an integer overflow of offset + byte size with Triton’s message and exact values', async () => {
    const r = await shmInfer('"shared_memory_offset":8,"shared_memory_byte_size":18446744073709551615');
    expect(expectError(r, 400)).toBe(
      "Integer overflow detected: byte_size (18446744073709551615) + offset (8) exceeds maximum value (18446744073709551615) for region 'neg'",
    );
    // One less does not overflow: it is past the region's end.
    const past = await shmInfer('"shared_memory_offset":1,"shared_memory_byte_size":18446744073709551614');
    expect(expectError(past, 400)).toBe("Invalid offset + byte size for shared memory region: 'neg'");
  });

  it('refuses an offset at the region’s end (past its last byte), as Triton', async () => {
    const r = await shmInfer('"shared_memory_offset":64,"shared_memory_byte_size":0');
    expect(expectError(r, 400)).toBe("Invalid offset for shared memory region: 'neg'");
  });

  it('resolves regions while reading the request, before the model checks', async () => {
    const r = await post(
      url,
      '/v2/models/identity_fp32/infer',
      '{"inputs":[{"name":"INPUT0","datatype":"INT8","shape":[1,1],"parameters":{"shared_memory_region":"nope","shared_memory_byte_size":4}}]}',
    );
    expect(expectError(r, 404)).toBe("Unable to find shared memory region: 'nope'");
  });
});
