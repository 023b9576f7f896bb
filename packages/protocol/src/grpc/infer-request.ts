/**
 * `ModelInferRequest`, client side: {@link toModelInferRequest} builds it from the client's inputs
 * and request options as Triton's Python gRPC client does. The one reader of the message is the
 * embedded server's (`packages/server/src/grpc/infer-request.ts`), which follows tritonserver's
 * order and messages and hands the core raw bytes.
 * @packageDocumentation
 */
import { create } from '@bufbuild/protobuf';
import { ProtocolError } from '../errors.js';
import type { InferInput } from '../message.js';
import type { NeutralRequestOptions, NeutralRequestedOutput } from '../message.js';
import { tensorDataToBytes } from '../raw.js';
import type { SharedMemoryRef } from '../shared-memory.js';
import { inputTensorData } from '../tensor-data.js';
import { isReservedParameter, type Parameters } from '../parameters.js';
import { toTensorContents } from './contents.js';
import {
  InferParameterSchema,
  ModelInferRequestSchema,
  ModelInferRequest_InferInputTensorSchema,
  ModelInferRequest_InferRequestedOutputTensorSchema,
  type InferParameter,
  type ModelInferRequest,
  type ModelInferRequest_InferInputTensor,
  type ModelInferRequest_InferRequestedOutputTensor,
} from './gen/grpc_service_pb.js';
import { toInferParameter, toInferParameters } from './parameters.js';

/** What {@link toModelInferRequest} needs: the model and the client's inputs and request options. */
export interface GrpcInferCall {
  readonly modelName: string;
  /** Empty: the server's choice by version policy. */
  readonly modelVersion?: string;
  readonly inputs: readonly InferInput[];
  /**
   * The neutral request options. Over gRPC an input is sent in `raw_input_contents` unless its
   * `binaryData` (or the request's) is `false`, which sends typed `contents` instead. The HTTP-only
   * hints (`binaryDataOutput`, the outputs' `binaryData`) are not part of this type; passing the
   * user-facing `InferRequestOptions` is allowed, and they are ignored (gRPC outputs always come
   * back raw).
   */
  readonly request?: NeutralRequestOptions;
}

function isSet(id: number | bigint | string | undefined): id is number | bigint | string {
  return id !== undefined && id !== 0 && id !== 0n && id !== '';
}

/** An integer parameter (int64; a bigint beyond the int64 range as uint64). */
function int64(value: number | bigint, key: string): InferParameter {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new ProtocolError('INVALID_VALUE', `parameter '${key}': ${value} is not an integer`);
  }
  return toInferParameter(typeof value === 'number' ? BigInt(value) : value, key);
}

function shmParameters(shm: SharedMemoryRef): Record<string, InferParameter> {
  const out: Record<string, InferParameter> = {
    shared_memory_region: toInferParameter(shm.region),
    shared_memory_byte_size: int64(shm.byteSize, 'shared_memory_byte_size'),
  };
  if (shm.offset !== undefined && shm.offset !== 0 && shm.offset !== 0n) {
    out.shared_memory_offset = int64(shm.offset, 'shared_memory_offset');
  }
  return out;
}

function checkCustomParameters(parameters: Parameters): void {
  for (const key of Object.keys(parameters)) {
    if (isReservedParameter(key)) {
      throw new ProtocolError(
        'RESERVED_PARAMETER',
        `Parameter '${key}' is a reserved parameter and cannot be specified.`,
      );
    }
  }
}

function encodeOutput(output: NeutralRequestedOutput): ModelInferRequest_InferRequestedOutputTensor {
  const parameters = toInferParameters(output.parameters);
  if (output.classCount !== undefined && output.classCount !== 0) {
    if (output.sharedMemory !== undefined) {
      throw new ProtocolError(
        'INVALID_VALUE',
        `output '${output.name}': shared memory can't be set on classification output`,
      );
    }
    parameters.classification = int64(output.classCount, 'classification');
  }
  if (output.sharedMemory !== undefined) Object.assign(parameters, shmParameters(output.sharedMemory));
  return create(ModelInferRequest_InferRequestedOutputTensorSchema, { name: output.name, parameters });
}

