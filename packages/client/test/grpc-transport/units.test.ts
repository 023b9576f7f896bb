/** The gRPC transport's pieces that need no server: addresses, channel options, metadata, conversions, statuses. */
import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  TritonConnectionError,
  TritonInvalidArgumentError,
  TritonProtocolError,
  TritonServerError,
} from '../../src/errors.js';
import {
  MAX_GRPC_MESSAGE_SIZE,
  channelOptionsFor,
  metadataFromHeaders,
  parseGrpcUrl,
  streamResponseFrom,
  tritonErrorFromGrpc,
} from '../../src/grpc/index.js';
import {
  logSettingsFromGrpc,
  logSettingsToGrpc,
  modelConfigFromGrpc,
  statisticsFromGrpc,
  traceSettingsFromGrpc,
  traceSettingsToGrpc,
} from '../../src/grpc/convert.js';
import {
  DataType,
  LogSettingsResponseSchema,
  ModelConfigSchema,
  ModelStatisticsResponseSchema,
  ModelStreamInferResponseSchema,
  TraceSettingResponseSchema,
  create,
} from '@tritonserver-ts/protocol/grpc';

describe('addresses and channel options', () => {
  it('parses host:port, grpc:// and grpcs:// urls with the default port 8001', () => {
    expect(parseGrpcUrl('localhost:8001')).toEqual({ target: 'localhost:8001', secure: false });
    expect(parseGrpcUrl('triton')).toEqual({ target: 'triton:8001', secure: false });
    expect(parseGrpcUrl('grpcs://triton.example:443')).toEqual({
      target: 'triton.example:443',
      secure: true,
    });
    expect(parseGrpcUrl('grpc://[::1]:9000')).toEqual({ target: '[::1]:9000', secure: false });
    expect(parseGrpcUrl('localhost:8001', true).secure).toBe(true);
    expect(() => parseGrpcUrl('http://localhost:8000')).toThrow(TritonInvalidArgumentError);
    expect(() => parseGrpcUrl('localhost:8001/v2')).toThrow(TritonInvalidArgumentError);
    expect(() => parseGrpcUrl('localhost:70000')).toThrow(TritonInvalidArgumentError);
  });

  it("message sizes default to 2^31 − 1 and keepalive to the Python client's, overridable by channel options", () => {
    expect(channelOptionsFor({ url: 'x' })).toEqual({
      'grpc.max_send_message_length': 2 ** 31 - 1,
      'grpc.max_receive_message_length': 2 ** 31 - 1,
      'grpc.keepalive_time_ms': 2 ** 31 - 1,
      'grpc.keepalive_timeout_ms': 20_000,
      'grpc.keepalive_permit_without_calls': 0,
      'grpc.http2.max_pings_without_data': 2,
    });
    expect(MAX_GRPC_MESSAGE_SIZE).toBe(2147483647);
    const options = channelOptionsFor({
      url: 'x',
      maxReceiveMessageLength: 1024,
      keepalive: { timeMs: 10_000, permitWithoutCalls: true },
      channelOptions: { 'grpc.keepalive_timeout_ms': 5000, 'grpc.primary_user_agent': 'me' },
    });
    expect(options).toMatchObject({
      'grpc.max_receive_message_length': 1024,
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.keepalive_timeout_ms': 5000,
      'grpc.primary_user_agent': 'me',
    });
  });

  it('headers become lower-case metadata; -bin values are base64 bytes; bad keys are refused', () => {
    const metadata = metadataFromHeaders({
      Authorization: 'Bearer t',
      'trace-bin': Buffer.from([1, 2]).toString('base64'),
    });
    expect(metadata.get('authorization')).toEqual(['Bearer t']);
    expect(metadata.get('trace-bin')).toEqual([Buffer.from([1, 2])]);
    expect(() => metadataFromHeaders({ 'bad key': 'x' })).toThrow(TritonInvalidArgumentError);
    const http = metadataFromHeaders({
      'Content-Type': 'application/json',
      'grpc-timeout': '1S',
      'x-id': '7',
    });
    expect(Object.keys(http.getMap())).toEqual(['x-id']);
  });
});

function serviceError(code: number, details: string, metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata });
}

