/**
 * The gRPC transport against the real embedded server (its gRPC front end, generated test models):
 * every API answers over gRPC as it does over HTTP, through the same `TritonClient`, and one request
 * gives the same transport-neutral response and error over both wires.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TritonClient, type InferOptions } from '../../src/client.js';
import {
  TritonAbortError,
  TritonInvalidArgumentError,
  TritonProtocolError,
  TritonServerError,
  TritonTimeoutError,
  type TritonErrorReason,
} from '../../src/errors.js';
import type { InferResult } from '../../src/infer-result.js';
import type { InferResponse } from '@tritonserver-ts/protocol';
import { createGrpcClient, type GrpcTransport, type StreamResponse } from '../../src/grpc/index.js';
import type { InferInput } from '@tritonserver-ts/protocol';

// Loaded by name so the client package does not depend on the server (the server depends on it).
const serverModule = '@tritonserver-ts/server';
const testingModule = '@tritonserver-ts/server/testing';

interface RunningServer {
  readonly url: string;
  readonly grpcUrl: string;
  close(): Promise<void>;
}

const MODELS = [
  'simple',
  'identity_int8',
  'identity_uint16',
  'identity_int64',
  'identity_uint64',
  'identity_bool',
  'identity_string',
  'identity_fp16',
  'identity_fp32',
  'classifier',
  'versioned',
  'slow_identity',
];

let repo: string;
let server: RunningServer;
let http: TritonClient;
let grpc: TritonClient & { readonly transport: GrpcTransport };

beforeAll(async () => {
  const { startServer } = (await import(serverModule)) as {
    startServer: (options: Record<string, unknown>) => Promise<RunningServer>;
  };
  const { writeTestModelRepository } = (await import(testingModule)) as {
    writeTestModelRepository: (dir: string, options: { only: readonly string[] }) => Promise<unknown>;
  };
  repo = await mkdtemp(join(tmpdir(), 'client-grpc-'));
  await writeTestModelRepository(repo, { only: MODELS });
  // A decoupled copy of `simple` (ONNX Runtime answers each request whole: one response flagged final).
  await cp(join(repo, 'simple'), join(repo, 'simple_decoupled'), { recursive: true });
  const config = await readFile(join(repo, 'simple', 'config.pbtxt'), 'utf8');
  await writeFile(
    join(repo, 'simple_decoupled', 'config.pbtxt'),
    `${config.replace('name: "simple"', 'name: "simple_decoupled"')}\nmodel_transaction_policy { decoupled: true }\n`,
  );
  server = await startServer({
    modelRepositories: [repo],
    modelControlMode: 'explicit',
    loadModels: [...MODELS, 'simple_decoupled'],
    httpPort: 0,
    grpcPort: 0,
    logSink: () => undefined,
  });
  http = new TritonClient({ url: server.url });
  grpc = createGrpcClient({ url: server.grpcUrl });
});

afterAll(async () => {
  await grpc?.close();
  await http?.close();
  await server?.close();
  if (repo !== undefined) await rm(repo, { recursive: true, force: true });
});

const a = Int32Array.from({ length: 16 }, (_, i) => i);
const b = new Int32Array(16).fill(3);
const simpleInputs: InferInput[] = [
  { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a },
  { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: b },
];

describe('management APIs: the same answers over gRPC and HTTP', () => {
  it('health and readiness', async () => {
    expect(await grpc.isServerLive()).toBe(true);
    expect(await grpc.isServerReady()).toBe(true);
    expect(await grpc.isModelReady('simple')).toBe(true);
    expect(await grpc.isModelReady('versioned', 2)).toBe(true);
    expect(await grpc.isModelReady('no_such_model')).toBe(false);
  });

  it('server and model metadata, model config', async () => {
    expect(await grpc.getServerMetadata()).toEqual(await http.getServerMetadata());
    expect(await grpc.getModelMetadata('simple')).toEqual(await http.getModelMetadata('simple'));
    expect(await grpc.getModelMetadata('versioned', 3)).toEqual(await http.getModelMetadata('versioned', 3));
    expect(await grpc.getModelConfig('simple')).toEqual(await http.getModelConfig('simple'));
    expect(await grpc.getModelConfig('classifier')).toEqual(await http.getModelConfig('classifier'));
  });

  it('repository index, trace and log settings, shared-memory status', async () => {
    expect(await grpc.getModelRepositoryIndex()).toEqual(await http.getModelRepositoryIndex());
    expect(await grpc.getTraceSettings()).toEqual(await http.getTraceSettings());
    expect(await grpc.getTraceSettings('simple')).toEqual(await http.getTraceSettings('simple'));
    expect(await grpc.getLogSettings()).toEqual(await http.getLogSettings());
    expect(await grpc.getSystemSharedMemoryStatus()).toEqual(await http.getSystemSharedMemoryStatus());
    await expect(grpc.registerSystemSharedMemory('r', '/k', 1.5)).rejects.toBeInstanceOf(
      TritonInvalidArgumentError,
    );
  });

  it('statistics count gRPC inferences', async () => {
    const before = await grpc.getInferenceStatistics('simple');
    await grpc.infer('simple', simpleInputs);
    const after = await grpc.getInferenceStatistics('simple');
    expect(Number(after.model_stats[0]?.inference_stats.success.count)).toBe(
      Number(before.model_stats[0]?.inference_stats.success.count) + 1,
    );
    expect(after).toEqual(await http.getInferenceStatistics('simple'));
  });

  it('unload and load over gRPC', async () => {
    await grpc.unloadModel('versioned');
    expect(await http.isModelReady('versioned')).toBe(false);
    await grpc.loadModel('versioned');
    expect(await http.isModelReady('versioned')).toBe(true);
  });

  it('errors carry the server message and the gRPC transport', async () => {
    const overGrpc = await grpc.getModelMetadata('no_such_model').catch((e: unknown) => e);
    const overHttp = await http.getModelMetadata('no_such_model').catch((e: unknown) => e);
    expect(overGrpc).toBeInstanceOf(TritonServerError);
    expect(overGrpc).toMatchObject({ transport: 'grpc', message: (overHttp as Error).message });
  });
});

describe('inference over gRPC', () => {
  it("the 'simple' model: raw inputs and outputs, request id, requested outputs", async () => {
    const result = await grpc.infer('simple', simpleInputs, {
      requestId: 'g-1',
      outputs: [{ name: 'OUTPUT1' }],
    });
    expect(result.id).toBe('g-1');
    expect(result.modelName).toBe('simple');
    expect(result.outputNames).toEqual(['OUTPUT1']);
    expect(Array.from(result.asTypedArray('OUTPUT1', 'INT32'))).toEqual(Array.from(a, (v) => v - 3));
    const all = await grpc.infer('simple', simpleInputs);
    expect(Array.from(all.asTypedArray('OUTPUT0', 'INT32'))).toEqual(Array.from(a, (v) => v + 3));
    expect(all.shape('OUTPUT0')).toEqual([1, 16]);
  });

  it('typed contents: INT8/UINT16 widened, 64-bit exact, BOOL and BYTES', async () => {
    const cases: InferInput[] = [
      { name: 'INPUT0', datatype: 'INT8', shape: [1, 3], data: new Int8Array([-128, 0, 127]) },
      { name: 'INPUT0', datatype: 'UINT16', shape: [1, 2], data: new Uint16Array([0, 65535]) },
      {
        name: 'INPUT0',
        datatype: 'INT64',
        shape: [1, 2],
        data: new BigInt64Array([2n ** 63n - 1n, -(2n ** 63n)]),
      },
      { name: 'INPUT0', datatype: 'UINT64', shape: [1, 1], data: new BigUint64Array([2n ** 64n - 1n]) },
      { name: 'INPUT0', datatype: 'BOOL', shape: [1, 2], data: [true, false] },
      { name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['ab', 'ü'] },
    ];
    const models: Record<string, string> = {
      INT8: 'identity_int8',
      UINT16: 'identity_uint16',
      INT64: 'identity_int64',
      UINT64: 'identity_uint64',
      BOOL: 'identity_bool',
      BYTES: 'identity_string',
    };
    for (const input of cases) {
      for (const binaryData of [false, true]) {
        const result = await grpc.infer(models[input.datatype] as string, [{ ...input, binaryData }]);
        const expected = (await http.infer(models[input.datatype] as string, [input])).output('OUTPUT0');
        expect(result.output('OUTPUT0'), `${input.datatype} binaryData=${binaryData}`).toEqual(expected);
      }
    }
  });

  it('FP16 raw, classification, model versions', async () => {
    const half = await grpc.infer('identity_fp16', [
      { name: 'INPUT0', datatype: 'FP16', shape: [1, 2], data: [1.5, -2] },
    ]);
    expect(Array.from(half.asFloat32Array('OUTPUT0'))).toEqual([1.5, -2]);
    const input: InferInput = { name: 'input', datatype: 'FP32', shape: [1, 5], data: [0, 3, 1, 2, 0] };
    const top = await grpc.infer('classifier', [input], { outputs: [{ name: 'probs', classCount: 2 }] });
    const topHttp = await http.infer('classifier', [input], { outputs: [{ name: 'probs', classCount: 2 }] });
    expect(top.classifications('probs')).toEqual(topHttp.classifications('probs'));
    const v2 = await grpc.infer(
      'versioned',
      [{ name: 'INPUT0', datatype: 'INT32', shape: [1], data: [10] }],
      {
        modelVersion: 2,
      },
    );
    expect(v2.modelVersion).toBe('2');
    expect(Array.from(v2.asTypedArray('OUTPUT0', 'INT32'))).toEqual([12]);
  });

  it('a 6 MB tensor each way (beyond grpc-js’s 4 MiB default receive limit)', async () => {
    const big = Float32Array.from({ length: 1_500_000 }, (_, i) => i % 1000);
    const started = performance.now();
    const result = await grpc.infer('identity_fp32', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, big.length], data: big },
    ]);
    const ms = performance.now() - started;
    const out = result.asTypedArray('OUTPUT0', 'FP32');
    expect(out.length).toBe(big.length);
    expect(
      Buffer.compare(Buffer.from(out.buffer, out.byteOffset, out.byteLength), Buffer.from(big.buffer)),
    ).toBe(0);
    expect(ms).toBeLessThan(10_000);
  });

  it('message-size limits: a response over maxReceiveMessageLength is a protocol error, a request over maxSendMessageLength is refused', async () => {
    const small = createGrpcClient({
      url: server.grpcUrl,
      maxReceiveMessageLength: 4096,
      maxSendMessageLength: 16_384,
    });
    try {
      const data = new Float32Array(2048);
      const tooBig = await small
        .infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, data.length], data }])
        .catch((e: unknown) => e);
      expect(tooBig).toBeInstanceOf(TritonProtocolError);
      expect((tooBig as Error).message).toContain('Received message larger than max');
      const huge = new Float32Array(8192);
      const refused = await small
        .infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, huge.length], data: huge }])
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(TritonInvalidArgumentError);
      // Small messages still pass both ways.
      const ok = await small.infer('identity_fp32', [
        { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] },
      ]);
      expect(Array.from(ok.asTypedArray('OUTPUT0', 'FP32'))).toEqual([1, 2, 3, 4]);
    } finally {
      await small.close();
    }
  });

  it('gzip-compressed requests', async () => {
    const result = await grpc.infer('simple', simpleInputs, { requestCompression: 'gzip' });
    expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual(Array.from(a, (v) => v + 3));
  });

  it('unknown models and bad inputs fail with the server message, as over HTTP', async () => {
    const overGrpc = await grpc.infer('no_such_model', simpleInputs).catch((e: unknown) => e);
    const overHttp = await http.infer('no_such_model', simpleInputs).catch((e: unknown) => e);
    expect(overGrpc).toBeInstanceOf(TritonServerError);
    expect((overGrpc as Error).message).toBe((overHttp as Error).message);
    const wrong = await grpc
      .infer('simple', [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a }])
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(TritonServerError);
  });

  it("the client's timeout is the deadline", async () => {
    const error = await grpc
      .infer('slow_identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [1] }], {
        timeoutMs: 5,
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TritonTimeoutError);
    // The server is still fine afterwards.
    expect(await grpc.isServerLive()).toBe(true);
  });
});

describe('ModelStreamInfer', () => {
  it('streams requests and yields one response per request, correlated by id', async () => {
    const requests = [0, 1, 2].map((i) => ({
      modelName: 'simple',
      inputs: simpleInputs,
      options: { requestId: `s${i}` },
    }));
    const responses: StreamResponse[] = [];
    for await (const response of grpc.transport.streamInfer(requests)) responses.push(response);
    expect(responses.map((r) => [r.id, r.final, r.error])).toEqual([
      ['s0', true, undefined],
      ['s1', true, undefined],
      ['s2', true, undefined],
    ]);
    expect(Array.from(responses[0]?.result?.asTypedArray('OUTPUT0', 'INT32') ?? [])).toEqual(
      Array.from(a, (v) => v + 3),
    );
  });

  it('breaking out of streamInfer cancels the stream, even while the request iterable waits', async () => {
    async function* requests() {
      yield { modelName: 'simple', inputs: simpleInputs, options: { requestId: 'only' } };
      await new Promise(() => undefined); // never yields again
    }
    const ids: string[] = [];
    for await (const response of grpc.transport.streamInfer(requests())) {
      ids.push(response.id);
      break;
    }
    expect(ids).toEqual(['only']);
    expect(await grpc.isServerLive()).toBe(true);
  });

  it('a failing request is reported in-band and the stream goes on', async () => {
    const stream = grpc.transport.openStream();
    stream.send('no_such_model', simpleInputs, { requestId: 'bad' });
    stream.send('simple', simpleInputs, { requestId: 'good' });
    stream.end();
    const responses: StreamResponse[] = [];
    for await (const response of stream) responses.push(response);
    expect(responses).toHaveLength(2);
    expect(responses[0]?.error).toBeInstanceOf(TritonServerError);
    expect(responses[0]?.error?.message).toContain('no_such_model');
    expect(responses[1]).toMatchObject({ id: 'good', error: undefined });
  });

  it("the Python client's startStream / asyncStreamInfer / stopStream", async () => {
    const transport = grpc.transport;
    expect(() => transport.asyncStreamInfer('simple', simpleInputs)).toThrow(TritonInvalidArgumentError);
    const seen: [string, boolean, string | undefined][] = [];
    transport.startStream((result, error, response) => {
      seen.push([response?.id ?? '', result !== undefined, error?.message]);
    });
    expect(() => transport.startStream(() => undefined)).toThrow(TritonInvalidArgumentError);
    transport.asyncStreamInfer('simple', simpleInputs, { requestId: 'p1' });
    transport.asyncStreamInfer('simple', simpleInputs, { requestId: 'p2' });
    await transport.stopStream();
    expect(seen).toEqual([
      ['p1', true, undefined],
      ['p2', true, undefined],
    ]);
    // A new stream can start once the previous one stopped; cancelRequests stops at once.
    transport.startStream(() => undefined);
    await transport.stopStream({ cancelRequests: true });
  });

  it('a decoupled model: refused by ModelInfer (UNIMPLEMENTED → 501), answered on the stream with triton_final_response', async () => {
    const refused = await grpc.infer('simple_decoupled', simpleInputs).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TritonServerError);
    expect(refused).toMatchObject({
      status: 501,
      message: "ModelInfer RPC doesn't support models with decoupled transaction policy",
    });
    const responses: StreamResponse[] = [];
    for await (const r of grpc.transport.streamInfer([
      { modelName: 'simple_decoupled', inputs: simpleInputs, options: { requestId: 'd1' } },
    ])) {
      responses.push(r);
    }
    expect(responses.map((r) => [r.id, r.final, r.error])).toEqual([['d1', true, undefined]]);
    expect(Array.from(responses[0]?.result?.asTypedArray('OUTPUT1', 'INT32') ?? [])).toEqual(
      Array.from(a, (v) => v - 3),
    );
  });
});

describe('one transport-neutral response and error model over both wires', () => {
  /**
   * The neutral response without the HTTP framing parameter (`binary_data_size`), BYTES elements
   * as plain `Uint8Array`s (a wire may hand out `Buffer` views).
   */
  const neutral = (result: InferResult): InferResponse => ({
    ...result.inferResponse,
    outputs: result.inferResponse.outputs.map((o) => {
      const { binary_data_size: _framing, ...parameters } = o.parameters;
      const data =
        o.datatype === 'BYTES'
          ? (o.data as Uint8Array[]).map((e) => new Uint8Array(e.buffer, e.byteOffset, e.byteLength))
          : o.data;
      return { ...o, parameters, data };
    }),
  });

  it('the same request gives the same InferResponse over HTTP (binary and JSON outputs) and gRPC', async () => {
    const requests: [string, InferInput[], InferOptions][] = [
      ['simple', simpleInputs, { requestId: 'n-1' }],
      ['simple', simpleInputs, { outputs: [{ name: 'OUTPUT1' }, { name: 'OUTPUT0' }] }],
      ['versioned', [{ name: 'INPUT0', datatype: 'INT32', shape: [1], data: [10] }], { modelVersion: 2 }],
      ['identity_string', [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['ab', 'ü'] }], {}],
      ['identity_int64', [{ name: 'INPUT0', datatype: 'INT64', shape: [1, 1], data: [-(2n ** 63n)] }], {}],
      [
        'classifier',
        [{ name: 'input', datatype: 'FP32', shape: [1, 5], data: [0, 3, 1, 2, 0] }],
        { outputs: [{ name: 'probs', classCount: 3 }] },
      ],
    ];
    for (const [model, inputs, options] of requests) {
      const overGrpc = await grpc.infer(model, inputs, options);
      const overHttp = await http.infer(model, inputs, options);
      // JSON outputs over HTTP: every requested output with binaryData false.
      const jsonOptions: InferOptions = {
        ...options,
        outputs: (options.outputs ?? overHttp.outputNames.map((name) => ({ name }))).map((o) => ({
          ...o,
          binaryData: false,
        })),
      };
      const overHttpJson = await http.infer(model, inputs, jsonOptions);
      expect(overHttp.inferResponse.outputs.every((o) => o.parameters.binary_data_size !== undefined)).toBe(
        true,
      );
      expect(
        overHttpJson.inferResponse.outputs.some((o) => o.parameters.binary_data_size !== undefined),
      ).toBe(false);
      expect(neutral(overGrpc), model).toEqual(neutral(overHttp));
      expect(neutral(overHttpJson), `${model} JSON outputs`).toEqual(
        neutral(await grpc.infer(model, inputs, jsonOptions)),
      );
      expect(overGrpc.modelName).toBe(model);
      expect(overGrpc.id).toBe(overHttp.id);
      expect(overGrpc.modelVersion).toBe(overHttp.modelVersion);
      for (const name of overGrpc.outputNames) {
        expect(overGrpc.view(name).toNested()).toEqual(overHttp.view(name).toNested());
      }
    }
    const top = await grpc.infer(...(requests[5] as [string, InferInput[], InferOptions]));
    expect(top.classifications('probs').map((c) => c.index)).toEqual([1, 3, 2]);
  });

  it('the deprecated HTTP-shaped `response` view is built from the neutral response on both wires', async () => {
    const overGrpc = await grpc.infer('simple', simpleInputs, { requestId: 'v-1' });
    const overHttp = await http.infer('simple', simpleInputs, {
      requestId: 'v-1',
      outputs: [{ name: 'OUTPUT0', binaryData: false }, { name: 'OUTPUT1' }],
    });
    expect(overHttp.response).toMatchObject({ model_name: 'simple', id: 'v-1' });
    expect(overHttp.response.outputs[0]?.data).toEqual(Array.from(a, (v) => v + 3));
    expect(overHttp.response.outputs[1]?.data).toBeUndefined();
    expect(overHttp.response.outputs[1]?.parameters?.binary_data_size).toBe(64);
    expect(overGrpc.response.outputs.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
    expect(overGrpc.response.outputs[1]?.data).toEqual(Array.from(a, (v) => v - 3));
  });

  it('TritonServerError.reason is the same on both wires: INVALID_ARG, NOT_FOUND; UNSUPPORTED from gRPC UNIMPLEMENTED', async () => {
    const failures: [string, (c: TritonClient) => Promise<unknown>, TritonErrorReason, number][] = [
      // As Triton: an unknown model is an invalid argument, an unknown region is not found.
      ['unknown model (metadata)', (c) => c.getModelMetadata('no_such_model'), 'INVALID_ARG', 400],
      ['unknown model (infer)', (c) => c.infer('no_such_model', simpleInputs), 'INVALID_ARG', 400],
      ['unknown region', (c) => c.getSystemSharedMemoryStatus('no_such_region'), 'NOT_FOUND', 404],
      [
        'missing input',
        (c) => c.infer('simple', [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a }]),
        'INVALID_ARG',
        400,
      ],
      [
        'wrong datatype',
        (c) =>
          c.infer('simple', [
            { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16) },
            { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: b },
          ]),
        'INVALID_ARG',
        400,
      ],
    ];
    for (const [what, run, reason, status] of failures) {
      const overGrpc = await run(grpc).catch((e: unknown) => e);
      const overHttp = await run(http).catch((e: unknown) => e);
      expect(overGrpc, what).toBeInstanceOf(TritonServerError);
      expect(overHttp, what).toBeInstanceOf(TritonServerError);
      expect(overGrpc, what).toMatchObject({ reason, status, transport: 'grpc' });
      expect(overHttp, what).toMatchObject({ reason, status, transport: 'http' });
    }
    const refused = await grpc.infer('simple_decoupled', simpleInputs).catch((e: unknown) => e);
    expect(refused).toMatchObject({ reason: 'UNSUPPORTED', status: 501 });
    // An in-band stream error carries no status: its kind is unknown.
    const stream = grpc.transport.openStream();
    stream.send('no_such_model', simpleInputs);
    stream.end();
    for await (const response of stream) expect(response.error).toMatchObject({ reason: 'UNKNOWN' });
  });
});

