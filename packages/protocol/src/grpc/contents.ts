/**
 * Typed tensor values (`InferTensorContents`) ↔ the codec's {@link TensorData}. Small integer types
 * travel widened: INT8/INT16 in `int_contents`, UINT8/UINT16 in `uint_contents`. FP16 and BF16 have
 * no typed form and can only travel raw.
 * @packageDocumentation
 */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import type { Datatype, TensorData } from '../datatypes.js';
import { ProtocolError } from '../errors.js';
import { InferTensorContentsSchema, type InferTensorContents } from './gen/grpc_service_pb.js';

type Init = MessageInitShape<typeof InferTensorContentsSchema>;

function noTypedForm(datatype: Datatype, what: string): ProtocolError {
  return new ProtocolError(
    'DATATYPE_NOT_JSON',
    `${what}: datatype ${datatype} has no typed contents in the gRPC protocol; send it raw`,
  );
}

/**
 * The typed `contents` of tensor data (values are copied into plain arrays, as protobuf repeated
 * fields are).
 * @throws ProtocolError `DATATYPE_NOT_JSON` for FP16 and BF16.
 */
export function toTensorContents(datatype: Datatype, data: TensorData, what = 'tensor'): InferTensorContents {
  let init: Init;
  switch (datatype) {
    case 'BOOL':
      init = { boolContents: Array.from(data as Uint8Array, (v) => v !== 0) };
      break;
    case 'UINT8':
    case 'UINT16':
    case 'UINT32':
      init = { uintContents: Array.from(data as Uint8Array | Uint16Array | Uint32Array) };
      break;
    case 'INT8':
    case 'INT16':
    case 'INT32':
      init = { intContents: Array.from(data as Int8Array | Int16Array | Int32Array) };
      break;
    case 'INT64':
      init = { int64Contents: Array.from(data as BigInt64Array) };
      break;
    case 'UINT64':
      init = { uint64Contents: Array.from(data as BigUint64Array) };
      break;
    case 'FP32':
      init = { fp32Contents: Array.from(data as Float32Array) };
      break;
    case 'FP64':
      init = { fp64Contents: Array.from(data as Float64Array) };
      break;
    case 'BYTES':
      init = { bytesContents: data as Uint8Array[] };
      break;
    case 'FP16':
    case 'BF16':
      throw noTypedForm(datatype, what);
  }
  return create(InferTensorContentsSchema, init);
}

/** The list of `contents` that carries values of `datatype`. */
function valuesOf(
  datatype: Datatype,
  contents: InferTensorContents,
  what: string,
): readonly (number | bigint | boolean | Uint8Array)[] {
  switch (datatype) {
    case 'BOOL':
      return contents.boolContents;
    case 'UINT8':
    case 'UINT16':
    case 'UINT32':
      return contents.uintContents;
    case 'INT8':
    case 'INT16':
    case 'INT32':
      return contents.intContents;
    case 'INT64':
      return contents.int64Contents;
    case 'UINT64':
      return contents.uint64Contents;
    case 'FP32':
      return contents.fp32Contents;
    case 'FP64':
      return contents.fp64Contents;
    case 'BYTES':
      return contents.bytesContents;
    case 'FP16':
    case 'BF16':
      throw noTypedForm(datatype, what);
  }
}

/**
 * Tensor data from typed `contents`, reading the list that matches `datatype` (widened small
 * integers are narrowed back to their own array type).
 * @param expectedCount - element count from the shape; a different count throws `ELEMENT_COUNT_MISMATCH`.
 * @throws ProtocolError `DATATYPE_NOT_JSON` for FP16 and BF16.
 */
export function fromTensorContents<D extends Datatype>(
  datatype: D,
  contents: InferTensorContents,
  expectedCount?: number,
  what = 'tensor',
): TensorData<D> {
  const type: Datatype = datatype;
  const values = valuesOf(type, contents, what);
  if (expectedCount !== undefined && values.length !== expectedCount) {
    throw new ProtocolError(
      'ELEMENT_COUNT_MISMATCH',
      `${what} has ${values.length} values in its typed contents but its shape holds ${expectedCount}`,
    );
  }
  let out: TensorData;
  switch (type) {
    case 'BOOL':
      out = Uint8Array.from(values as readonly boolean[], (v) => (v ? 1 : 0));
      break;
    case 'UINT8':
      out = Uint8Array.from(values as readonly number[]);
      break;
    case 'UINT16':
      out = Uint16Array.from(values as readonly number[]);
      break;
    case 'UINT32':
      out = Uint32Array.from(values as readonly number[]);
      break;
    case 'INT8':
      out = Int8Array.from(values as readonly number[]);
      break;
    case 'INT16':
      out = Int16Array.from(values as readonly number[]);
      break;
    case 'INT32':
      out = Int32Array.from(values as readonly number[]);
      break;
    case 'INT64':
      out = BigInt64Array.from(values as readonly bigint[]);
      break;
    case 'UINT64':
      out = BigUint64Array.from(values as readonly bigint[]);
      break;
    case 'FP32':
      out = Float32Array.from(values as readonly number[]);
      break;
    case 'FP64':
      out = Float64Array.from(values as readonly number[]);
      break;
    case 'BYTES':
      out = [...(values as readonly Uint8Array[])];
      break;
    case 'FP16':
    case 'BF16':
      throw noTypedForm(type, what);
  }
  return out as TensorData<D>;
}
