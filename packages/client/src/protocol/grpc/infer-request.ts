/**
 * `ModelInferRequest` in both directions: {@link toModelInferRequest} (client) builds it from the
 * client's inputs and request options as Triton's Python gRPC client does;
 * {@link fromModelInferRequest} (server) reads it into the codec's decoded inputs and outputs the
 * way Triton's gRPC front end does.
 * @packageDocumentation
 */
import { create } from '@bufbuild/protobuf';
import { DATATYPE_BYTE_SIZE, isDatatype, type Datatype, type TensorData } from '../datatypes.js';
import { ProtocolError } from '../errors.js';
import type {
  DecodedInput,
  DecodedRequestedOutput,
  InferInput,
  InferRequestOptions,
  InferRequestedOutput,
} from '../infer-request.js';
import { tensorDataFromBytes, tensorDataToBytes } from '../raw.js';
import type { SharedMemoryRef } from '../shared.js';
import { elementCount } from '../tensor.js';
import { toTensorData } from '../tensor-data.js';
import { isReservedParameter, type Parameters } from '../wire.js';
import { fromTensorContents, toTensorContents } from './contents.js';
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
import { fromInferParameters, toInferParameter, toInferParameters } from './parameters.js';

/** What {@link toModelInferRequest} needs: the model and the client's inputs and request options. */
export interface GrpcInferCall {
  readonly modelName: string;
  /** Empty: the server's choice by version policy. */
  readonly modelVersion?: string;
  readonly inputs: readonly InferInput[];
  /**
   * Request options. Over gRPC an input is sent in `raw_input_contents` unless its `binaryData`
   * (or the request's) is `false`, which sends typed `contents` instead; `binaryDataOutput` and
   * the outputs' `binaryData` are HTTP-only and ignored (gRPC outputs always come back raw).
   */
  readonly request?: InferRequestOptions;
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

function encodeOutput(output: InferRequestedOutput): ModelInferRequest_InferRequestedOutputTensor {
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
    if (input.data === undefined) {
      throw new ProtocolError(
        'INVALID_VALUE',
        `input '${input.name}' has neither data nor a shared-memory region`,
      );
    }
    const data = toTensorData(input.datatype, input.data);
    const expected = elementCount(input.shape);
    if (data.length !== expected) {
      throw new ProtocolError(
        'ELEMENT_COUNT_MISMATCH',
        `input '${input.name}' has ${data.length} elements but shape [${input.shape.join(',')}] expects ${expected}`,
      );
    }
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

/** An input of a decoded `ModelInferRequest` (server side). */
export interface GrpcDecodedInput extends Omit<DecodedInput, 'source'> {
  /** Where the data came from: `raw_input_contents`, typed `contents`, or a shared-memory region. */
  readonly source: 'raw' | 'contents' | 'shared_memory';
}

/** A decoded `ModelInferRequest` (server side), in the codec's terms. */
export interface GrpcDecodedInferRequest {
  readonly kind: 'grpc';
  readonly modelName: string;
  /** Empty: the server's choice by version policy. */
  readonly modelVersion: string;
  readonly id?: string;
  readonly parameters: Parameters;
  readonly inputs: GrpcDecodedInput[];
  /** Requested outputs, or `undefined` when the request lists none (every output is returned). */
  readonly outputs: DecodedRequestedOutput[] | undefined;
}

/** Shared-memory parameters as Triton's gRPC front end reads them (region string, sizes int64). */
function readShm(
  parameters: Readonly<Record<string, InferParameter>>,
  tensor: string,
): SharedMemoryRef | undefined {
  const invalid = (key: string, expected: string): ProtocolError =>
    new ProtocolError(
      'INVALID_FIELD',
      `invalid value type for '${key}' parameter for tensor '${tensor}', expected ${expected}.`,
    );
  const region = parameters.shared_memory_region;
  if (region === undefined) return undefined;
  if (region.parameterChoice.case !== 'stringParam') throw invalid('shared_memory_region', 'string_param');
  const integer = (key: string): number | bigint => {
    const p = parameters[key];
    if (p === undefined) return 0;
    if (p.parameterChoice.case !== 'int64Param') throw invalid(key, 'int64_param');
    const v = p.parameterChoice.value;
    return v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  };
  const offset = integer('shared_memory_offset');
  const byteSize = integer('shared_memory_byte_size');
  const name = region.parameterChoice.value;
  return offset === 0 ? { region: name, byteSize } : { region: name, byteSize, offset };
}

function rawInputData(
  datatype: Datatype,
  bytes: Uint8Array,
  name: string,
  count: number,
  modelName: string,
): TensorData {
  if (datatype === 'BYTES') return tensorDataFromBytes('BYTES', bytes, undefined, `input '${name}'`);
  const size = DATATYPE_BYTE_SIZE[datatype];
  if (bytes.byteLength % size !== 0) {
    throw new ProtocolError(
      'BINARY_SIZE_MISMATCH',
      `input byte size mismatch for input '${name}' for model '${modelName}'. Expected ${count * size}, got ${bytes.byteLength}`,
    );
  }
  return tensorDataFromBytes(datatype, bytes);
}

/**
 * Reads a `ModelInferRequest` (server side) the way Triton's gRPC front end does: shared-memory
 * parameters first; an input with `contents` while `raw_input_contents` is used is refused; typed
 * `contents` are read from the list of the input's datatype; otherwise the next
 * `raw_input_contents` entry is taken (a running index over the inputs that use raw data, so
 * entries are views into the message without a copy; an input without one is refused, entries
 * left over are ignored, as tritonserver does). What Triton checks later against the model is left to the server: the byte
 * size of raw and shared-memory data against the shape, and the regions themselves.
 * @throws ProtocolError `INVALID_FIELD`, `UNKNOWN_DATATYPE`, `BINARY_SIZE_MISMATCH`,
 *   `ELEMENT_COUNT_MISMATCH`, `DUPLICATE_OUTPUT`, `DATATYPE_NOT_JSON`.
 */
export function fromModelInferRequest(request: ModelInferRequest): GrpcDecodedInferRequest {
  const model = request.modelName;
  const usesRaw = request.rawInputContents.length > 0;
  let index = 0;
  const names = new Set<string>();
  const inputs = request.inputs.map((io): GrpcDecodedInput => {
    const name = io.name;
    if (names.has(name))
      throw new ProtocolError('INVALID_FIELD', `input '${name}' already exists in request`);
    names.add(name);
    const parameters = fromInferParameters(io.parameters);
    const sharedMemory = readShm(io.parameters, name);
    if (!isDatatype(io.datatype)) {
      throw new ProtocolError('UNKNOWN_DATATYPE', `invalid datatype for input ${name}`);
    }
    const datatype = io.datatype;
    const shape = io.shape.map((d) => Number(d));
    const base = { name, datatype, shape, parameters };
    if (sharedMemory !== undefined) {
      if (io.contents !== undefined) {
        throw new ProtocolError(
          'INVALID_FIELD',
          `unexpected 'content' provided when using shared memory for input tensor '${name}' for model '${model}'`,
        );
      }
      return { ...base, data: undefined, source: 'shared_memory', sharedMemory };
    }
    if (io.contents !== undefined) {
      if (usesRaw) {
        throw new ProtocolError(
          'INVALID_FIELD',
          `contents field must not be specified when using raw_input_contents for '${name}' for model '${model}'`,
        );
      }
      const data = fromTensorContents(datatype, io.contents, undefined, `input '${name}'`);
      return { ...base, data, source: 'contents' };
    }
    const bytes = request.rawInputContents[index];
    if (bytes === undefined) {
      throw new ProtocolError(
        'INVALID_FIELD',
        `unable to find data for input tensor '${name}' for model '${model}' in request.`,
      );
    }
    index += 1;
    return {
      ...base,
      data: rawInputData(datatype, bytes, name, elementCount(shape), model),
      source: 'raw',
    };
  });
  // As tritonserver, raw entries beyond the inputs that use raw data are ignored.
  const seen = new Set<string>();
  const outputs = request.outputs.map((o): DecodedRequestedOutput => {
    if (seen.has(o.name)) {
      throw new ProtocolError('DUPLICATE_OUTPUT', `output '${o.name}' already exists in request`);
    }
    seen.add(o.name);
    const sharedMemory = readShm(o.parameters, o.name);
    const classification = o.parameters.classification;
    let classCount: number | undefined;
    if (classification !== undefined) {
      if (classification.parameterChoice.case !== 'int64Param') {
        throw new ProtocolError(
          'INVALID_FIELD',
          "invalid value type for 'classification' parameter, expected int64_param",
        );
      }
      const n = Number(classification.parameterChoice.value);
      if (n !== 0) classCount = n;
    }
    if (classCount !== undefined && sharedMemory !== undefined) {
      throw new ProtocolError(
        'INVALID_FIELD',
        "Output can't set both 'shared_memory_region' and 'classification'",
      );
    }
    return {
      name: o.name,
      parameters: fromInferParameters(o.parameters),
      ...(classCount !== undefined ? { classCount } : {}),
      ...(sharedMemory !== undefined ? { sharedMemory } : {}),
    };
  });
  return {
    kind: 'grpc',
    modelName: request.modelName,
    modelVersion: request.modelVersion,
    ...(request.id !== '' ? { id: request.id } : {}),
    parameters: fromInferParameters(request.parameters),
    inputs,
    outputs: outputs.length > 0 ? outputs : undefined,
  };
}
