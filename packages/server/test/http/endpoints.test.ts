import { request as httpRequest } from 'node:http';
import { gunzipSync, gzipSync, inflateSync, deflateSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { bytesToStrings, float32ArrayToFp16 } from '@tritonserver-ts/protocol';
import { decodeInferResponse } from '@tritonserver-ts/protocol/http';

import { CLASSIFIER_LABELS } from '../../src/testing/index.js';
import { get, infer, post, startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
let url: string;

beforeAll(async () => {
  srv = await startTestServer();
  url = srv.url;
});

afterAll(async () => {
  await srv.close();
});

const simpleInputs = (a: number[], b: number[], batch = 1) => [
  { name: 'INPUT0', datatype: 'INT32' as const, shape: [batch, 16], data: Int32Array.from(a) },
  { name: 'INPUT1', datatype: 'INT32' as const, shape: [batch, 16], data: Int32Array.from(b) },
];
const iota = (n: number, start = 0) => Array.from({ length: n }, (_, i) => i + start);

/** Raw HTTP exchange (no automatic decompression). */
function rawExchange(
  path: string,
  body: Uint8Array,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const u = new URL(url + path);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { ...headers, 'Content-Length': body.byteLength },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('health and metadata endpoints', () => {
  it('answers live with 200 and an empty body', async () => {
    const r = await get(url, '/v2/health/live');
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
  });

  it('reports not ready under strict readiness while a startup model is unavailable', async () => {
    const r = await get(url, '/v2/health/ready');
    expect(r.status).toBe(400);
    expect(r.text).toBe('');
  });

  it('reports server metadata with the name triton and the extension list', async () => {
    const r = await get(url, '/v2');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    const m = r.json as { name: string; version: string; extensions: string[] };
    expect(m.name).toBe('triton');
    // The Triton release followed: 2.73.0 (NGC 26.09).
    expect(m.version).toBe('2.73.0');
    expect(m.extensions).toEqual(
      expect.arrayContaining(['classification', 'binary_tensor_data', 'model_repository', 'statistics']),
    );
  });

  it('reports model metadata with the batch dimension as -1', async () => {
    const r = await get(url, '/v2/models/simple');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      name: 'simple',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'OUTPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
    });
  });

  it('lists every ready version of a versioned model and serves a specific version', async () => {
    const meta = await get(url, '/v2/models/versioned/versions/2');
    expect((meta.json as { versions: string[] }).versions).toEqual(['1', '2', '3']);
    const r = await infer(
      url,
      'versioned',
      [{ name: 'INPUT0', datatype: 'INT32', shape: [3], data: Int32Array.from([1, 2, 3]) }],
      {
        version: '2',
        binaryDataOutput: false,
      },
    );
    expect(r.decoded?.json.model_version).toBe('2');
    expect(Array.from(r.decoded?.outputs[0]?.data as Int32Array)).toEqual([3, 4, 5]);
    const latest = await infer(url, 'versioned', [
      { name: 'INPUT0', datatype: 'INT32', shape: [1], data: Int32Array.from([0]) },
    ]);
    expect(Array.from(latest.decoded?.outputs[0]?.data as Int32Array)).toEqual([3]);
  });

  it('returns the model config JSON with proto field names and defaults', async () => {
    const r = await get(url, '/v2/models/simple/config');
    expect(r.status).toBe(200);
    const c = r.json as Record<string, unknown>;
    expect(c.name).toBe('simple');
    expect(c.max_batch_size).toBe(8);
    expect((c.input as { dims: number[]; data_type: string }[])[0]).toMatchObject({
      dims: [16],
      data_type: 'TYPE_INT32',
    });
  });

  it('answers model ready with 200 for a ready model and 400 otherwise', async () => {
    expect((await get(url, '/v2/models/simple/ready')).status).toBe(200);
    expect((await get(url, '/v2/models/simple/versions/1/ready')).status).toBe(200);
    const notReady = await get(url, '/v2/models/tensorrt_model/ready');
    expect(notReady.status).toBe(400);
    expect(notReady.json).toEqual({ error: 'Model version not ready' });
    expect((await get(url, '/v2/models/simple/versions/9/ready')).status).toBe(400);
  });

  it('lists the repository index with states and reasons, accepting an empty body', async () => {
    const r = await post(url, '/v2/repository/index', undefined);
    expect(r.status).toBe(200);
    const index = r.json as { name: string; version?: string; state?: string; reason?: string }[];
    expect(index.find((e) => e.name === 'simple')).toEqual({
      name: 'simple',
      version: '1',
      state: 'READY',
    });
    const trt = index.find((e) => e.name === 'tensorrt_model');
    expect(trt?.state).toBe('UNAVAILABLE');
    expect(trt?.reason).toContain("backend 'tensorrt' is not supported");
    const broken = index.find((e) => e.name === 'broken_config');
    expect(broken?.state).toBe('UNAVAILABLE');
    expect(broken?.reason).toContain('config.pbtxt:3:1');
    const ready = (await post(url, '/v2/repository/index', '{"ready":true}')).json as {
      name: string;
      state: string;
    }[];
    expect(ready.every((e) => e.state === 'READY')).toBe(true);
    expect(ready.some((e) => e.name === 'tensorrt_model')).toBe(false);
  });
});

describe('inference', () => {
  it('runs simple with JSON inputs and JSON outputs', async () => {
    const r = await infer(url, 'simple', simpleInputs(iota(16), Array<number>(16).fill(1)), {
      binaryData: false,
      binaryDataOutput: false,
      requestId: 'req-7',
    });
    expect(r.status).toBe(200);
    expect(r.response.headers.get('content-type')).toBe('application/json');
    expect(r.decoded?.json.id).toBe('req-7');
    const out0 = r.decoded?.outputs.find((o) => o.name === 'OUTPUT0');
    expect(Array.from(out0?.data as Int32Array)).toEqual(iota(16, 1));
    expect(out0?.shape).toEqual([1, 16]);
  });

  it('runs simple with binary inputs and outputs and a batch of 2', async () => {
    const r = await infer(
      url,
      'simple',
      simpleInputs([...iota(16), ...iota(16, 100)], Array<number>(32).fill(2), 2),
    );
    expect(r.status).toBe(200);
    expect(r.response.headers.get('content-type')).toBe('application/octet-stream');
    expect(Number(r.response.headers.get('inference-header-content-length'))).toBeGreaterThan(0);
    const out1 = r.decoded?.outputs.find((o) => o.name === 'OUTPUT1');
    expect(out1?.shape).toEqual([2, 16]);
    expect(Array.from(out1?.data as Int32Array)).toEqual([...iota(16, -2), ...iota(16, 98)]);
  });

  it('returns only the requested outputs, mixing binary and JSON per output', async () => {
    const r = await infer(url, 'simple', simpleInputs(iota(16), iota(16)), {
      outputs: [{ name: 'OUTPUT1', binaryData: false }],
    });
    expect(r.decoded?.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
    expect(Array.from(r.decoded?.outputs[0]?.data as Int32Array)).toEqual(Array(16).fill(0));
  });

  it('round-trips BYTES, FP16, BF16, BOOL, INT64 and UINT64 through identity models', async () => {
    const strings = await infer(url, 'identity_string', [
      { name: 'INPUT0', datatype: 'BYTES', shape: [1, 3], data: ['', 'héllo', 'x'.repeat(300)] },
    ]);
    expect(bytesToStrings(strings.decoded?.outputs[0]?.data as Uint8Array[])).toEqual([
      '',
      'héllo',
      'x'.repeat(300),
    ]);
    const jsonStrings = await infer(
      url,
      'identity_string',
      [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 1], data: ['a b'] }],
      {
        binaryData: false,
        binaryDataOutput: false,
      },
    );
    expect(bytesToStrings(jsonStrings.decoded?.outputs[0]?.data as Uint8Array[])).toEqual(['a b']);
    const half = float32ArrayToFp16([1.5, -2, 65504]);
    const fp16 = await infer(url, 'identity_fp16', [
      { name: 'INPUT0', datatype: 'FP16', shape: [1, 3], data: half },
    ]);
    expect(Array.from(fp16.decoded?.outputs[0]?.data as Uint16Array)).toEqual(Array.from(half));
    const bf = Uint16Array.from([0x3f80, 0xc000]);
    const bf16 = await infer(url, 'identity_bf16', [
      { name: 'INPUT0', datatype: 'BF16', shape: [1, 2], data: bf },
    ]);
    expect(Array.from(bf16.decoded?.outputs[0]?.data as Uint16Array)).toEqual([0x3f80, 0xc000]);
    const big = BigInt64Array.from([-(2n ** 62n), 2n ** 62n + 1n]);
    const i64 = await infer(
      url,
      'identity_int64',
      [{ name: 'INPUT0', datatype: 'INT64', shape: [1, 2], data: big }],
      {
        binaryData: false,
        binaryDataOutput: false,
      },
    );
    expect(Array.from(i64.decoded?.outputs[0]?.data as BigInt64Array)).toEqual(Array.from(big));
    const u64 = await infer(url, 'identity_uint64', [
      { name: 'INPUT0', datatype: 'UINT64', shape: [1, 1], data: BigUint64Array.from([2n ** 64n - 1n]) },
    ]);
    expect((u64.decoded?.outputs[0]?.data as BigUint64Array)[0]).toBe(2n ** 64n - 1n);
    const bools = await infer(
      url,
      'identity_bool',
      [{ name: 'INPUT0', datatype: 'BOOL', shape: [1, 2], data: Uint8Array.from([1, 0]) }],
      {
        binaryDataOutput: false,
      },
    );
    expect(Array.from(bools.decoded?.outputs[0]?.data as Uint8Array)).toEqual([1, 0]);
  });

  it('returns labelled top-k classes as BYTES [batch, k] in JSON and binary', async () => {
    const scores = Float32Array.from([1, 2, 3, 4, 5, 5, 4, 3, 2, 1]);
    const r = await infer(
      url,
      'classifier',
      [{ name: 'input', datatype: 'FP32', shape: [2, 5], data: scores }],
      {
        outputs: [{ name: 'probs', classCount: 2, binaryData: false }],
      },
    );
    const out = r.decoded?.outputs[0];
    expect(out?.datatype).toBe('BYTES');
    expect(out?.shape).toEqual([2, 2]);
    const s = bytesToStrings(out?.data as Uint8Array[]);
    expect(s[0]).toMatch(new RegExp(`^0\\.\\d{6}:4:${CLASSIFIER_LABELS[4]}$`));
    expect(s[2]).toMatch(new RegExp(`^0\\.\\d{6}:0:${CLASSIFIER_LABELS[0]}$`));
    const bin = await infer(
      url,
      'classifier',
      [{ name: 'input', datatype: 'FP32', shape: [2, 5], data: scores }],
      {
        outputs: [{ name: 'probs', classCount: 9 }],
      },
    );
    expect(bin.decoded?.outputs[0]?.shape).toEqual([2, 5]);
    expect(bytesToStrings(bin.decoded?.outputs[0]?.data as Uint8Array[])).toHaveLength(10);
  });

  it('refuses classification of an FP16 output with Triton’s message', async () => {
    const r = await infer(
      url,
      'identity_fp16',
      [{ name: 'INPUT0', datatype: 'FP16', shape: [1, 2], data: Uint16Array.from([1, 2]) }],
      {
        outputs: [{ name: 'OUTPUT0', classCount: 1 }],
      },
    );
    expect(r.status).toBe(400);
    expect(r.error).toBe("class result not available for output due to unsupported type 'FP16'");
  });

  it('accepts a raw binary request (header length 0) and answers binary', async () => {
    const data = Float32Array.from([1, -2, 3]);
    const r = await rawExchange('/v2/models/identity_fp32/infer', new Uint8Array(data.buffer), {
      'Inference-Header-Content-Length': '0',
    });
    expect(r.status).toBe(200);
    const decoded = decodeInferResponse(new Uint8Array(r.body), r.headers['inference-header-content-length']);
    expect(decoded.outputs[0]?.shape).toEqual([1, 3]);
    expect(Array.from(decoded.outputs[0]?.data as Float32Array)).toEqual([1, -2, 3]);
  });

  it('decompresses gzip and deflate requests and compresses responses by Accept-Encoding', async () => {
    const body = JSON.stringify({
      inputs: [{ name: 'INPUT0', shape: [1, 2], datatype: 'FP32', data: [0.5, 1.5] }],
    });
    for (const [encoding, compress] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
    ] as const) {
      const r = await rawExchange('/v2/models/identity_fp32/infer', compress(body), {
        'Content-Encoding': encoding,
        'Accept-Encoding': `identity;q=0.5, ${encoding};q=0.9`,
      });
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBe(encoding);
      const plain = encoding === 'gzip' ? gunzipSync(r.body) : inflateSync(r.body);
      const decoded = decodeInferResponse(
        new Uint8Array(plain),
        r.headers['inference-header-content-length'],
      );
      expect(Array.from(decoded.outputs[0]?.data as Float32Array)).toEqual([0.5, 1.5]);
    }
    const plain = await rawExchange('/v2/models/identity_fp32/infer', Buffer.from(body), {
      'Accept-Encoding': 'gzip;q=0',
    });
    expect(plain.headers['content-encoding']).toBeUndefined();
  });

  it('records statistics for the requests it served', async () => {
    const before = (await get(url, '/v2/models/simple_no_batch/stats')).json as {
      model_stats: { inference_stats: { success: { count: number } } }[];
    };
    const n0 = before.model_stats[0]?.inference_stats.success.count ?? 0;
    const inputs = [
      { name: 'INPUT0', datatype: 'INT32' as const, shape: [16], data: Int32Array.from(iota(16)) },
      { name: 'INPUT1', datatype: 'INT32' as const, shape: [16], data: Int32Array.from(iota(16)) },
    ];
    await Promise.all([infer(url, 'simple_no_batch', inputs), infer(url, 'simple_no_batch', inputs)]);
    const after = (await get(url, '/v2/models/simple_no_batch/stats')).json as {
      model_stats: {
        name: string;
        version: string;
        inference_count: number;
        inference_stats: { success: { count: number }; queue: { count: number } };
      }[];
    };
    expect(after.model_stats).toHaveLength(1);
    expect(after.model_stats[0]).toMatchObject({ name: 'simple_no_batch', version: '1' });
    expect(after.model_stats[0]?.inference_stats.success.count).toBe(n0 + 2);
    expect(after.model_stats[0]?.inference_stats.queue.count).toBe(n0 + 2);
    const all = (await get(url, '/v2/models/stats')).json as { model_stats: { name: string }[] };
    expect(all.model_stats.map((s) => s.name)).toContain('simple');
  });
});

