/**
 * The gRPC front end through the real server (generated models, real onnxruntime) with a
 * @grpc/grpc-js client over the client package's messages: health, metadata, config, inference
 * (raw and typed contents), streaming, statistics, repository, settings and shared-memory RPCs.
 */
import { Metadata } from '@grpc/grpc-js';
import type {
  HealthCheckResponse,
  LogSettingsResponse,
  ModelConfigResponse,
  ModelInferResponse,
  ModelMetadataResponse,
  ModelReadyResponse,
  ModelStatisticsResponse,
  ModelStreamInferResponse,
  RepositoryIndexResponse,
  ServerLiveResponse,
  ServerMetadataResponse,
  ServerReadyResponse,
  SystemSharedMemoryStatusResponse,
  TraceSettingResponse,
} from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SERVER_EXTENSIONS, SERVER_VERSION } from '../../src/index.js';
import type { TestServer } from '../helpers/server.js';
import {
  GrpcStatus,
  GrpcTestClient,
  SIMPLE_A,
  SIMPLE_B,
  grpcError,
  int32Values,
  simpleRequest,
  startGrpcTestServer,
} from './helpers.js';

let server: TestServer & { grpcTarget: string };
let client: GrpcTestClient;

beforeAll(async () => {
  server = await startGrpcTestServer({
    only: ['simple', 'simple_no_batch', 'identity_int8', 'identity_string', 'classifier', 'versioned'],
    metricsPort: 0,
  });
  client = new GrpcTestClient(server.grpcTarget);
});

afterAll(async () => {
  client.close();
  await server.close();
});

describe('health', () => {
  it('ServerLive, ServerReady and grpc.health.v1.Health/Check report the server', async () => {
    expect((await client.call<ServerLiveResponse>('ServerLive', {})).live).toBe(true);
    expect((await client.call<ServerReadyResponse>('ServerReady', {})).ready).toBe(true);
    // SERVING = 1.
    expect((await client.check<HealthCheckResponse>({ service: '' })).status).toBe(1);
  });

  it('ModelReady is true for a ready model and version, false (status OK) for unknown ones', async () => {
    expect((await client.call<ModelReadyResponse>('ModelReady', { name: 'simple' })).ready).toBe(true);
    expect(
      (await client.call<ModelReadyResponse>('ModelReady', { name: 'versioned', version: '2' })).ready,
    ).toBe(true);
    expect(
      (await client.call<ModelReadyResponse>('ModelReady', { name: 'versioned', version: '9' })).ready,
    ).toBe(false);
    expect((await client.call<ModelReadyResponse>('ModelReady', { name: 'nope' })).ready).toBe(false);
  });
});

describe('metadata and config', () => {
  it('ServerMetadata is the core’s', async () => {
    const m = await client.call<ServerMetadataResponse>('ServerMetadata', {});
    expect(m.name).toBe('triton');
    // The Triton release followed: 2.73.0 (NGC 26.09), as over HTTP.
    expect(m.version).toBe('2.73.0');
    expect(SERVER_VERSION).toBe('2.73.0');
    expect(m.extensions).toEqual([...SERVER_EXTENSIONS]);
  });

  it('ModelMetadata has the batch dimension as -1 and every ready version', async () => {
    const m = await client.call<ModelMetadataResponse>('ModelMetadata', { name: 'simple' });
    expect(m.name).toBe('simple');
    expect(m.platform).toBe('onnxruntime_onnx');
    expect(m.inputs.map((i) => [i.name, i.datatype, i.shape.map(Number)])).toEqual([
      ['INPUT0', 'INT32', [-1, 16]],
      ['INPUT1', 'INT32', [-1, 16]],
    ]);
    const v = await client.call<ModelMetadataResponse>('ModelMetadata', { name: 'versioned' });
    expect(v.versions).toEqual(['1', '2', '3']);
  });

  it('ModelConfig carries the typed inference.ModelConfig', async () => {
    const { config } = await client.call<ModelConfigResponse>('ModelConfig', { name: 'simple' });
    expect(config?.name).toBe('simple');
    expect(config?.maxBatchSize).toBe(8);
    expect(config?.input.map((i) => [i.name, i.dims.map(Number)])).toEqual([
      ['INPUT0', [16]],
      ['INPUT1', [16]],
    ]);
    // TYPE_INT32 = 8.
    expect(config?.output[0]?.dataType).toBe(8);
  });

  it('unknown model: INVALID_ARGUMENT with Triton’s message', async () => {
    const e = await grpcError(client.call('ModelMetadata', { name: 'nope' }));
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(e.details).toBe("Request for unknown model: 'nope' is not found");
  });

  it('unknown version: NOT_FOUND', async () => {
    const e = await grpcError(client.call('ModelConfig', { name: 'versioned', version: '7' }));
    expect(e.code).toBe(GrpcStatus.NOT_FOUND);
    expect(e.details).toBe("Request for unknown model: 'versioned' version 7 is not found");
  });
});

