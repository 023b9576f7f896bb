/**
 * Sample `ModelInferRequest`s, as the arguments of `toModelInferRequest`: the client's golden
 * protobuf vectors (`test/grpc-protocol/golden.test.ts`) encode them, and the embedded server's
 * decoder tests (`packages/server/test/grpc/infer-request.test.ts`) read them back, so both ends
 * are checked on the same requests. Test data only: no I/O, nothing else imported at run time.
 * @packageDocumentation
 */
import type { GrpcInferCall } from '../grpc/infer-request.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** `simple`'s first input: 0..15. */
export const SIMPLE_INPUT0: Int32Array = Int32Array.from({ length: 16 }, (_, i) => i);
/** `simple`'s second input: 16 ones. */
export const SIMPLE_INPUT1: Int32Array = new Int32Array(16).fill(1);

/** The `simple` request: raw INT32 inputs in input order, requested outputs, id and version. */
export const SIMPLE_REQUEST: GrpcInferCall = {
  modelName: 'simple',
  modelVersion: '1',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: SIMPLE_INPUT0 },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: SIMPLE_INPUT1 },
  ],
  request: { requestId: 'req-1', outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1' }] },
};

/**
 * Sequence and custom parameters (one a bigint past int64, sent as uint64), a BYTES raw input, a
 * shared-memory input, a classification output and a shared-memory output.
 */
export const SEQUENCE_REQUEST: GrpcInferCall = {
  modelName: 'seq',
  inputs: [
    { name: 'TEXT', datatype: 'BYTES', shape: [2], data: ['ab', 'ü'] },
    { name: 'IMG', datatype: 'UINT8', shape: [4], sharedMemory: { region: 'r0', byteSize: 4, offset: 16 } },
  ],
  request: {
    sequenceId: 42,
    sequenceStart: true,
    sequenceEnd: false,
    parameters: {
      custom_s: 'x',
      custom_b: true,
      custom_i: -5,
      custom_f: 0.25,
      custom_big: 2n ** 63n + 1n,
    },
    outputs: [
      { name: 'SCORES', classCount: 3 },
      { name: 'EMB', sharedMemory: { region: 'r1', byteSize: 64 } },
    ],
  },
};

/** Every datatype sent as typed `contents` (`binaryData: false`), with each type's extremes. */
export const TYPED_REQUEST: GrpcInferCall = {
  modelName: 'typed',
  inputs: [
    { name: 'I8', datatype: 'INT8', shape: [3], data: new Int8Array([-128, 0, 127]) },
    { name: 'I16', datatype: 'INT16', shape: [2], data: new Int16Array([-32768, 32767]) },
    { name: 'U8', datatype: 'UINT8', shape: [2], data: new Uint8Array([0, 255]) },
    { name: 'U16', datatype: 'UINT16', shape: [2], data: new Uint16Array([0, 65535]) },
    { name: 'I32', datatype: 'INT32', shape: [1], data: new Int32Array([-2147483648]) },
    { name: 'U32', datatype: 'UINT32', shape: [1], data: new Uint32Array([4294967295]) },
    { name: 'I64', datatype: 'INT64', shape: [2], data: new BigInt64Array([2n ** 63n - 1n, -(2n ** 63n)]) },
    { name: 'U64', datatype: 'UINT64', shape: [1], data: new BigUint64Array([2n ** 64n - 1n]) },
    { name: 'B', datatype: 'BOOL', shape: [2], data: [true, false] },
    { name: 'F32', datatype: 'FP32', shape: [1], data: new Float32Array([1.5]) },
    { name: 'F64', datatype: 'FP64', shape: [2], data: new Float64Array([0.5, -1e300]) },
    { name: 'S', datatype: 'BYTES', shape: [2], data: [utf8('a'), new Uint8Array([0xff, 0])] },
  ],
  request: { binaryData: false },
};