describe('concurrency', () => {
  it('answers 96 concurrent requests of mixed models and sizes, each with its own result', async () => {
    const jobs = Array.from({ length: 96 }, async (_, i) => {
      if (i % 3 === 0) {
        const batch = 1 + (i % 4);
        const a = Array.from({ length: batch * 16 }, (_, k) => i * 1000 + k);
        const r = await infer(url, 'simple', simpleInputs(a, Array<number>(batch * 16).fill(i), batch));
        const out = r.decoded?.outputs.find((o) => o.name === 'OUTPUT0');
        expect(out?.shape).toEqual([batch, 16]);
        expect(Array.from(out?.data as Int32Array)).toEqual(a.map((v) => v + i));
      } else if (i % 3 === 1) {
        const words = Array.from({ length: 1 + (i % 5) }, (_, k) => `req${i}-${k}`);
        const r = await infer(url, 'identity_string', [
          { name: 'INPUT0', datatype: 'BYTES', shape: [1, words.length], data: words },
        ]);
        expect(bytesToStrings(r.decoded?.outputs[0]?.data as Uint8Array[])).toEqual(words);
      } else {
        const values = Array.from({ length: 1 + (i % 7) }, (_, k) => i + k / 8);
        const r = await infer(
          url,
          'identity_fp32',
          [{ name: 'INPUT0', datatype: 'FP32', shape: [1, values.length], data: Float32Array.from(values) }],
          {
            binaryDataOutput: i % 2 === 0,
          },
        );
        expect(Array.from(r.decoded?.outputs[0]?.data as Float32Array)).toEqual(values);
      }
    });
    await Promise.all(jobs);
  });
});