describe('ModelInfer', () => {
  it('answers raw_output_contents for raw inputs', async () => {
    const r = await client.call<ModelInferResponse>(
      'ModelInfer',
      simpleRequest(SIMPLE_A, SIMPLE_B, { id: 'r1' }),
    );
    expect(r.modelName).toBe('simple');
    expect(r.modelVersion).toBe('1');
    expect(r.id).toBe('r1');
    expect(r.outputs.map((o) => [o.name, o.datatype, o.shape.map(Number)])).toEqual([
      ['OUTPUT0', 'INT32', [1, 16]],
      ['OUTPUT1', 'INT32', [1, 16]],
    ]);
    expect(r.outputs.every((o) => o.contents === undefined)).toBe(true);
    expect(r.rawOutputContents).toHaveLength(2);
    expect(int32Values(r.rawOutputContents[0] as Uint8Array)).toEqual(
      SIMPLE_A.map((a, i) => a + (SIMPLE_B[i] ?? 0)),
    );
    expect(int32Values(r.rawOutputContents[1] as Uint8Array)).toEqual(
      SIMPLE_A.map((a, i) => a - (SIMPLE_B[i] ?? 0)),
    );
  });

  it('accepts typed contents and still answers raw (int_contents widened for INT8)', async () => {
    const r = await client.call<ModelInferResponse>('ModelInfer', {
      modelName: 'identity_int8',
      inputs: [
        { name: 'INPUT0', datatype: 'INT8', shape: [1n, 3n], contents: { intContents: [-5, 0, 127] } },
      ],
    });
    expect(r.outputs[0]?.datatype).toBe('INT8');
    expect(Array.from(new Int8Array(new Uint8Array(r.rawOutputContents[0] as Uint8Array).buffer))).toEqual([
      -5, 0, 127,
    ]);
    const s = await client.call<ModelInferResponse>('ModelInfer', {
      modelName: 'identity_string',
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'BYTES',
          shape: [1n, 2n],
          contents: { bytesContents: [Buffer.from('ab'), Buffer.from('')] },
        },
      ],
    });
    // BYTES raw output: 4-byte little-endian lengths before each element.
    expect(Buffer.from(s.rawOutputContents[0] as Uint8Array)).toEqual(
      Buffer.from([2, 0, 0, 0, 0x61, 0x62, 0, 0, 0, 0]),
    );
  });

  it('returns only the requested outputs, and classification as BYTES', async () => {
    const r = await client.call<ModelInferResponse>(
      'ModelInfer',
      simpleRequest(SIMPLE_A, SIMPLE_B, { outputs: [{ name: 'OUTPUT1' }] } as never),
    );
    expect(r.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
    const c = await client.call<ModelInferResponse>('ModelInfer', {
      modelName: 'classifier',
      inputs: [
        { name: 'input', datatype: 'FP32', shape: [1n, 5n], contents: { fp32Contents: [0, 0, 5, 0, 0] } },
      ],
      outputs: [
        {
          name: 'probs',
          parameters: { classification: { parameterChoice: { case: 'int64Param', value: 1n } } },
        },
      ],
    });
    expect(c.outputs[0]?.datatype).toBe('BYTES');
    const raw = Buffer.from(c.rawOutputContents[0] as Uint8Array);
    expect(raw.subarray(4).toString()).toMatch(/^[0-9.]+:2:Dessert$/);
  });

  it('counts gRPC inferences in the model statistics', async () => {
    const before = await client.call<ModelStatisticsResponse>('ModelStatistics', { name: 'simple_no_batch' });
    const count = before.modelStats[0]?.inferenceStats?.success?.count ?? 0n;
    for (let i = 0; i < 3; i++) {
      await client.call('ModelInfer', {
        modelName: 'simple_no_batch',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [16n] },
          { name: 'INPUT1', datatype: 'INT32', shape: [16n] },
        ],
        rawInputContents: [new Uint8Array(64), new Uint8Array(64)],
      });
    }
    const after = await client.call<ModelStatisticsResponse>('ModelStatistics', { name: 'simple_no_batch' });
    const s = after.modelStats[0];
    expect(s?.name).toBe('simple_no_batch');
    expect(s?.inferenceStats?.success?.count).toBe(count + 3n);
    expect(s?.inferenceCount).toBeGreaterThanOrEqual(3n);
    expect(s?.lastInference).toBeGreaterThan(0n);
    // The same counters over HTTP.
    const http = (await (await fetch(`${server.url}/v2/models/simple_no_batch/stats`)).json()) as {
      model_stats: { inference_stats: { success: { count: number } } }[];
    };
    expect(BigInt(http.model_stats[0]?.inference_stats.success.count ?? -1)).toBe(count + 3n);
    // And in the Prometheus metrics.
    const metrics = await (await fetch(server.running.metricsUrl as string)).text();
    const line = metrics
      .split('\n')
      .find((l) => l.startsWith('nv_inference_request_success{model="simple_no_batch",version="1"}'));
    expect(line?.split(' ').at(-1)).toBe(String(count + 3n));
  });
});

