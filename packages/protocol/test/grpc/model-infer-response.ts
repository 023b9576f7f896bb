/**
 * A test-side `ModelInferResponse` builder: a response message written as Triton's gRPC front end
 * answers (every output raw), for the golden tests of the client's reader. The server writes its
 * responses with its own encoder; this one only feeds the tests.
 */
import { create } from '@bufbuild/protobuf';
import type { InferResponseMessage } from '../../src/message.js';
import { tensorDataToBytes } from '../../src/raw.js';
import {
  ModelInferResponseSchema,
  ModelInferResponse_InferOutputTensorSchema,
  type ModelInferResponse,
} from '../../src/grpc/gen/grpc_service_pb.js';
import { toInferParameters } from '../../src/grpc/parameters.js';

const EMPTY = new Uint8Array(0);

/**
 * One `raw_output_contents` entry per output in output order, present (empty) for an output whose
 * data was written to shared memory (`omitData`), never typed `contents`. Fixed-size data is a view
 * of the tensor's memory; BYTES is length-prefixed. The HTTP-only `binary` flag is ignored.
 */
export function toModelInferResponse(message: InferResponseMessage): ModelInferResponse {
  const raw: Uint8Array[] = [];
  const outputs = message.outputs.map(({ tensor, omitData, parameters }) => {
    raw.push(omitData === true ? EMPTY : tensorDataToBytes(tensor.datatype, tensor.data));
    return create(ModelInferResponse_InferOutputTensorSchema, {
      name: tensor.name,
      datatype: tensor.datatype,
      shape: tensor.shape.map((d) => BigInt(d)),
      parameters: toInferParameters(parameters),
    });
  });
  return create(ModelInferResponseSchema, {
    modelName: message.modelName,
    modelVersion: message.modelVersion,
    id: message.id ?? '',
    parameters: toInferParameters(message.parameters),
    outputs,
    rawOutputContents: raw,
  });
}
