/**
 * `ModelInferRequest` (protobuf) → the core's request, read in tritonserver's order and with its
 * messages (`SetInferenceRequestMetadata`, `ParseSharedMemoryParams`, `InferGRPCToInput` in
 * `infer_handler.cc`): request parameters, then each input's shared-memory parameters, typed
 * `contents` or its `raw_input_contents` entry (consumed in input order, decoded into the input's
 * data), then the requested outputs' shared-memory and classification parameters. Model checks are
 * the core's (a data-size refusal is kept for the core to throw in its order: `dataError`).
 * @packageDocumentation
 */
import { elementCount, isDatatype, serializeByteTensor, type Datatype } from '@tritonserver-ts/protocol';
import type {
  InferParameter,
  InferTensorContents,
  ModelInferRequest,
  ModelInferRequest_InferInputTensor,
  ModelInferRequest_InferRequestedOutputTensor,
} from '@tritonserver-ts/protocol/grpc';

import { echo } from '../common/echo.js';
import { invalidArg, toServerError } from '../common/errors.js';
import { decodeTensorBytes } from '../core/tensor-bytes.js';
import { packedBytesContents } from './packed-request.js';
import type {
  CoreInferInput,
  CoreInferRequest,
  CoreRequestedOutput,
  ParameterValue,
  SharedMemoryRef,
} from '../common/types.js';

/** Request parameters starting with `triton_` that tritonserver accepts (`TRITON_RESERVED_REQUEST_PARAMS`). */
export const TRITON_RESERVED_REQUEST_PARAMS = ['triton_enable_empty_final_response'] as const;

/** A decoded gRPC inference request: the core's request plus the front end's own settings. */
export interface GrpcInferRequest {
  readonly core: CoreInferRequest;
  /** `triton_enable_empty_final_response` (streaming, decoupled models). */
  readonly enableEmptyFinalResponse: boolean;
}

type Choice = InferParameter['parameterChoice'];

