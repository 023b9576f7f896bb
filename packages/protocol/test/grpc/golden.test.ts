/**
 * Golden protobuf vectors: our encodings of representative requests and responses must be byte for
 * byte those of Google's protobuf (Python, compiled from the same .proto files at test time), and
 * responses parse back through our converters to what was sent (requests are read by the embedded
 * server's decoder, tested in packages/server/test/grpc/infer-request.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CudaSharedMemoryRegisterRequestSchema,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus,
  LogSettingsResponseSchema,
  ModelConfigResponseSchema,
  ModelInferRequestSchema,
  ModelInferResponseSchema,
  ModelStatisticsResponseSchema,
  ModelStreamInferResponseSchema,
  RepositoryModelLoadRequestSchema,
  SystemSharedMemoryStatusResponseSchema,
  TraceSettingRequestSchema,
  DataType,
  ModelInput_Format,
  ModelInstanceGroup_Kind,
  ModelQueuePolicy_TimeoutAction,
  decodeMessage,
  encodeMessage,
  fromModelInferResponse,
  healthServiceDefinition,
  serviceDefinition,
  toModelInferRequest,
} from '../../src/grpc/index.js';
import { toModelInferResponse } from './model-infer-response.js';
import {
  SEQUENCE_REQUEST,
  SIMPLE_INPUT0,
  SIMPLE_INPUT1,
  SIMPLE_REQUEST,
  TYPED_REQUEST,
} from '../../src/testing/index.js';
import { startOracle, type OracleAnswer, type OracleCase } from './oracle.js';

type Oracle = ReturnType<typeof startOracle>;
let oracle: Oracle;
beforeAll(() => {
  oracle = startOracle();
});
afterAll(() => oracle.close());

function b64(data: ArrayBufferView | string): string {
  return typeof data === 'string'
    ? Buffer.from(data, 'utf8').toString('base64')
    : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
}

/** A BYTES tensor in raw layout: 4-byte little-endian length before each element. */
function bytesTensor(...elements: Uint8Array[]): Buffer {
  return Buffer.concat(
    elements.flatMap((e) => {
      const n = Buffer.alloc(4);
      n.writeUInt32LE(e.byteLength);
      return [n, Buffer.from(e)];
    }),
  );
}

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

function ask(c: OracleCase): OracleAnswer {
  const [answer] = oracle.run([c]);
  if (answer === undefined) throw new Error('no answer from the oracle');
  return answer;
}

/** Byte-exact: our bytes equal Google's for the same message. */
function expectExact(c: OracleCase): OracleAnswer {
  const answer = ask(c);
  expect(answer.equal, JSON.stringify(answer.tsAsJson)).toBe(true);
  expect(Buffer.from(c.tsBytes).toString('hex')).toBe(answer.expected.toString('hex'));
  return answer;
}

/**
 * Messages with several map entries: protobuf leaves the order of map entries open, so the bytes are
 * compared after Google re-encodes ours in its (key) order, and the messages must be equal.
 */
function expectEqualMessage(c: OracleCase): OracleAnswer {
  const answer = ask(c);
  expect(answer.equal, JSON.stringify(answer.tsAsJson)).toBe(true);
  expect(answer.tsReencoded.toString('hex')).toBe(answer.expected.toString('hex'));
  return answer;
}