describe('gRPC status → client errors', () => {
  const fromServer = (): Metadata => {
    const m = new Metadata();
    m.set('content-type', 'application/grpc');
    return m;
  };

  it('server statuses become TritonServerError with the HTTP equivalent and the message verbatim', () => {
    const cases: [number, number][] = [
      [GrpcStatus.INVALID_ARGUMENT, 400],
      [GrpcStatus.NOT_FOUND, 404],
      [GrpcStatus.INTERNAL, 500],
      [GrpcStatus.UNAVAILABLE, 503],
      [GrpcStatus.UNIMPLEMENTED, 501],
      [GrpcStatus.ALREADY_EXISTS, 400],
    ];
    for (const [code, http] of cases) {
      const error = tritonErrorFromGrpc(
        serviceError(code, "Request for unknown model: 'x' is not found", fromServer()),
        'call',
      );
      expect(error).toBeInstanceOf(TritonServerError);
      expect(error).toMatchObject({
        status: http,
        transport: 'grpc',
        message: "Request for unknown model: 'x' is not found",
      });
      expect((error.cause as ServiceError).code).toBe(code);
    }
  });

  it('UNAVAILABLE before any response is a connection error; client-side parse and size failures are typed', () => {
    expect(
      tritonErrorFromGrpc(serviceError(GrpcStatus.UNAVAILABLE, 'No connection established'), 'c'),
    ).toBeInstanceOf(TritonConnectionError);
    expect(tritonErrorFromGrpc(serviceError(GrpcStatus.UNAVAILABLE, 'x'), 'c', true)).toBeInstanceOf(
      TritonServerError,
    );
    expect(tritonErrorFromGrpc(serviceError(GrpcStatus.INTERNAL, 'Connection dropped'), 'c')).toBeInstanceOf(
      TritonConnectionError,
    );
    expect(
      tritonErrorFromGrpc(serviceError(GrpcStatus.INTERNAL, 'Response message parsing error: bad'), 'c'),
    ).toBeInstanceOf(TritonProtocolError);
    // Over this client's receive limit (even after the response headers came) vs. a server refusing a
    // request over its own limit, worded alike.
    const tooLarge = serviceError(
      GrpcStatus.RESOURCE_EXHAUSTED,
      'Received message larger than max (9 vs 8)',
      fromServer(),
    );
    expect(tritonErrorFromGrpc(tooLarge, 'c', true, { maxReceiveMessageLength: 8 })).toBeInstanceOf(
      TritonProtocolError,
    );
    expect(tritonErrorFromGrpc(tooLarge, 'c', true, { maxReceiveMessageLength: 1024 })).toMatchObject({
      status: 429,
      transport: 'grpc',
    });
    expect(
      tritonErrorFromGrpc(
        serviceError(GrpcStatus.RESOURCE_EXHAUSTED, 'Attempted to send message with a size larger than 8'),
        'c',
      ),
    ).toBeInstanceOf(TritonInvalidArgumentError);
  });
});