describe('connections', () => {
  it('serves sequential requests of every kind over one keep-alive connection', async () => {
    const { Agent, request } = await import('node:http');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const u = new URL(url);
    const sockets = new Set<unknown>();
    const call = (method: string, path: string, body?: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ agent, host: u.hostname, port: u.port, path, method }, (res) => {
          sockets.add(res.socket);
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
    const infer = JSON.stringify({
      inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', data: [1] }],
    });
    expect(await call('GET', '/v2/health/live')).toBe(200);
    expect(await call('POST', '/v2/models/identity_fp32/infer', infer)).toBe(200);
    expect(await call('POST', '/v2/models/identity_fp32/infer', '{')).toBe(400);
    expect(await call('GET', '/v2/models/nope')).toBe(400);
    expect(await call('POST', '/v2/repository/index')).toBe(200);
    expect(sockets.size).toBe(1);
    agent.destroy();
  });
});

describe('trace and log settings', () => {
  it('updates global trace settings and lets a model inherit and reset them', async () => {
    // Without a trace file (a command-line setting) tracing cannot be turned on: Triton's 400.
    const on = await post(url, '/v2/trace/setting', JSON.stringify({ trace_level: ['TIMESTAMPS'] }));
    expect(on.json).toEqual({
      error: 'Attempting to set invalid trace setting :trace file name is not given',
    });
    const g = await post(url, '/v2/trace/setting', JSON.stringify({ trace_rate: '7' }));
    expect(g.status).toBe(200);
    expect(g.json).toMatchObject({ trace_rate: '7', trace_level: ['OFF'], trace_count: '-1' });
    const m = await post(url, '/v2/models/simple/trace/setting', JSON.stringify({ trace_count: '5' }));
    expect(m.json).toMatchObject({ trace_rate: '7', trace_count: '5' });
    const reset = await post(url, '/v2/models/simple/trace/setting', JSON.stringify({ trace_count: null }));
    expect(reset.json).toMatchObject({ trace_count: '-1' });
    // As tritonserver: keys it does not read (trace_mode is fixed at startup) and unknown level
    // names are ignored; trace_mode is reported as Triton's InferenceTraceModeString ('triton').
    const ignored = await post(
      url,
      '/v2/trace/setting',
      JSON.stringify({ trace_level: ['LOUD'], trace_mode: 'opentelemetry', foo: 1, trace_rate: '8' }),
    );
    expect(ignored.status).toBe(200);
    expect(ignored.json).toMatchObject({ trace_level: ['OFF'], trace_rate: '8', trace_mode: 'triton' });
    expect(ignored.json).not.toHaveProperty('foo');
    // TENSORS is a level like TIMESTAMPS: without a trace file, Triton's 400 too.
    const tensors = await post(url, '/v2/trace/setting', JSON.stringify({ trace_level: ['TENSORS'] }));
    expect(tensors.status).toBe(400);
    expect(tensors.json).toEqual({
      error: 'Attempting to set invalid trace setting :trace file name is not given',
    });
  });

  it('updates log settings and returns the full object', async () => {
    const r = await post(url, '/v2/logging', JSON.stringify({ log_verbose_level: 1 }));
    expect(r.json).toEqual({
      log_file: '',
      log_info: true,
      log_warning: true,
      log_error: true,
      log_verbose_level: 1,
      log_format: 'default',
    });
    await get(url, '/v2/health/live');
    expect(srv.logs.some((l) => l.includes('"path":"/v2/health/live"') && l.includes('"status":200'))).toBe(
      true,
    );
    await post(url, '/v2/logging', JSON.stringify({ log_verbose_level: 0 }));
    const bad = await post(url, '/v2/logging', JSON.stringify({ log_info: 'yes' }));
    expect(bad.status).toBe(400);
    // Triton answers a bad log_format UNAVAILABLE, naming the flag.
    const format = await post(url, '/v2/logging', JSON.stringify({ log_format: 'xml' }));
    expect(format.status).toBe(503);
    expect(format.json).toEqual({ error: 'invalid argument for --log_format, got: xml' });
  });
});