/**
 * Builds a `ModelInferRequest` from the client's inputs and options the way Triton's Python gRPC
 * client does: `id` when not empty; `sequence_id` (int64, or string), `sequence_start`,
 * `sequence_end` (bool) when in a sequence; `priority` (uint64) when not 0; `timeout` (int64);
 * custom parameters (bool, string, int64, double; a bigint beyond int64 as uint64); one
 * `raw_input_contents` entry per input that is neither in shared memory nor sent typed, in input
 * order, sharing memory with the input's typed array (BYTES: length-prefixed); shared-memory
 * inputs and outputs with `shared_memory_region` / `_byte_size` / `_offset` (offset only when not
 * 0); classification outputs with `classification` (int64).
 * @throws ProtocolError `RESERVED_PARAMETER`, `ELEMENT_COUNT_MISMATCH`, `INVALID_VALUE`,
 *   `DATATYPE_NOT_JSON` (FP16/BF16 typed), `INVALID_FIELD` (typed and raw inputs mixed, which
 *   Triton refuses).
 */
export function toModelInferRequest(call: GrpcInferCall): ModelInferRequest {
  const options = call.request ?? {};
  const parameters: Record<string, InferParameter> = {};
  if (isSet(options.sequenceId)) {
    parameters.sequence_id =
      typeof options.sequenceId === 'string'
        ? toInferParameter(options.sequenceId)
        : int64(options.sequenceId, 'sequence_id');
    parameters.sequence_start = toInferParameter(options.sequenceStart ?? false);
    parameters.sequence_end = toInferParameter(options.sequenceEnd ?? false);
  }
  if (options.priority !== undefined && options.priority !== 0 && options.priority !== 0n) {
    // Triton's Python client sends the priority as uint64.
    parameters.priority = create(InferParameterSchema, {
      parameterChoice: { case: 'uint64Param', value: BigInt(options.priority) },
    });
  }
  if (options.timeout !== undefined) parameters.timeout = int64(options.timeout, 'timeout');
  if (options.parameters !== undefined) {
    checkCustomParameters(options.parameters);
    Object.assign(parameters, toInferParameters(options.parameters));
  }

  const defaultRaw = options.binaryData ?? true;
  const raw: Uint8Array[] = [];
  let typed: string | undefined;
  const inputs = call.inputs.map((input): ModelInferRequest_InferInputTensor => {
    const tensor = {
      name: input.name,
      datatype: input.datatype,
      shape: input.shape.map((d) => BigInt(d)),
      parameters: toInferParameters(input.parameters),
    };
    if (input.sharedMemory !== undefined) {
      Object.assign(tensor.parameters, shmParameters(input.sharedMemory));
      return create(ModelInferRequest_InferInputTensorSchema, tensor);
    }
    const data = inputTensorData(input);
    if (input.binaryData ?? defaultRaw) {
      raw.push(tensorDataToBytes(input.datatype, data));
      return create(ModelInferRequest_InferInputTensorSchema, tensor);
    }
    typed ??= input.name;
    return create(ModelInferRequest_InferInputTensorSchema, {
      ...tensor,
      contents: toTensorContents(input.datatype, data, `input '${input.name}'`),
    });
  });
  if (typed !== undefined && raw.length > 0) {
    throw new ProtocolError(
      'INVALID_FIELD',
      `input '${typed}' is sent as typed contents, but Triton refuses contents when raw_input_contents is used; send every input raw or every input typed`,
    );
  }
  const outputs = (options.outputs ?? []).map(encodeOutput);
  return create(ModelInferRequestSchema, {
    modelName: call.modelName,
    modelVersion: call.modelVersion ?? '',
    id: options.requestId ?? '',
    parameters,
    inputs,
    outputs,
    rawInputContents: raw,
  });
}