describe('management conversions', () => {
  it("model config JSON: proto names, defaults printed, enums by name, Triton's number fields as numbers", () => {
    const json = modelConfigFromGrpc(
      create(ModelConfigSchema, {
        name: 'food',
        maxBatchSize: 8,
        input: [{ name: 'image', dataType: DataType.TYPE_FP32, dims: [3n, 224n, 224n] }],
        output: [{ name: 'logits', dataType: DataType.TYPE_FP32, dims: [-1n] }],
        schedulingChoice: {
          case: 'dynamicBatching',
          value: { maxQueueDelayMicroseconds: 100n, priorityLevels: 2n },
        },
      }),
    );
    expect(json).toMatchObject({
      name: 'food',
      platform: '',
      max_batch_size: 8,
      input: [
        {
          name: 'image',
          data_type: 'TYPE_FP32',
          format: 'FORMAT_NONE',
          dims: [3, 224, 224],
          optional: false,
        },
      ],
      output: [{ name: 'logits', data_type: 'TYPE_FP32', dims: [-1] }],
      // Numbers where Triton prints numbers; other 64-bit fields stay strings, as in Triton's JSON.
      dynamic_batching: { max_queue_delay_microseconds: 100, priority_levels: '2' },
      instance_group: [],
      parameters: {},
    });
    expect(json).not.toHaveProperty('sequence_batching');
  });

  it('statistics: exact counters (bigint beyond 2^53 − 1), zeros for missing durations', () => {
    const stats = statisticsFromGrpc(
      create(ModelStatisticsResponseSchema, {
        modelStats: [
          {
            name: 'm',
            version: '1',
            inferenceCount: 2n ** 60n,
            inferenceStats: { success: { count: 3n, ns: 9n } },
          },
        ],
      }),
    );
    expect(stats.model_stats[0]).toMatchObject({
      name: 'm',
      inference_count: 2n ** 60n,
      execution_count: 0,
      inference_stats: { success: { count: 3, ns: 9 }, queue: { count: 0, ns: 0 } },
      batch_stats: [],
    });
  });

  it('trace and log settings both ways', () => {
    expect(
      traceSettingsFromGrpc(
        create(TraceSettingResponseSchema, {
          settings: {
            trace_level: { value: ['TIMESTAMPS'] },
            trace_rate: { value: ['1000'] },
            trace_file: { value: [] },
          },
        }),
      ),
    ).toEqual({ trace_level: ['TIMESTAMPS'], trace_rate: '1000', trace_file: [] });
    expect(traceSettingsToGrpc({ trace_rate: 10, trace_level: ['TENSORS'], trace_file: null })).toEqual({
      trace_rate: { value: ['10'] },
      trace_level: { value: ['TENSORS'] },
      trace_file: { value: [] },
    });
    const request = logSettingsToGrpc({ log_info: true, log_verbose_level: 2, log_format: 'ISO8601' });
    expect(Object.fromEntries(Object.entries(request).map(([k, v]) => [k, v.parameterChoice]))).toEqual({
      log_info: { case: 'boolParam', value: true },
      log_verbose_level: { case: 'uint32Param', value: 2 },
      log_format: { case: 'stringParam', value: 'ISO8601' },
    });
    expect(() => logSettingsToGrpc({ log_verbose_level: -1 })).toThrow(TritonInvalidArgumentError);
    expect(
      logSettingsFromGrpc(
        create(LogSettingsResponseSchema, {
          settings: { log_error: { parameterChoice: { case: 'boolParam', value: false } } },
        }),
      ),
    ).toEqual({ log_error: false });
  });
});

describe('stream responses', () => {
  it('in-band errors, triton_final_response and empty final responses', () => {
    const error = streamResponseFrom(
      create(ModelStreamInferResponseSchema, {
        errorMessage: 'in-band failure',
        inferResponse: { id: 'r7' },
      }),
    );
    expect(error.error).toBeInstanceOf(TritonServerError);
    expect(error).toMatchObject({ id: 'r7', result: undefined, final: true });
    // A decoupled model's error for one response, more to follow: its final flag is kept.
    const errorNotFinal = streamResponseFrom(
      create(ModelStreamInferResponseSchema, {
        errorMessage: 'one response failed',
        inferResponse: {
          id: 'r8',
          parameters: { triton_final_response: { parameterChoice: { case: 'boolParam', value: false } } },
        },
      }),
    );
    expect(errorNotFinal).toMatchObject({ id: 'r8', result: undefined, final: false });
    expect(errorNotFinal.error?.message).toBe('one response failed');
    const notFinal = streamResponseFrom(
      create(ModelStreamInferResponseSchema, {
        inferResponse: {
          id: 'r1',
          modelName: 'm',
          parameters: { triton_final_response: { parameterChoice: { case: 'boolParam', value: false } } },
          outputs: [{ name: 'Y', datatype: 'INT32', shape: [1n] }],
          rawOutputContents: [new Uint8Array(new Int32Array([5]).buffer)],
        },
      }),
    );
    expect(notFinal).toMatchObject({ id: 'r1', final: false, empty: false });
    expect(notFinal.result?.asTypedArray('Y', 'INT32')).toEqual(new Int32Array([5]));
    const emptyFinal = streamResponseFrom(
      create(ModelStreamInferResponseSchema, {
        inferResponse: {
          id: 'r1',
          parameters: { triton_final_response: { parameterChoice: { case: 'boolParam', value: true } } },
        },
      }),
    );
    expect(emptyFinal).toMatchObject({ final: true, empty: true });
  });
});
