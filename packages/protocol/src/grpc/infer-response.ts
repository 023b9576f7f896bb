/**
 * `ModelInferResponse` read into the neutral {@link InferResponse} (client side):
 * {@link fromModelInferResponse} and the forms the hand-written decoder feeds it. The server writes
 * its responses with its own encoder.
 * @packageDocumentation
 */
import { isDatatype } from '../datatypes.js';
import { ProtocolError } from '../errors.js';
import type { InferResponse, InferResponseOutput } from '../message.js';
import type { Parameters } from '../parameters.js';
import { tensorDataFromBytes } from '../raw.js';
import { elementCount } from '../tensor.js';
import { fromTensorContents } from './contents.js';
import { type ModelInferResponse } from './gen/grpc_service_pb.js';
import { fromInferParameters } from './parameters.js';
import { InferResponseParts } from './infer-response-decoder.js';

/**
 * Reads a `ModelInferResponse` (client side). Output `i` takes `raw_output_contents[i]` when the
 * response carries raw contents (Triton always does), else its typed `contents` (KServe servers may
 * answer that way). Fixed-size raw data is a view into the message when aligned (no copy). An output
 * whose raw entry is empty while its shape holds elements, or that names a shared-memory region,
 * has no data (`data: undefined`): it went to shared memory. Empty `model_version` and `id` are
 * left out, as the HTTP converter leaves out absent ones, so `InferResult` reads both wires alike.
 * @throws ProtocolError `UNKNOWN_DATATYPE`, `BINARY_SIZE_MISMATCH`, `ELEMENT_COUNT_MISMATCH`,
 *   `INVALID_FIELD` (more raw entries than outputs).
 */
export function fromModelInferResponse(response: ModelInferResponse): InferResponse {
  return fromInferResponseParts(toInferResponseParts(response));
}

/** The fields of a protobuf-es `ModelInferResponse` that {@link fromInferResponseParts} reads. */
export function toInferResponseParts(response: ModelInferResponse): InferResponseParts {
  return new InferResponseParts(
    response.modelName,
    response.modelVersion,
    response.id,
    fromInferParameters(response.parameters),
    response.outputs.map((o) => ({
      name: o.name,
      datatype: o.datatype,
      shape: o.shape.map((d) => Number(d)),
      parameters: fromInferParameters(o.parameters),
      contents: o.contents,
    })),
    response.rawOutputContents,
  );
}

/**
 * {@link fromModelInferResponse} of a response read by `readModelInferResponse`: either the
 * hand-written decoder's {@link InferResponseParts} or protobuf-es's message.
 * @throws ProtocolError as {@link fromModelInferResponse}.
 */
export function fromReadInferResponse(read: InferResponseParts | ModelInferResponse): InferResponse {
  return fromInferResponseParts(read instanceof InferResponseParts ? read : toInferResponseParts(read));
}

/**
 * The neutral response of a `ModelInferResponse`'s fields (see {@link fromModelInferResponse}).
 * @throws ProtocolError as {@link fromModelInferResponse}.
 */
export function fromInferResponseParts(response: InferResponseParts): InferResponse {
  const raw = response.raw;
  if (raw.length > response.outputs.length) {
    throw new ProtocolError(
      'INVALID_FIELD',
      `the response has ${raw.length} raw_output_contents entries for ${response.outputs.length} outputs`,
    );
  }
  const outputs = response.outputs.map((o, i): InferResponseOutput => {
    const where = `output '${o.name}'`;
    if (!isDatatype(o.datatype)) {
      throw new ProtocolError('UNKNOWN_DATATYPE', `${where} has unknown datatype '${o.datatype}'`);
    }
    const datatype = o.datatype;
    const shape = o.shape;
    const parameters = o.parameters;
    const count = elementCount(shape);
    const bytes = raw[i];
    const inSharedMemory = parameters.shared_memory_region !== undefined;
    if (bytes !== undefined && raw.length > 0) {
      if (inSharedMemory || (bytes.byteLength === 0 && count > 0)) {
        return { name: o.name, datatype, shape, data: undefined, parameters };
      }
      const data = tensorDataFromBytes(datatype, bytes, count, where);
      return { name: o.name, datatype, shape, data, parameters };
    }
    if (o.contents !== undefined && !inSharedMemory) {
      const data = fromTensorContents(datatype, o.contents, count, where);
      return { name: o.name, datatype, shape, data, parameters };
    }
    return { name: o.name, datatype, shape, data: undefined, parameters };
  });
  return responseOf(response.modelName, response.modelVersion, response.id, response.parameters, outputs);
}

/**
 * The response object, without `modelVersion` / `id` when empty (keys in this order; written out
 * rather than spread, which allocates a temporary object per optional key).
 */
function responseOf(
  modelName: string,
  modelVersion: string,
  id: string,
  parameters: Parameters,
  outputs: InferResponseOutput[],
): InferResponse {
  if (modelVersion !== '') {
    return id !== ''
      ? { modelName, modelVersion, id, parameters, outputs }
      : { modelName, modelVersion, parameters, outputs };
  }
  return id !== '' ? { modelName, id, parameters, outputs } : { modelName, parameters, outputs };
}