describe('ModelInferRequest (client → server)', () => {
  const input0 = SIMPLE_INPUT0;
  const input1 = SIMPLE_INPUT1;

  it("the 'simple' request: raw INT32 inputs in input order, requested outputs, id and version", () => {
    const message = toModelInferRequest(SIMPLE_REQUEST);
    // The raw entries are views of the callers' arrays (no copy before encoding).
    expect(message.rawInputContents[0]?.buffer).toBe(input0.buffer);
    const bytes = encodeMessage(ModelInferRequestSchema, message);
    expectExact({
      type: 'inference.ModelInferRequest',
      tsBytes: bytes,
      json: {
        model_name: 'simple',
        model_version: '1',
        id: 'req-1',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: ['1', '16'] },
          { name: 'INPUT1', datatype: 'INT32', shape: ['1', '16'] },
        ],
        outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1' }],
        raw_input_contents: [b64(input0), b64(input1)],
      },
    });
    // The same sample (src/testing) is decoded by the server's reader: packages/server/test/grpc/infer-request.test.ts.
  });

  it('the food model request: one 602,112-byte FP32 raw input, byte-exact', () => {
    const image = Float32Array.from({ length: 3 * 224 * 224 }, (_, i) => (i % 251) / 251);
    const message = toModelInferRequest({
      modelName: 'food',
      inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 224, 224], data: image }],
    });
    const bytes = encodeMessage(ModelInferRequestSchema, message);
    expect(message.rawInputContents[0]?.byteLength).toBe(602_112);
    expectExact({
      type: 'inference.ModelInferRequest',
      tsBytes: bytes,
      json: {
        model_name: 'food',
        inputs: [{ name: 'image', datatype: 'FP32', shape: ['1', '3', '224', '224'] }],
        raw_input_contents: [b64(image)],
      },
    });
    // Decoding leaves the raw entry a view into the received bytes.
    const back = decodeMessage(ModelInferRequestSchema, bytes);
    expect(back.rawInputContents[0]?.buffer).toBe(bytes.buffer);
  });

  it('priority travels as uint64 and timeout as int64, as the Python client sends them', () => {
    const message = toModelInferRequest({
      modelName: 'm',
      inputs: [{ name: 'X', datatype: 'UINT8', shape: [2], data: new Uint8Array([7, 8]) }],
      request: { priority: 2n ** 64n - 1n },
    });
    expectExact({
      type: 'inference.ModelInferRequest',
      tsBytes: encodeMessage(ModelInferRequestSchema, message),
      json: {
        model_name: 'm',
        parameters: { priority: { uint64_param: '18446744073709551615' } },
        inputs: [{ name: 'X', datatype: 'UINT8', shape: ['2'] }],
        raw_input_contents: [b64(new Uint8Array([7, 8]))],
      },
    });
    const timeout = toModelInferRequest({ modelName: 'm', inputs: [], request: { timeout: 1000 } });
    expectExact({
      type: 'inference.ModelInferRequest',
      tsBytes: encodeMessage(ModelInferRequestSchema, timeout),
      json: { model_name: 'm', parameters: { timeout: { int64_param: '1000' } } },
    });
  });

  it('sequence, custom parameters, a BYTES raw input, a shared-memory input, classification and shared-memory outputs', () => {
    const message = toModelInferRequest(SEQUENCE_REQUEST);
    const bytes = encodeMessage(ModelInferRequestSchema, message);
    expectEqualMessage({
      type: 'inference.ModelInferRequest',
      tsBytes: bytes,
      json: {
        model_name: 'seq',
        parameters: {
          sequence_id: { int64_param: '42' },
          sequence_start: { bool_param: true },
          sequence_end: { bool_param: false },
          custom_s: { string_param: 'x' },
          custom_b: { bool_param: true },
          custom_i: { int64_param: '-5' },
          custom_f: { double_param: 0.25 },
          custom_big: { uint64_param: '9223372036854775809' },
        },
        inputs: [
          { name: 'TEXT', datatype: 'BYTES', shape: ['2'] },
          {
            name: 'IMG',
            datatype: 'UINT8',
            shape: ['4'],
            parameters: {
              shared_memory_region: { string_param: 'r0' },
              shared_memory_byte_size: { int64_param: '4' },
              shared_memory_offset: { int64_param: '16' },
            },
          },
        ],
        outputs: [
          { name: 'SCORES', parameters: { classification: { int64_param: '3' } } },
          {
            name: 'EMB',
            parameters: {
              shared_memory_region: { string_param: 'r1' },
              shared_memory_byte_size: { int64_param: '64' },
            },
          },
        ],
        // Only the input that is not in shared memory has a raw entry.
        raw_input_contents: [bytesTensor(utf8('ab'), utf8('ü')).toString('base64')],
      },
    });
    // The same sample (src/testing) is decoded by the server's reader: packages/server/test/grpc/infer-request.test.ts.
  });

  it('a string sequence id travels as string_param', () => {
    const message = toModelInferRequest({
      modelName: 'seq',
      inputs: [],
      request: { sequenceId: 'corr-7', sequenceEnd: true },
    });
    expectEqualMessage({
      type: 'inference.ModelInferRequest',
      tsBytes: encodeMessage(ModelInferRequestSchema, message),
      json: {
        model_name: 'seq',
        parameters: {
          sequence_id: { string_param: 'corr-7' },
          sequence_start: { bool_param: false },
          sequence_end: { bool_param: true },
        },
      },
    });
  });

  it('typed contents: INT8/INT16 widened to int_contents, UINT8/UINT16 to uint_contents, 64-bit exact, BYTES and BOOL', () => {
    const message = toModelInferRequest(TYPED_REQUEST);
    const bytes = encodeMessage(ModelInferRequestSchema, message);
    expectExact({
      type: 'inference.ModelInferRequest',
      tsBytes: bytes,
      json: {
        model_name: 'typed',
        inputs: [
          { name: 'I8', datatype: 'INT8', shape: ['3'], contents: { int_contents: [-128, 0, 127] } },
          { name: 'I16', datatype: 'INT16', shape: ['2'], contents: { int_contents: [-32768, 32767] } },
          { name: 'U8', datatype: 'UINT8', shape: ['2'], contents: { uint_contents: [0, 255] } },
          { name: 'U16', datatype: 'UINT16', shape: ['2'], contents: { uint_contents: [0, 65535] } },
          { name: 'I32', datatype: 'INT32', shape: ['1'], contents: { int_contents: [-2147483648] } },
          { name: 'U32', datatype: 'UINT32', shape: ['1'], contents: { uint_contents: [4294967295] } },
          {
            name: 'I64',
            datatype: 'INT64',
            shape: ['2'],
            contents: { int64_contents: ['9223372036854775807', '-9223372036854775808'] },
          },
          {
            name: 'U64',
            datatype: 'UINT64',
            shape: ['1'],
            contents: { uint64_contents: ['18446744073709551615'] },
          },
          { name: 'B', datatype: 'BOOL', shape: ['2'], contents: { bool_contents: [true, false] } },
          { name: 'F32', datatype: 'FP32', shape: ['1'], contents: { fp32_contents: [1.5] } },
          { name: 'F64', datatype: 'FP64', shape: ['2'], contents: { fp64_contents: [0.5, -1e300] } },
          {
            name: 'S',
            datatype: 'BYTES',
            shape: ['2'],
            contents: { bytes_contents: [b64('a'), b64(new Uint8Array([0xff, 0]))] },
          },
        ],
      },
    });
    // The same sample (src/testing) is decoded by the server's reader: packages/server/test/grpc/infer-request.test.ts.
  });
});

