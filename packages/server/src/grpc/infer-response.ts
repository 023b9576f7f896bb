/**
 * The core's inference response → `ModelInferResponse` (protobuf), as tritonserver answers: every
 * output's data in `raw_output_contents` (one entry per output, in output order, present even when
 * empty or when the output went to shared memory); typed `contents` are never filled.
 * @packageDocumentation
 */
import { tensorDataToBytes } from '@tritonserver-ts/protocol';
import {
  ModelInferResponseSchema,
  toInferParameters,
  type InferParameter,
  type ModelInferResponse,
} from '@tritonserver-ts/protocol/grpc';

import type { CoreInferResponse } from '../common/types.js';
import { message, type Init } from './messages.js';

/** An `InferParameter` holding a bool. */
export function boolParameter(value: boolean): Init<InferParameter> {
  return { parameterChoice: { case: 'boolParam', value } };
}

/**
 * Builds the protobuf response of a core response: its own parameters (a Python model's), then
 * `parameters` (the front end's, e.g. `triton_final_response`, which win over a model's of the same
 * name, as tritonserver sets its own last).
 */
export function encodeGrpcInferResponse(
  response: CoreInferResponse,
  parameters: Readonly<Record<string, Init<InferParameter>>> = {},
): ModelInferResponse {
  const outputs = response.outputs.map((o) => {
    const shm = o.sharedMemory;
    return {
      name: o.name,
      datatype: o.tensor.datatype,
      shape: o.tensor.shape.map((d) => BigInt(d)),
      parameters:
        shm === undefined
          ? {}
          : {
              shared_memory_region: { parameterChoice: { case: 'stringParam' as const, value: shm.region } },
              shared_memory_byte_size: {
                parameterChoice: { case: 'int64Param' as const, value: BigInt(shm.byteSize) },
              },
              ...(BigInt(shm.offset ?? 0) !== 0n
                ? {
                    shared_memory_offset: {
                      parameterChoice: { case: 'int64Param' as const, value: BigInt(shm.offset ?? 0) },
                    },
                  }
                : {}),
            },
    };
  });
  const raw = response.outputs.map((o) =>
    o.sharedMemory !== undefined ? new Uint8Array(0) : tensorDataToBytes(o.tensor.datatype, o.tensor.data),
  );
  return message(ModelInferResponseSchema, {
    modelName: response.modelName,
    modelVersion: response.modelVersion,
    id: response.id ?? '',
    parameters:
      response.parameters === undefined
        ? parameters
        : { ...toInferParameters(response.parameters), ...parameters },
    outputs,
    rawOutputContents: raw,
  });
}
