/**
 * The HTTP inference request body in both directions: `encodeInferRequest` (client) builds the JSON
 * header plus binary tail; `decodeInferRequest` (server) splits and validates it.
 * @packageDocumentation
 */
import type { Datatype, TensorData } from './datatypes.js';
import { ProtocolError } from './errors.js';
import { tensorDataFromJson, tensorDataToJson } from './json-data.js';
import { parseJson, stringifyJson } from './json.js';
import { tensorDataFromBytes, tensorDataToBytes } from './raw.js';
import {
  concatBytes,
  fromUtf8,
  isObject,
  parseHeaderLength,
  readDatatype,
  readParameters,
  readInputShape,
  readSharedMemory,
  readSize,
  readString,
  utf8,
  writeSharedMemory,
  type SharedMemoryRef,
} from './shared.js';
import { toTensorData, type TensorValues } from './tensor-data.js';
import { elementCount } from './tensor.js';
import {
  isReservedParameter,
  type InferInputJson,
  type InferRequestJson,
  type InferRequestedOutputJson,
  type Parameters,
} from './wire.js';

/** An input to send: a tensor (typed or plain values), optionally as JSON or in shared memory. */
export interface InferInput<D extends Datatype = Datatype> {
  readonly name: string;
  readonly datatype: D;
  readonly shape: readonly number[];
  /** Values; omit only with {@link InferInput.sharedMemory}. */
  readonly data?: TensorValues<D>;
  /** Send in the binary tail (`true`) or as JSON `data` (`false`); defaults to the request's `binaryData`. */
  readonly binaryData?: boolean;
  /** Read the input from a registered shared-memory region instead of the body. */
  readonly sharedMemory?: SharedMemoryRef;
  /** Extra tensor parameters. */
  readonly parameters?: Parameters;
}

/** An output to request. */
export interface InferRequestedOutput {
  readonly name: string;
  /** Receive in the binary tail (default `true`, like the Python client) or as JSON. */
  readonly binaryData?: boolean;
  /** Ask for the top-N classification strings (`value:index[:label]`) instead of the tensor. */
  readonly classCount?: number;
  /** Write the output to a registered shared-memory region (forces `binary_data: false`). */
  readonly sharedMemory?: SharedMemoryRef;
  /** Extra output parameters. */
  readonly parameters?: Parameters;
}

/** Request-level options of {@link encodeInferRequest}. */
export interface InferRequestOptions {
  /** Outputs to return; when omitted, all outputs come back (binary unless `binaryDataOutput: false`). */
  readonly outputs?: readonly InferRequestedOutput[];
  /** Request `id`, echoed by the server (omitted when empty). */
  readonly requestId?: string;
  /** Sequence correlation id (number, bigint or string; 0 / '' = not in a sequence). */
  readonly sequenceId?: number | bigint | string;
  /** First request of the sequence. */
  readonly sequenceStart?: boolean;
  /** Last request of the sequence. */
  readonly sequenceEnd?: boolean;
  /** Scheduling priority (0 = model default, 1 = highest); sent only when not 0. */
  readonly priority?: number | bigint;
  /** Server-side timeout in microseconds. */
  readonly timeout?: number | bigint;
  /** Custom request parameters; reserved keys are refused. */
  readonly parameters?: Parameters;
  /** Default for inputs without their own `binaryData` (default `true`). */
  readonly binaryData?: boolean;
  /**
   * Request parameter `binary_data_output`. Default: `true` when `outputs` is omitted (as the
   * Python client does), not sent otherwise.
   */
  readonly binaryDataOutput?: boolean;
}