describe('ModelInferResponse (server → client)', () => {
  it('every output raw in output order; an output in shared memory keeps an empty entry', () => {
    const out = new Float32Array([1, 2, 3, 4]);
    const message = toModelInferResponse({
      modelName: 'm',
      modelVersion: '1',
      id: 'req-1',
      outputs: [
        { tensor: { name: 'OUT', datatype: 'FP32', shape: [2, 2], data: out }, binary: true },
        { tensor: { name: 'TXT', datatype: 'BYTES', shape: [1], data: [utf8('hi')] }, binary: false },
        {
          tensor: { name: 'SHM', datatype: 'FP32', shape: [4], data: new Float32Array(4) },
          binary: false,
          omitData: true,
          parameters: { shared_memory_region: 'r1', shared_memory_byte_size: 16 },
        },
      ],
    });
    expect(message.rawOutputContents[0]?.buffer).toBe(out.buffer);
    const bytes = encodeMessage(ModelInferResponseSchema, message);
    const answer = expectEqualMessage({
      type: 'inference.ModelInferResponse',
      tsBytes: bytes,
      json: {
        model_name: 'm',
        model_version: '1',
        id: 'req-1',
        outputs: [
          { name: 'OUT', datatype: 'FP32', shape: ['2', '2'] },
          { name: 'TXT', datatype: 'BYTES', shape: ['1'] },
          {
            name: 'SHM',
            datatype: 'FP32',
            shape: ['4'],
            parameters: {
              shared_memory_region: { string_param: 'r1' },
              shared_memory_byte_size: { int64_param: '16' },
            },
          },
        ],
        raw_output_contents: [b64(out), bytesTensor(utf8('hi')).toString('base64'), ''],
      },
    });
    // The client reads Google's bytes.
    const decoded = fromModelInferResponse(decodeMessage(ModelInferResponseSchema, answer.expected));
    expect({ ...decoded, outputs: decoded.outputs.map(({ data: _data, ...o }) => o) }).toEqual({
      modelName: 'm',
      modelVersion: '1',
      id: 'req-1',
      parameters: {},
      outputs: [
        { name: 'OUT', datatype: 'FP32', shape: [2, 2], parameters: {} },
        { name: 'TXT', datatype: 'BYTES', shape: [1], parameters: {} },
        {
          name: 'SHM',
          datatype: 'FP32',
          shape: [4],
          parameters: { shared_memory_region: 'r1', shared_memory_byte_size: 16 },
        },
      ],
    });
    expect(Array.from(decoded.outputs[0]?.data as Float32Array)).toEqual([1, 2, 3, 4]);
    expect(decoded.outputs[0]?.shape).toEqual([2, 2]);
    expect((decoded.outputs[1]?.data as Uint8Array[]).map((e) => Buffer.from(e).toString())).toEqual(['hi']);
    expect(decoded.outputs[2]?.data).toBeUndefined();
  });

  it('a plain response, byte-exact; typed contents from a KServe-style server are read too', () => {
    const message = toModelInferResponse({
      modelName: 'm',
      modelVersion: '',
      outputs: [
        {
          tensor: { name: 'Y', datatype: 'INT64', shape: [1], data: new BigInt64Array([-1n]) },
          binary: true,
        },
      ],
    });
    expectExact({
      type: 'inference.ModelInferResponse',
      tsBytes: encodeMessage(ModelInferResponseSchema, message),
      json: {
        model_name: 'm',
        outputs: [{ name: 'Y', datatype: 'INT64', shape: ['1'] }],
        raw_output_contents: [b64(new BigInt64Array([-1n]))],
      },
    });
    const typed = encodeMessage(ModelInferResponseSchema, {
      modelName: 'kserve',
      outputs: [
        { name: 'A', datatype: 'UINT8', shape: [2n], contents: { uintContents: [1, 255] } },
        { name: 'B', datatype: 'INT16', shape: [1n], contents: { intContents: [-2] } },
      ],
    });
    const decoded = fromModelInferResponse(decodeMessage(ModelInferResponseSchema, typed));
    expect(decoded.outputs[0]?.data).toEqual(new Uint8Array([1, 255]));
    expect(decoded.outputs[1]?.data).toEqual(new Int16Array([-2]));
  });

  it('ModelStreamInferResponse with an in-band error', () => {
    expectExact({
      type: 'inference.ModelStreamInferResponse',
      tsBytes: encodeMessage(ModelStreamInferResponseSchema, {
        errorMessage: 'boom',
        inferResponse: { modelName: 'm', modelVersion: '1', id: 'x' },
      }),
      json: { error_message: 'boom', infer_response: { model_name: 'm', model_version: '1', id: 'x' } },
    });
  });
});