describe('large requests are encoded into reused buffers (issue 11)', () => {
  /** FP32 [1, 40000] (160 KB, pooled), every element distinct per `seed`. */
  const large = (seed: number): InferInput[] => [
    {
      name: 'INPUT0',
      datatype: 'FP32',
      shape: [1, 40_000],
      data: Float32Array.from({ length: 40_000 }, (_, i) => seed * 100_000 + i),
    },
  ];
  const first = (r: InferResult): number[] => Array.from(r.asFloat32Array('OUTPUT0').subarray(0, 3));

  it('unary: concurrent calls each get their own data back, and the buffers are reused', async () => {
    for (let round = 0; round < 3; round++) {
      const seeds = Array.from({ length: 8 }, (_, i) => round * 8 + i);
      const results = await Promise.all(seeds.map((seed) => grpc.infer('identity_fp32', large(seed))));
      results.forEach((r, i) => {
        const seed = seeds[i] as number;
        expect(first(r), `seed ${seed}`).toEqual([seed * 100_000, seed * 100_000 + 1, seed * 100_000 + 2]);
        expect(r.asFloat32Array('OUTPUT0')[39_999]).toBe(seed * 100_000 + 39_999);
      });
    }
    expect(grpc.transport.idleRequestBufferBytes).toBeGreaterThanOrEqual(160_000);
  });

  it('stream: requests sent back to back each get their own data back, and the buffers are reused', async () => {
    // A client of its own, so the buffers counted below are the stream's.
    const client = createGrpcClient({ url: server.grpcUrl });
    expect(client.transport.idleRequestBufferBytes).toBe(0);
    const stream = client.transport.openStream();
    const expected = new Map<string, number>();
    for (let seed = 0; seed < 24; seed++) {
      expected.set(`big${seed}`, seed);
      stream.send('identity_fp32', large(seed), { requestId: `big${seed}` });
      // Give grpc-js a turn now and then, so later requests reuse the first ones' buffers.
      if (seed % 8 === 7) await new Promise((resolve) => setImmediate(resolve));
    }
    stream.end();
    let count = 0;
    for await (const response of stream) {
      const seed = expected.get(response.id) as number;
      expect(response.error).toBeUndefined();
      expect(first(response.result as InferResult), response.id).toEqual([
        seed * 100_000,
        seed * 100_000 + 1,
        seed * 100_000 + 2,
      ]);
      count++;
    }
    expect(count).toBe(24);
    expect(client.transport.idleRequestBufferBytes).toBeGreaterThanOrEqual(160_000);
    await client.close();
  });

  it('a call aborted at once gives its buffer back without harming the calls after it', async () => {
    const controller = new AbortController();
    const aborted = grpc.infer('slow_identity', large(1000), { signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(TritonAbortError);
    const results = await Promise.all([0, 1, 2, 3].map((seed) => grpc.infer('identity_fp32', large(seed))));
    results.forEach((r, seed) =>
      expect(first(r)).toEqual([seed * 100_000, seed * 100_000 + 1, seed * 100_000 + 2]),
    );
  });
});