/** An encoded HTTP body plus the value of its `Inference-Header-Content-Length` header. */
export interface EncodedBody<J> {
  /** The whole body: JSON followed by the binary tail. */
  readonly body: Uint8Array;
  /** JSON byte length when a binary tail is present (send it as the header), else `undefined`. */
  readonly headerLength: number | undefined;
  /** The JSON header as an object. */
  readonly json: J;
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

function isSequenceSet(id: number | bigint | string | undefined): id is number | bigint | string {
  return id !== undefined && id !== 0 && id !== 0n && id !== '';
}

function encodeInput(input: InferInput, defaultBinary: boolean, tail: Uint8Array[]): InferInputJson {
  const json: InferInputJson = { name: input.name, shape: [...input.shape], datatype: input.datatype };
  const params: Parameters = { ...input.parameters };
  if (input.sharedMemory !== undefined) {
    writeSharedMemory(params, input.sharedMemory);
    json.parameters = params;
    return json;
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
  if (input.binaryData ?? defaultBinary) {
    const raw = tensorDataToBytes(input.datatype, data);
    tail.push(raw);
    params.binary_data_size = raw.byteLength;
    json.parameters = params;
  } else {
    if (Object.keys(params).length > 0) json.parameters = params;
    json.data = tensorDataToJson(input.datatype, data, 'input', input.name);
  }
  return json;
}

function encodeOutput(output: InferRequestedOutput, defaultBinary: boolean): InferRequestedOutputJson {
  const params: Parameters = { ...output.parameters };
  if (output.classCount !== undefined && output.classCount !== 0) {
    if (output.sharedMemory !== undefined) {
      throw new ProtocolError(
        'INVALID_VALUE',
        `output '${output.name}': shared memory can't be set on classification output`,
      );
    }
    params.classification = output.classCount;
  }
  if (output.sharedMemory !== undefined) {
    params.binary_data = false;
    writeSharedMemory(params, output.sharedMemory);
  } else {
    params.binary_data = output.binaryData ?? defaultBinary;
  }
  return { name: output.name, parameters: params };
}

/**
 * Encodes an HTTP inference request body the way the Python client's `generate_request_body` does:
 * JSON header (key order `id`, `inputs`, `outputs`, `parameters`) followed by the binary data of
 * every binary input in input order. Inputs are binary by default; FP16/BF16 must be binary.
 * @throws ProtocolError `RESERVED_PARAMETER`, `ELEMENT_COUNT_MISMATCH`, `DATATYPE_NOT_JSON`,
 *   `INVALID_VALUE`, `INVALID_BYTES_ELEMENT` (non-UTF-8 BYTES as JSON).
 */
export function encodeInferRequest(
  inputs: readonly InferInput[],
  options: InferRequestOptions = {},
): EncodedBody<InferRequestJson> {
  // Built key by key so the JSON key order matches the Python client.
  const json = {} as InferRequestJson;
  if (options.requestId !== undefined && options.requestId !== '') json.id = options.requestId;
  const parameters: Parameters = {};
  if (isSequenceSet(options.sequenceId)) {
    parameters.sequence_id = options.sequenceId;
    parameters.sequence_start = options.sequenceStart ?? false;
    parameters.sequence_end = options.sequenceEnd ?? false;
  }
  if (options.priority !== undefined && options.priority !== 0 && options.priority !== 0n) {
    parameters.priority = options.priority;
  }
  if (options.timeout !== undefined) parameters.timeout = options.timeout;

  const tail: Uint8Array[] = [];
  const defaultBinary = options.binaryData ?? true;
  json.inputs = inputs.map((input) => encodeInput(input, defaultBinary, tail));
  if (options.outputs !== undefined && options.outputs.length > 0) {
    const outputBinary = options.binaryDataOutput ?? true;
    json.outputs = options.outputs.map((o) => encodeOutput(o, outputBinary));
    if (options.binaryDataOutput !== undefined) parameters.binary_data_output = options.binaryDataOutput;
  } else if (options.binaryDataOutput ?? true) {
    parameters.binary_data_output = true;
  }
  if (options.parameters !== undefined) {
    checkCustomParameters(options.parameters);
    Object.assign(parameters, options.parameters);
  }
  if (Object.keys(parameters).length > 0) json.parameters = parameters;

  const header = utf8(stringifyJson(json));
  if (tail.length === 0) return { body: header, headerLength: undefined, json };
  let total = header.byteLength;
  for (const t of tail) total += t.byteLength;
  return { body: concatBytes([header, ...tail], total), headerLength: header.byteLength, json };
}

/**
 * Encodes the raw binary request (`Inference-Header-Content-Length: 0`): the body is just the
 * single input's raw bytes, no JSON. Triton allows it only for models with exactly one input and
 * returns every output binary. A BYTES input must hold exactly one element, and its bytes are sent
 * as they are, without the 4-byte length prefix: Triton treats the whole body as that one element.
 */
export function encodeRawBinaryRequest<D extends Datatype>(
  datatype: D,
  data: TensorValues<D>,
): { readonly body: Uint8Array; readonly headerLength: 0 } {
  const values = toTensorData(datatype, data);
  if (datatype === 'BYTES') {
    const elements = values as TensorData<'BYTES'>;
    if (elements.length !== 1 || elements[0] === undefined) {
      throw new ProtocolError(
        'INVALID_FIELD',
        `a raw binary BYTES request carries exactly one element, got ${elements.length}`,
      );
    }
    return { body: elements[0], headerLength: 0 };
  }
  return { body: tensorDataToBytes(datatype, values), headerLength: 0 };
}

/** A decoded input tensor (server side). */
export interface DecodedInput {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: number[];
  /** The data; `undefined` when the input is in shared memory. */
  readonly data: TensorData | undefined;
  /** Where the data came from. */
  readonly source: 'binary' | 'json' | 'shared_memory';
  readonly sharedMemory?: SharedMemoryRef;
  readonly parameters: Parameters;
}

/** A decoded requested output (server side). */
export interface DecodedRequestedOutput {
  readonly name: string;
  /** The output's `binary_data` parameter, if given. */
  readonly binaryData?: boolean;
  /** The output's `classification` parameter, if given and not 0. */
  readonly classCount?: number;
  readonly sharedMemory?: SharedMemoryRef;
  readonly parameters: Parameters;
}

/** A decoded JSON (+ binary tail) inference request. */
export interface DecodedInferRequest {
  readonly kind: 'json';
  readonly id?: string;
  readonly parameters: Parameters;
  readonly inputs: DecodedInput[];
  /** Requested outputs, or `undefined` when the request asks for all outputs. */
  readonly outputs: DecodedRequestedOutput[] | undefined;
  /** The parsed JSON header (input `data` left as sent). */
  readonly json: InferRequestJson;
}

/** A raw binary request: the body is the bytes of the model's single input. */
export interface RawInferRequest {
  readonly kind: 'raw';
  readonly data: Uint8Array;
}

function decodeOutputs(value: unknown): DecodedRequestedOutput[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new ProtocolError('INVALID_FIELD', "Unable to parse 'outputs'");
  const seen = new Set<string>();
  return value.map((o: unknown) => {
    if (!isObject(o)) throw new ProtocolError('INVALID_FIELD', "Unable to parse 'outputs'");
    const name = readString(o, 'name');
    if (seen.has(name)) {
      throw new ProtocolError('DUPLICATE_OUTPUT', `output '${name}' already exists in request`);
    }
    seen.add(name);
    const where = `output '${name}'`;
    const parameters = readParameters(o.parameters, where);
    const out: {
      name: string;
      parameters: Parameters;
      binaryData?: boolean;
      classCount?: number;
      sharedMemory?: SharedMemoryRef;
    } = { name, parameters };
    if (parameters.binary_data !== undefined) {
      if (typeof parameters.binary_data !== 'boolean') {
        throw new ProtocolError('INVALID_FIELD', "Unable to parse 'binary_data'");
      }
      out.binaryData = parameters.binary_data;
    }
    if (parameters.classification !== undefined) {
      const n = readSize(parameters.classification, 'classification');
      if (n !== 0) out.classCount = n;
    }
    const shm = readSharedMemory(parameters, where);
    if (shm !== undefined) out.sharedMemory = shm;
    return out;
  });
}

/**
 * Decodes an HTTP inference request body (server side): splits at `Inference-Header-Content-Length`,
 * parses the JSON (64-bit integers kept exact), validates every input, and slices the binary tail
 * per input in input order. The body must already be decompressed.
 *
 * A header value of `0` means a raw binary request: `{ kind: 'raw' }` is returned and the server
 * builds the single input from the model's config (shape deduction and batch dim are model facts).
 * @param headerLength - the raw `Inference-Header-Content-Length` header value, if any.
 * @param options.modelName - the model the request is for; Triton names it in size errors.
 * @throws ProtocolError with a stable `code` and a message fit for the HTTP error body (status 400),
 *   worded like Triton's ("Unable to parse 'inputs'", "unexpected additional input data for model
 *   'm'", "failed to parse the request JSON buffer: …", …).
 */
export function decodeInferRequest(
  body: Uint8Array,
  headerLength?: string | number | readonly string[] | null,
  options: { readonly modelName?: string } = {},
): DecodedInferRequest | RawInferRequest {
  const model = options.modelName ?? '';
  const jsonLength = parseHeaderLength(headerLength, body.byteLength);
  if (jsonLength === 0) return { kind: 'raw', data: body };
  const jsonEnd = jsonLength ?? body.byteLength;
  const parsed = parseJson(fromUtf8(body.subarray(0, jsonEnd)), 'the request JSON buffer');
  if (!isObject(parsed)) throw new ProtocolError('INVALID_FIELD', "Unable to parse 'inputs'");
  if (parsed.id !== undefined && typeof parsed.id !== 'string') {
    throw new ProtocolError('INVALID_FIELD', "Unable to parse 'id'");
  }
  const parameters = readParameters(parsed.parameters, 'the request');
  if (!Array.isArray(parsed.inputs)) throw new ProtocolError('INVALID_FIELD', "Unable to parse 'inputs'");
  const outputs = decodeOutputs(parsed.outputs);

  let offset = jsonEnd;
  const inputs = parsed.inputs.map((raw: unknown): DecodedInput => {
    if (!isObject(raw)) throw new ProtocolError('INVALID_FIELD', "Unable to parse 'inputs'");
    const name = readString(raw, 'name');
    const where = `input '${name}'`;
    const datatype = readDatatype(raw, 'input', name);
    const shape = readInputShape(raw, name, datatype);
    const params = readParameters(raw.parameters, where);
    // With a negative dim there is no count to check data against; the model checks refuse it.
    const count = shape.some((d) => d < 0) ? undefined : elementCount(shape);
    const shm = readSharedMemory(params, where);
    if (shm !== undefined) {
      if (raw.data !== undefined || params.binary_data_size !== undefined) {
        throw new ProtocolError('INVALID_FIELD', `${where} has both shared memory and data`);
      }
      return {
        name,
        datatype,
        shape,
        data: undefined,
        source: 'shared_memory',
        sharedMemory: shm,
        parameters: params,
      };
    }
    if (params.binary_data_size !== undefined) {
      if (raw.data !== undefined) {
        throw new ProtocolError('INVALID_FIELD', `${where} has both 'data' and 'binary_data_size'`);
      }
      const size = readSize(params.binary_data_size, 'binary_data_size');
      if (size > 0 && jsonLength === undefined) {
        throw new ProtocolError(
          'INVALID_HEADER_LENGTH',
          "must specify valid 'Infer-Header-Content-Length' in request header and 'binary_data_size' when passing inputs in binary data format",
        );
      }
      if (offset + size > body.byteLength) {
        throw new ProtocolError(
          'BINARY_SIZE_MISMATCH',
          `unexpected size for input '${name}', expecting ${offset + size - body.byteLength} additional bytes for model '${model}'`,
        );
      }
      const data = tensorDataFromBytes(datatype, body.subarray(offset, offset + size), count, where);
      offset += size;
      return { name, datatype, shape, data, source: 'binary', parameters: params };
    }
    if (raw.data === undefined) {
      throw new ProtocolError('INVALID_FIELD', `${where} has no 'data', 'binary_data_size' or shared memory`);
    }
    const data = tensorDataFromJson(datatype, raw.data, count, name, 'input');
    return { name, datatype, shape, data, source: 'json', parameters: params };
  });
  if (offset !== body.byteLength) {
    throw new ProtocolError('BINARY_SIZE_MISMATCH', `unexpected additional input data for model '${model}'`);
  }
  const result: DecodedInferRequest = {
    kind: 'json',
    parameters,
    inputs,
    outputs,
    json: parsed as unknown as InferRequestJson,
    ...(typeof parsed.id === 'string' ? { id: parsed.id } : {}),
  };
  return result;
}

/**
 * Whether the server should return `outputName` binary, as Triton decides it: an output listed in
 * the request's `outputs` is binary only when its own `binary_data` parameter is true (the request's
 * `binary_data_output` does not apply to it); outputs returned because none were listed follow
 * `binary_data_output`. Raw binary requests get binary outputs.
 */
export function outputWantsBinary(
  request: DecodedInferRequest | RawInferRequest,
  outputName: string,
): boolean {
  if (request.kind === 'raw') return true;
  const requested = request.outputs?.find((o) => o.name === outputName);
  // As Triton: an output listed in `outputs` is binary only when its own `binary_data` says so;
  // `binary_data_output` is the default for the outputs returned when none are listed.
  if (requested !== undefined) return requested.sharedMemory === undefined && requested.binaryData === true;
  return request.parameters.binary_data_output === true;
}