describe('management messages', () => {
  it('statistics: uint64 counters beyond 2^53 stay exact', () => {
    const bytes = encodeMessage(ModelStatisticsResponseSchema, {
      modelStats: [
        {
          name: 'm',
          version: '1',
          lastInference: 2n ** 64n - 1n,
          inferenceCount: 2n ** 53n + 1n,
          executionCount: 1n,
          inferenceStats: { success: { count: 1n, ns: 2n ** 63n } },
          batchStats: [{ batchSize: 1n, computeInfer: { count: 1n, ns: 5n } }],
          memoryUsage: [{ type: 'CPU', id: -1n, byteSize: 10n }],
          responseStats: { '0': { success: { count: 1n, ns: 2n } } },
        },
      ],
    });
    expectExact({
      type: 'inference.ModelStatisticsResponse',
      tsBytes: bytes,
      json: {
        model_stats: [
          {
            name: 'm',
            version: '1',
            last_inference: '18446744073709551615',
            inference_count: '9007199254740993',
            execution_count: '1',
            inference_stats: { success: { count: '1', ns: '9223372036854775808' } },
            batch_stats: [{ batch_size: '1', compute_infer: { count: '1', ns: '5' } }],
            memory_usage: [{ type: 'CPU', id: '-1', byte_size: '10' }],
            response_stats: { '0': { success: { count: '1', ns: '2' } } },
          },
        ],
      },
    });
    const back = decodeMessage(ModelStatisticsResponseSchema, bytes);
    expect(back.modelStats[0]?.lastInference).toBe(2n ** 64n - 1n);
    expect(back.modelStats[0]?.inferenceCount).toBe(2n ** 53n + 1n);
  });

  it('model config: enums, oneofs, a uint64-keyed map, negative dims', () => {
    expectExact({
      type: 'inference.ModelConfigResponse',
      tsBytes: encodeMessage(ModelConfigResponseSchema, {
        config: {
          name: 'food',
          backend: 'onnxruntime',
          versionPolicy: { policyChoice: { case: 'specific', value: { versions: [1n, 3n] } } },
          maxBatchSize: 8,
          input: [
            {
              name: 'image',
              dataType: DataType.TYPE_FP32,
              format: ModelInput_Format.NCHW,
              dims: [3n, 224n, 224n],
            },
          ],
          output: [{ name: 'logits', dataType: DataType.TYPE_FP32, dims: [-1n] }],
          schedulingChoice: {
            case: 'dynamicBatching',
            value: {
              preferredBatchSize: [4, 8],
              maxQueueDelayMicroseconds: 100n,
              priorityQueuePolicy: {
                '1': { timeoutAction: ModelQueuePolicy_TimeoutAction.DELAY, maxQueueSize: 3 },
              },
            },
          },
          instanceGroup: [{ count: 2, kind: ModelInstanceGroup_Kind.CPU }],
          parameters: { k: { stringValue: 'v' } },
          modelTransactionPolicy: { decoupled: true },
        },
      }),
      json: {
        config: {
          name: 'food',
          backend: 'onnxruntime',
          version_policy: { specific: { versions: ['1', '3'] } },
          max_batch_size: 8,
          input: [
            { name: 'image', data_type: 'TYPE_FP32', format: 'FORMAT_NCHW', dims: ['3', '224', '224'] },
          ],
          output: [{ name: 'logits', data_type: 'TYPE_FP32', dims: ['-1'] }],
          dynamic_batching: {
            preferred_batch_size: [4, 8],
            max_queue_delay_microseconds: '100',
            priority_queue_policy: { '1': { timeout_action: 'DELAY', max_queue_size: 3 } },
          },
          instance_group: [{ count: 2, kind: 'KIND_CPU' }],
          parameters: { k: { string_value: 'v' } },
          model_transaction_policy: { decoupled: true },
        },
      },
    });
  });

  it('repository, shared memory, trace, log and health messages', () => {
    const handle = Uint8Array.from({ length: 64 }, (_, i) => i);
    const cases: OracleCase[] = [
      {
        type: 'inference.RepositoryModelLoadRequest',
        tsBytes: encodeMessage(RepositoryModelLoadRequestSchema, {
          modelName: 'm',
          parameters: {
            'file:1/model.onnx': { parameterChoice: { case: 'bytesParam', value: utf8('onnx') } },
          },
        }),
        json: { model_name: 'm', parameters: { 'file:1/model.onnx': { bytes_param: b64('onnx') } } },
      },
      {
        type: 'inference.CudaSharedMemoryRegisterRequest',
        tsBytes: encodeMessage(CudaSharedMemoryRegisterRequestSchema, {
          name: 'c',
          rawHandle: handle,
          deviceId: 0n,
          byteSize: 1024n,
        }),
        json: { name: 'c', raw_handle: b64(handle), device_id: '0', byte_size: '1024' },
      },
      {
        type: 'inference.SystemSharedMemoryStatusResponse',
        tsBytes: encodeMessage(SystemSharedMemoryStatusResponseSchema, {
          regions: { r0: { name: 'r0', key: '/shm0', offset: 2n ** 64n - 1n, byteSize: 64n } },
        }),
        json: {
          regions: { r0: { name: 'r0', key: '/shm0', offset: '18446744073709551615', byte_size: '64' } },
        },
      },
      {
        type: 'inference.TraceSettingRequest',
        tsBytes: encodeMessage(TraceSettingRequestSchema, {
          settings: { trace_level: { value: ['TIMESTAMPS', 'TENSORS'] } },
          modelName: 'm',
        }),
        json: { settings: { trace_level: { value: ['TIMESTAMPS', 'TENSORS'] } }, model_name: 'm' },
      },
      {
        type: 'inference.LogSettingsResponse',
        tsBytes: encodeMessage(LogSettingsResponseSchema, {
          settings: { log_verbose_level: { parameterChoice: { case: 'uint32Param', value: 1 } } },
        }),
        json: { settings: { log_verbose_level: { uint32_param: 1 } } },
      },
      {
        type: 'grpc.health.v1.HealthCheckResponse',
        tsBytes: encodeMessage(HealthCheckResponseSchema, {
          status: HealthCheckResponse_ServingStatus.SERVING,
        }),
        json: { status: 'SERVING' },
      },
    ];
    const answers = oracle.run(cases);
    cases.forEach((c, i) => {
      expect(answers[i]?.equal, c.type).toBe(true);
      expect(Buffer.from(c.tsBytes).toString('hex'), c.type).toBe(answers[i]?.expected.toString('hex'));
    });
  });
});

describe('service definitions', () => {
  it('every RPC of both services with the paths, message types and stream flags of the .proto files', () => {
    const ours = [...Object.values(serviceDefinition), ...Object.values(healthServiceDefinition)].map(
      (m) => ({
        path: m.path,
        input: m.requestSchema.typeName,
        output: m.responseSchema.typeName,
        client_streaming: m.requestStream,
        server_streaming: m.responseStream,
      }),
    );
    expect(ours).toEqual(oracle.services());
    expect(ours).toHaveLength(21);
    expect(serviceDefinition.ModelStreamInfer).toMatchObject({
      path: '/inference.GRPCInferenceService/ModelStreamInfer',
      requestStream: true,
      responseStream: true,
      originalName: 'modelStreamInfer',
    });
  });

  it('serializers give Buffers over the encoded bytes and decode what they encode', () => {
    const def = serviceDefinition.ModelReady;
    const buf = def.requestSerialize({ name: 'm', version: '2' });
    expect(Buffer.isBuffer(buf)).toBe(true);
    expect(def.requestDeserialize(buf)).toMatchObject({ name: 'm', version: '2' });
    const live = serviceDefinition.ServerLive.responseSerialize({ live: true });
    expect(live.toString('hex')).toBe('0801');
  });
});