describe('ModelStreamInfer', () => {
  it('answers each request in order, keeps the stream open after a failed request', async () => {
    const { stream, answers, done } = client.collectingStream();
    stream.write(simpleRequest(SIMPLE_A, SIMPLE_B, { id: 'a' }));
    stream.write({ modelName: 'nope', id: 'b' });
    stream.write(simpleRequest(SIMPLE_B, SIMPLE_A, { id: 'c' }));
    stream.end();
    await done;
    expect(answers.map((a) => [a.errorMessage, a.inferResponse?.id])).toEqual([
      ['', 'a'],
      ["Request for unknown model: 'nope' is not found", 'b'],
      ['', 'c'],
    ]);
    const final = answers[0]?.inferResponse?.parameters.triton_final_response?.parameterChoice;
    expect(final).toEqual({ case: 'boolParam', value: true });
    expect(int32Values(answers[2]?.inferResponse?.rawOutputContents[0] as Uint8Array)).toEqual(
      SIMPLE_B.map((b, i) => b + (SIMPLE_A[i] ?? 0)),
    );
  });

  it('with triton_grpc_error: true the first failure ends the stream with its status', async () => {
    const metadata = new Metadata();
    metadata.set('triton_grpc_error', 'true');
    const stream = client.stream(metadata);
    const answers: ModelStreamInferResponse[] = [];
    stream.on('data', (m: ModelStreamInferResponse) => answers.push(m));
    const error = new Promise<{ code?: number; details?: string }>((resolve) => stream.on('error', resolve));
    stream.write(simpleRequest(SIMPLE_A, SIMPLE_B, { id: 'ok' }));
    stream.write({ modelName: 'nope', id: 'bad' });
    const e = await error;
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(e.details).toBe("Request for unknown model: 'nope' is not found");
    expect(answers.map((a) => a.inferResponse?.id)).toEqual(['ok']);
  });
});