/** A 64-bit protobuf integer as the core's parameter value (a number when it is exact). */
function int64Value(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

function paramValue(choice: Choice): ParameterValue | undefined {
  switch (choice.case) {
    case 'boolParam':
    case 'stringParam':
    case 'doubleParam':
      return choice.value;
    case 'int64Param':
    case 'uint64Param':
      return int64Value(choice.value);
    default:
      return undefined;
  }
}

/** The request-level parameters, checked as tritonserver's `SetInferenceRequestMetadata` does. */
function requestParameters(parameters: Readonly<Record<string, InferParameter>>): {
  values: Record<string, ParameterValue>;
  enableEmptyFinalResponse: boolean;
} {
  const values: Record<string, ParameterValue> = {};
  let enableEmptyFinalResponse = false;
  for (const [key, param] of Object.entries(parameters)) {
    const choice = param.parameterChoice;
    switch (key) {
      case 'sequence_id':
        if (choice.case !== 'int64Param' && choice.case !== 'stringParam') {
          throw invalidArg(
            "invalid value type for 'sequence_id' parameter, expected int64_param or string_param.",
          );
        }
        break;
      case 'sequence_start':
      case 'sequence_end':
        if (choice.case !== 'boolParam') {
          throw invalidArg(`invalid value type for '${echo(key)}' parameter, expected bool_param.`);
        }
        break;
      case 'priority':
        if (choice.case === 'int64Param') {
          if (choice.value < 0n) throw invalidArg("invalid value for 'priority', expected value >= 0.");
        } else if (choice.case !== 'uint64Param') {
          throw invalidArg(
            "invalid value type for 'priority' parameter, expected int64_param or uint64_param.",
          );
        }
        break;
      case 'timeout':
        if (choice.case !== 'int64Param') {
          throw invalidArg("invalid value type for 'timeout' parameter, expected int64_param.");
        }
        break;
      default:
        if (key.startsWith('triton_')) {
          if (!(TRITON_RESERVED_REQUEST_PARAMS as readonly string[]).includes(key)) {
            throw invalidArg(
              `parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: ${TRITON_RESERVED_REQUEST_PARAMS.join(' ')}`,
            );
          }
          if (choice.case !== 'boolParam') {
            throw invalidArg(`invalid value type for '${echo(key)}' parameter, expected bool_param.`);
          }
          enableEmptyFinalResponse = choice.value;
          // Front-end settings: not handed to the core (which refuses every triton_ key).
          continue;
        }
        if (
          choice.case !== 'int64Param' &&
          choice.case !== 'boolParam' &&
          choice.case !== 'stringParam' &&
          choice.case !== 'doubleParam'
        ) {
          throw invalidArg(
            `invalid value type for '${echo(key)}' parameter, expected int64_param, bool_param, or string_param.`,
          );
        }
    }
    const value = paramValue(choice);
    if (value !== undefined) values[key] = value;
  }
  return { values, enableEmptyFinalResponse };
}

function tensorParameters(
  parameters: Readonly<Record<string, InferParameter>>,
): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = {};
  for (const [key, param] of Object.entries(parameters)) {
    const value = paramValue(param.parameterChoice);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** tritonserver's `ParseSharedMemoryParams` for one input or requested output. */
function sharedMemoryParams(tensor: {
  readonly name: string;
  readonly parameters: Readonly<Record<string, InferParameter>>;
}): SharedMemoryRef | undefined {
  const p = tensor.parameters;
  let region: string | undefined;
  const regionParam = p.shared_memory_region;
  if (regionParam !== undefined) {
    if (regionParam.parameterChoice.case !== 'stringParam') {
      throw invalidArg(
        `invalid value type for 'shared_memory_region' parameter for tensor '${echo(tensor.name)}', expected string_param.`,
      );
    }
    region = regionParam.parameterChoice.value;
  }
  let offset: number | bigint = 0;
  const offsetParam = p.shared_memory_offset;
  if (offsetParam !== undefined) {
    if (region === undefined) {
      throw invalidArg(
        `'shared_memory_offset' can not be specified without 'shared_memory_region' parameter for tensor '${echo(tensor.name)}'`,
      );
    }
    if (offsetParam.parameterChoice.case !== 'int64Param') {
      throw invalidArg(
        `invalid value type for 'shared_memory_offset' parameter for tensor '${echo(tensor.name)}', expected int64_param.`,
      );
    }
    offset = int64Value(offsetParam.parameterChoice.value);
  }
  const sizeParam = p.shared_memory_byte_size;
  if (sizeParam !== undefined) {
    if (region === undefined) {
      throw invalidArg(
        `'shared_memory_byte_size' can not be specified without 'shared_memory_region' parameter for tensor '${echo(tensor.name)}'`,
      );
    }
    if (sizeParam.parameterChoice.case !== 'int64Param') {
      throw invalidArg(
        `invalid value type for 'shared_memory_byte_size' parameter for tensor '${echo(tensor.name)}', expected int64_param.`,
      );
    }
    return { region, offset, byteSize: int64Value(sizeParam.parameterChoice.value) };
  }
  if (region !== undefined) {
    throw invalidArg(
      `'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '${echo(tensor.name)}'`,
    );
  }
  return undefined;
}

/** `TRITONSERVER_DataTypeString` of a request's datatype string (unknown strings are INVALID). */
function datatypeName(datatype: string): string {
  return isDatatype(datatype) ? datatype : '<invalid>';
}

/**
 * An input's typed `contents` as raw bytes of its declared datatype (tritonserver serialises them
 * the same way: INT8/INT16 from `int_contents`, UINT8/UINT16 from `uint_contents`, BYTES with
 * 4-byte length prefixes). Each non-empty content field must match the datatype, and only one may
 * be given. `bytes_contents` read by the server's reader are already in that layout.
 */
function contentsToRaw(
  input: ModelInferRequest_InferInputTensor,
  contents: InferTensorContents,
  model: string,
): Uint8Array {
  const declared = input.datatype;
  const prefix = `unexpected explicit tensor data for input tensor '${echo(input.name)}' for model '${echo(model)}'`;
  let raw: Uint8Array | undefined;
  const take = (fieldType: Datatype, make: () => Uint8Array): void => {
    if (raw !== undefined && raw.byteLength !== 0) {
      throw invalidArg(`${prefix}, binary data was already supplied.`);
    }
    if (fieldType !== declared) {
      throw invalidArg(`${prefix} of type '${fieldType}', expected datatype '${datatypeName(declared)}'`);
    }
    raw = make();
  };
  const bytesOf = (view: ArrayBufferView): Uint8Array =>
    new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  if (contents.boolContents.length > 0) {
    take('BOOL', () => Uint8Array.from(contents.boolContents, (b) => (b ? 1 : 0)));
  }
  if (contents.intContents.length > 0) {
    const t: Datatype = declared === 'INT8' ? 'INT8' : declared === 'INT16' ? 'INT16' : 'INT32';
    take(t, () =>
      bytesOf(
        t === 'INT8'
          ? Int8Array.from(contents.intContents)
          : t === 'INT16'
            ? Int16Array.from(contents.intContents)
            : Int32Array.from(contents.intContents),
      ),
    );
  }
  if (contents.int64Contents.length > 0)
    take('INT64', () => bytesOf(BigInt64Array.from(contents.int64Contents)));
  if (contents.uintContents.length > 0) {
    const t: Datatype = declared === 'UINT8' ? 'UINT8' : declared === 'UINT16' ? 'UINT16' : 'UINT32';
    take(t, () =>
      bytesOf(
        t === 'UINT8'
          ? Uint8Array.from(contents.uintContents)
          : t === 'UINT16'
            ? Uint16Array.from(contents.uintContents)
            : Uint32Array.from(contents.uintContents),
      ),
    );
  }
  if (contents.uint64Contents.length > 0)
    take('UINT64', () => bytesOf(BigUint64Array.from(contents.uint64Contents)));
  if (contents.fp32Contents.length > 0) take('FP32', () => bytesOf(Float32Array.from(contents.fp32Contents)));
  if (contents.fp64Contents.length > 0) take('FP64', () => bytesOf(Float64Array.from(contents.fp64Contents)));
  // Read from the wire straight into the serialized layout (packed-request.ts), or given as elements.
  const packed = packedBytesContents(contents);
  if (packed !== undefined) take('BYTES', () => packed);
  else if (contents.bytesContents.length > 0) {
    take('BYTES', () => serializeByteTensor(contents.bytesContents));
  }
  return raw ?? new Uint8Array(0);
}

/** A protobuf shape (int64) as the core's shape. */
function shapeOf(shape: readonly bigint[]): number[] {
  return shape.map((d) => Number(d));
}

function requestedOutput(output: ModelInferRequest_InferRequestedOutputTensor): CoreRequestedOutput {
  const shm = sharedMemoryParams(output);
  let classification: number | undefined;
  const cls = output.parameters.classification;
  if (cls !== undefined) {
    if (cls.parameterChoice.case !== 'int64Param') {
      throw invalidArg("invalid value type for 'classification' parameter, expected int64_param");
    }
    if (cls.parameterChoice.value <= 0n) {
      throw invalidArg("invalid value for 'classification' parameter, expected >= 1");
    }
    classification = Number(cls.parameterChoice.value);
  }
  const parameters = tensorParameters(output.parameters);
  return {
    name: output.name,
    ...(classification !== undefined ? { classCount: classification } : {}),
    ...(shm !== undefined ? { sharedMemory: shm } : {}),
    parameters,
  };
}

/** Options of {@link decodeGrpcInferRequest}. */
export interface DecodeOptions {
  /** Aborted when the call is cancelled. */
  readonly signal?: AbortSignal;
  /** `--grpc-header-forward-pattern` matches of the call's metadata (added as string parameters). */
  readonly forwardedHeaders?: Readonly<Record<string, string>>;
  /**
   * The model's name as the core words its data-size refusals (its config's name); default: the
   * request's `model_name`.
   */
  readonly modelName?: string;
}

/**
 * An input's data decoded from its raw bytes (raw contents, or typed contents serialised) against
 * its datatype and shape, as the core decodes shared-memory bytes. A refusal is not thrown here but
 * kept as the input's `dataError`, for the core to throw in Triton's order (after the input's name,
 * datatype and shape checks, which come first). An unknown datatype is left to the core.
 */
function decodedData(
  datatype: string,
  shape: readonly number[],
  bytes: Uint8Array,
  name: string,
  model: string,
): Pick<CoreInferInput, 'data' | 'dataError'> {
  if (!isDatatype(datatype)) return {};
  try {
    return { data: decodeTensorBytes(datatype, bytes, elementCount(shape), name, model) };
  } catch (error) {
    return { dataError: toServerError(error) };
  }
}

/**
 * Reads a `ModelInferRequest` into the core's request: raw and typed contents are decoded into the
 * inputs' data here (the core sees no wire bytes).
 * @throws ServerError (INVALID_ARG) with tritonserver's messages for the gRPC-specific checks
 */
export function decodeGrpcInferRequest(
  request: ModelInferRequest,
  options: DecodeOptions = {},
): GrpcInferRequest {
  const model = request.modelName;
  const dataModel = options.modelName ?? model;
  const { values, enableEmptyFinalResponse } = requestParameters(request.parameters);
  if (options.forwardedHeaders !== undefined) Object.assign(values, options.forwardedHeaders);

  // tritonserver adds every input and requested output (AddInput / AddRequestedOutput) before it
  // reads any data: duplicates are refused first, with the core's words.
  const prefix = request.id !== '' ? `[request id: ${echo(request.id)}] ` : '';
  const duplicate = (names: readonly string[], what: 'input' | 'output'): void => {
    const seen = new Set<string>();
    for (const name of names) {
      if (seen.has(name)) throw invalidArg(`${prefix}${what} '${echo(name)}' already exists in request`);
      seen.add(name);
    }
  };
  duplicate(
    request.inputs.map((i) => i.name),
    'input',
  );
  duplicate(
    request.outputs.map((o) => o.name),
    'output',
  );

  const raws = request.rawInputContents;
  let rawIndex = 0;
  const inputs: CoreInferInput[] = request.inputs.map((io) => {
    const shm = sharedMemoryParams(io);
    const base = {
      name: io.name,
      datatype: io.datatype,
      shape: shapeOf(io.shape),
      parameters: tensorParameters(io.parameters),
    };
    if (shm !== undefined) {
      if (io.contents !== undefined) {
        throw invalidArg(
          `unexpected 'content' provided when using shared memory for input tensor '${echo(io.name)}' for model '${echo(model)}'`,
        );
      }
      return { ...base, sharedMemory: shm };
    }
    if (io.contents !== undefined && raws.length > 0) {
      throw invalidArg(
        `contents field must not be specified when using raw_input_contents for '${echo(io.name)}' for model '${echo(model)}'`,
      );
    }
    let raw: Uint8Array | undefined;
    if (io.contents !== undefined) raw = contentsToRaw(io, io.contents, model);
    else {
      raw = raws[rawIndex];
      if (raw === undefined) {
        throw invalidArg(
          `unable to find data for input tensor '${echo(io.name)}' for model '${echo(model)}' in request.`,
        );
      }
      rawIndex++;
    }
    return { ...base, ...decodedData(io.datatype, base.shape, raw, io.name, dataModel) };
  });

  const outputs = request.outputs.map(requestedOutput);
  const core: CoreInferRequest = {
    modelName: model,
    ...(request.modelVersion !== '' ? { modelVersion: request.modelVersion } : {}),
    ...(request.id !== '' ? { id: request.id } : {}),
    parameters: values,
    inputs,
    ...(outputs.length > 0 ? { outputs } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
  return { core, enableEmptyFinalResponse };
}