describe('repository, settings and shared memory', () => {
  it('RepositoryIndex lists the models; load/unload are refused in none mode', async () => {
    const index = await client.call<RepositoryIndexResponse>('RepositoryIndex', { ready: true });
    expect(index.models.map((m) => m.name)).toContain('simple');
    expect(index.models.find((m) => m.name === 'simple')?.state).toBe('READY');
    const e = await grpcError(client.call('RepositoryModelLoad', { modelName: 'simple' }));
    expect(e.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(e.details).toBe('explicit model load / unload is not allowed if polling is enabled');
    const r = await grpcError(client.call('RepositoryIndex', { repositoryName: 'other' }));
    expect(r.code).toBe(GrpcStatus.UNIMPLEMENTED);
    expect(r.details).toBe("'repository_name' specification is not supported");
    const p = await grpcError(
      client.call('RepositoryModelLoad', {
        modelName: 'simple',
        parameters: { config: { parameterChoice: { case: 'bytesParam', value: new Uint8Array(1) } } },
      }),
    );
    expect(p.details).toBe("invalid value type for load parameter 'config', expected string_param.");
  });

  it('LogSettings reads and updates, with Triton’s gRPC type checks', async () => {
    const s = await client.call<LogSettingsResponse>('LogSettings', {
      settings: { log_verbose_level: { parameterChoice: { case: 'uint32Param', value: 0 } } },
    });
    expect(s.settings.log_info?.parameterChoice).toEqual({ case: 'boolParam', value: true });
    expect(s.settings.log_format?.parameterChoice).toEqual({ case: 'stringParam', value: 'default' });
    const e = await grpcError(
      client.call('LogSettings', {
        settings: { log_info: { parameterChoice: { case: 'stringParam', value: 'x' } } },
      }),
    );
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(e.details).toBe("expect boolean for 'log_info'");
    const f = await grpcError(
      client.call('LogSettings', {
        settings: { log_file: { parameterChoice: { case: 'stringParam', value: '/tmp/x' } } },
      }),
    );
    expect(f.code).toBe(GrpcStatus.UNIMPLEMENTED);
    expect(f.details).toBe('log file location can not be updated through network protocol');
  });

  it('TraceSetting reads the settings as value lists', async () => {
    const t = await client.call<TraceSettingResponse>('TraceSetting', {});
    expect(t.settings.trace_level?.value).toEqual(['OFF']);
    expect(t.settings.trace_rate?.value).toEqual(['1000']);
    const e = await grpcError(
      client.call('TraceSetting', { settings: { trace_rate: { value: ['1', '2'] } } }),
    );
    expect(e.details).toBe("expect only 1 value for 'trace_rate'");
    const m = await grpcError(client.call('TraceSetting', { modelName: 'nope' }));
    expect(m.details).toBe('Request for unknown model : nope');
    // As tritonserver's TraceSetting: keys it does not read (trace_mode included) and unknown level
    // names are ignored; trace_mode is reported as 'triton', as over HTTP.
    const ignored = await client.call<TraceSettingResponse>('TraceSetting', {
      settings: {
        trace_mode: { value: ['opentelemetry'] },
        trace_level: { value: ['LOUD'] },
        foo: { value: ['1', '2'] },
      },
    });
    expect(ignored.settings.trace_mode?.value).toEqual(['triton']);
    expect(ignored.settings.trace_level?.value).toEqual(['OFF']);
    expect(Object.keys(ignored.settings).sort()).toEqual(
      ['log_frequency', 'trace_count', 'trace_file', 'trace_level', 'trace_mode', 'trace_rate'].sort(),
    );
  });

  it('shared memory: status is empty, register refused without --allow-client-shm', async () => {
    const s = await client.call<SystemSharedMemoryStatusResponse>('SystemSharedMemoryStatus', {});
    expect(s.regions).toEqual({});
    const e = await grpcError(
      client.call('SystemSharedMemoryRegister', { name: 'r', key: '/r', offset: 0n, byteSize: 16n }),
    );
    expect(e.code).toBe(GrpcStatus.UNIMPLEMENTED);
    expect(e.details).toBe(
      "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.",
    );
  });
});
