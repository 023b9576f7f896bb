/**
 * The HTTP inference request body in both directions: `encodeInferRequest` (client) builds the JSON
 * header plus binary tail; `decodeInferRequest` (server) splits and validates it.
 * @packageDocumentation
 */
import type {
  InferInput,
  InferRequestInput,
  InferRequestOutput,
  NeutralRequestOptions,
  NeutralRequestedOutput,
} from '../message.js';
import { httpHintsOf, type HttpInferHints, type InferRequestOptions } from './hints.js';
import { BytesList } from '../bytes-list.js';
import { DATATYPE_BYTE_SIZE, isDatatype, type Datatype, type TensorData } from '../datatypes.js';
import { ProtocolError } from '../errors.js';
import { bytesListFromJson, tensorDataFromJson, tensorDataToJson } from './json-data.js';
import { parseJson, stringifyJson } from './json.js';
import { tensorDataFromBytes, tensorDataToBytes } from '../raw.js';
import {
  asUInt64,
  fromUtf8,
  hasMember,
  isObject,
  parseHeaderLength,
  readInputShape,
  readSharedMemory,
  readString,
  readUInt64,
  unableToParse,
  utf8,
  writeSharedMemory,
} from './shared.js';
import { type SharedMemoryRef } from '../shared-memory.js';
import { inputTensorData, toTensorData, type TensorValues } from '../tensor-data.js';
import { TRITON_JSON } from './triton-json.js';
import { elementCount } from '../tensor.js';
import { isReservedParameter, type Parameters } from '../parameters.js';
import { type InferInputJson, type InferRequestJson, type InferRequestedOutputJson } from './wire.js';

/**
 * An HTTP body as parts to write in order, without joining them: the JSON header, then the bytes of
 * each binary input. The parts of typed-array inputs are views on the caller's data (not copies), so
 * that data must stay unchanged until the parts have been written.
 */
export interface EncodedBodyParts<J> {
  /** The JSON header bytes, then each binary input's bytes in input order. */
  readonly parts: readonly Uint8Array[];
  /** Sum of the parts' byte lengths (the `Content-Length`). */
  readonly byteLength: number;
  /** JSON byte length when a binary tail is present (send it as the header), else `undefined`. */
  readonly headerLength: number | undefined;
  /** The JSON header as an object. */
  readonly json: J;
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
  const data = inputTensorData(input);
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

function encodeOutput(output: NeutralRequestedOutput, binary: boolean): InferRequestedOutputJson {
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
    params.binary_data = binary;
  }
  return { name: output.name, parameters: params };
}

/** True when every dim is a non-negative safe integer (its JSON text is then `String(dim)`). */
function plainShape(shape: readonly number[]): boolean {
  for (const d of shape) if (!Number.isSafeInteger(d) || d < 0) return false;
  return true;
}

/**
 * The common request, written without building the JSON object: every input binary with data and
 * a plain shape, no input parameters or shared memory, and no request option but `binaryData:
 * true`. Gives the bytes {@link encodeInferRequest}'s general path gives (same key order, same
 * number and string formatting), or `undefined` when the request is not of that kind.
 */
function encodeCommonRequest(
  inputs: readonly InferInput[],
  options: NeutralRequestOptions,
  hints: HttpInferHints,
): BodyPieces | undefined {
  if (
    (options.requestId !== undefined && options.requestId !== '') ||
    isSequenceSet(options.sequenceId) ||
    (options.priority !== undefined && options.priority !== 0 && options.priority !== 0n) ||
    options.timeout !== undefined ||
    (options.outputs !== undefined && options.outputs.length > 0) ||
    options.parameters !== undefined ||
    hints.binaryDataOutput === false ||
    options.binaryData === false
  ) {
    return undefined;
  }
  for (const input of inputs) {
    if (
      input.data === undefined ||
      input.sharedMemory !== undefined ||
      input.parameters !== undefined ||
      input.binaryData === false ||
      !plainShape(input.shape)
    ) {
      return undefined;
    }
  }
  const tail: Uint8Array[] = [];
  let text = '{"inputs":[';
  let tailSize = 0;
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i] as InferInput;
    const data = toTensorData(input.datatype, input.data as NonNullable<InferInput['data']>);
    const expected = elementCount(input.shape);
    if (data.length !== expected) {
      throw new ProtocolError(
        'ELEMENT_COUNT_MISMATCH',
        `input '${input.name}' has ${data.length} elements but shape [${input.shape.join(',')}] expects ${expected}`,
      );
    }
    const raw = tensorDataToBytes(input.datatype, data);
    tail.push(raw);
    tailSize += raw.byteLength;
    text += `${i === 0 ? '' : ','}{"name":${JSON.stringify(input.name)},"shape":[${input.shape.join(',')}],"datatype":${JSON.stringify(input.datatype)},"parameters":{"binary_data_size":${raw.byteLength}}}`;
  }
  text += '],"parameters":{"binary_data_output":true}}';
  return { header: text, headerLength: Buffer.byteLength(text), tail, tailLength: tailSize, json: undefined };
}

/**
 * An encoded request before its pieces are joined: the JSON header (as text on the common path,
 * which parses it back only when asked for `json`; as bytes on the general path) and the binary tail.
 */
interface BodyPieces {
  readonly header: string | Uint8Array;
  /** The header's UTF-8 byte length. */
  readonly headerLength: number;
  /** Each binary input's bytes (views on typed-array data), in input order. */
  readonly tail: readonly Uint8Array[];
  readonly tailLength: number;
  /** The JSON object, or `undefined` when `header` is its text (parsed on demand). */
  readonly json: InferRequestJson | undefined;
}

/** The JSON header of the pieces: the object, or parsed from the header text. */
function jsonOf(pieces: BodyPieces): InferRequestJson {
  return pieces.json ?? (JSON.parse(pieces.header as string) as InferRequestJson);
}

function headerBytes(pieces: BodyPieces): Uint8Array {
  return typeof pieces.header === 'string' ? utf8(pieces.header) : pieces.header;
}

/** Joins the pieces into one body (JSON alone when there is no binary tail). */
function joinPieces(pieces: BodyPieces): EncodedBody<InferRequestJson> {
  const { header, headerLength, tail } = pieces;
  if (tail.length === 0) return encodedBody(headerBytes(pieces), undefined, pieces);
  const body = Buffer.allocUnsafe(headerLength + pieces.tailLength);
  if (typeof header === 'string') body.write(header, 0, 'utf8');
  else body.set(header, 0);
  let offset = headerLength;
  for (const raw of tail) {
    body.set(raw, offset);
    offset += raw.byteLength;
  }
  return encodedBody(body, headerLength, pieces);
}

/** A joined body; its `json` is parsed from the header text only when read (the common path). */
function encodedBody(
  body: Uint8Array,
  headerLength: number | undefined,
  pieces: BodyPieces,
): EncodedBody<InferRequestJson> {
  if (pieces.json !== undefined) return { body, headerLength, json: pieces.json };
  return {
    body,
    headerLength,
    get json(): InferRequestJson {
      return jsonOf(pieces);
    },
  };
}

/** The pieces as parts to write in order, unjoined. */
function partsOf(pieces: BodyPieces): EncodedBodyParts<InferRequestJson> {
  return {
    parts: [headerBytes(pieces), ...pieces.tail],
    byteLength: pieces.headerLength + pieces.tailLength,
    headerLength: pieces.tail.length === 0 ? undefined : pieces.headerLength,
    get json(): InferRequestJson {
      return jsonOf(pieces);
    },
  };
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
  return joinPieces(encodePieces(inputs, options, httpHintsOf(options)));
}

/**
 * Encodes the same body as {@link encodeInferRequest}, as parts to write in order instead of one
 * buffer: the JSON header bytes, then each binary input's bytes. For typed-array inputs of their
 * datatype's array type (e.g. `Float32Array` for FP32) those parts are views on the caller's memory,
 * not copies: keep the data unchanged until the parts have been written (send them with an explicit
 * `Content-Length: byteLength`).
 * @throws ProtocolError as {@link encodeInferRequest}.
 */
export function encodeInferRequestParts(
  inputs: readonly InferInput[],
  options: InferRequestOptions = {},
): EncodedBodyParts<InferRequestJson> {
  return partsOf(encodePieces(inputs, options, httpHintsOf(options)));
}

/**
 * The body of an HTTP transport's request, from the neutral request options and the HTTP hints
 * side by side (the outputs' `binaryData` is read from `hints` only): parts
 * ({@link encodeInferRequestParts}) when the binary tail has at least `partsFromTailBytes` bytes,
 * else one buffer ({@link encodeInferRequest}); pass `Infinity` for one buffer always. The bytes
 * are those {@link encodeInferRequest} gives for the options the two describe.
 * @internal Used by the HTTP transport; not part of the supported API.
 * @throws ProtocolError as {@link encodeInferRequest}.
 */
export function encodeInferRequestBody(
  inputs: readonly InferInput[],
  request: NeutralRequestOptions,
  hints: HttpInferHints,
  partsFromTailBytes: number,
): EncodedBody<InferRequestJson> | EncodedBodyParts<InferRequestJson> {
  const pieces = encodePieces(inputs, request, hints);
  return pieces.tail.length > 0 && pieces.tailLength >= partsFromTailBytes
    ? partsOf(pieces)
    : joinPieces(pieces);
}

function encodePieces(
  inputs: readonly InferInput[],
  options: NeutralRequestOptions,
  hints: HttpInferHints,
): BodyPieces {
  const common = encodeCommonRequest(inputs, options, hints);
  if (common !== undefined) return common;
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
    const outputBinary = hints.binaryDataOutput ?? true;
    const binary = hints.outputBinaryData;
    json.outputs = options.outputs.map((o, i) => encodeOutput(o, binary?.[i] ?? outputBinary));
    if (hints.binaryDataOutput !== undefined) parameters.binary_data_output = hints.binaryDataOutput;
  } else if (hints.binaryDataOutput ?? true) {
    parameters.binary_data_output = true;
  }
  if (options.parameters !== undefined) {
    checkCustomParameters(options.parameters);
    Object.assign(parameters, options.parameters);
  }
  if (Object.keys(parameters).length > 0) json.parameters = parameters;

  const header = utf8(stringifyJson(json));
  let tailLength = 0;
  for (const t of tail) tailLength += t.byteLength;
  return { header, headerLength: header.byteLength, tail, tailLength, json };
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

/**
 * A decoded input tensor (server side): the protocol's {@link InferRequestInput}, which the server
 * takes as it is, with where its data came from.
 */
export interface DecodedInput extends InferRequestInput {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: number[];
  /**
   * The data; `undefined` when the input is in shared memory. BYTES data is a {@link BytesList} when
   * decoded with `packBytes` (the binary tail's bytes themselves, or the JSON strings packed).
   */
  readonly data: TensorData | BytesList | undefined;
  /** Where the data came from. */
  readonly source: 'binary' | 'json' | 'shared_memory';

  readonly sharedMemory?: SharedMemoryRef;
  readonly parameters: Parameters;
}

/**
 * A decoded requested output (server side): the protocol's {@link InferRequestOutput}, which the
 * server takes as it is, with the HTTP-only `binary_data` hint.
 */
export interface DecodedRequestedOutput extends InferRequestOutput {
  readonly name: string;
  /** The output's `binary_data` parameter, if given. */
  readonly binaryData?: boolean;
  /** The output's `classification` parameter, if given and not 0. */
  readonly classCount?: number;
  readonly sharedMemory?: SharedMemoryRef;
  readonly parameters: Parameters;
}

/**
 * A decoded JSON (+ binary tail) inference request: the protocol's request content (`id`,
 * `inputs`, `outputs`; the model comes from the URL) with the HTTP-only parts: the request's
 * `parameters` as sent (`binary_data_output` included, which only shapes the response; see
 * {@link outputWantsBinary}) and the parsed JSON header.
 */
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

/** A request's `[request id: X] ` prefix, as Triton's core puts it before its messages. */
function requestPrefix(id: string | undefined): string {
  return id !== undefined && id !== '' ? `[request id: ${id}] ` : '';
}

/** The scalar members of a tensor's `parameters` (Triton ignores a `parameters` that is not an object). */
function tensorParameters(value: unknown): Parameters {
  if (!isObject(value)) return {};
  const out: Parameters = {};
  for (const [k, v] of Object.entries(value)) {
    const t = typeof v;
    if (t === 'string' || t === 'number' || t === 'bigint' || t === 'boolean')
      out[k] = v as Parameters[string];
  }
  return out;
}

/**
 * The request's `parameters`, checked member by member in document order as Triton's
 * `ParseJsonTritonParams` does, with its messages.
 */
function readRequestParameters(parsed: unknown): Parameters {
  if (!hasMember(parsed, 'parameters')) return {};
  const value = parsed.parameters;
  if (!isObject(value)) {
    throw new ProtocolError(
      'INVALID_FIELD',
      `failed to get request params.: ${TRITON_JSON.notObjectMembers}`,
    );
  }
  for (const [key, v] of Object.entries(value)) {
    switch (key) {
      case 'sequence_id':
        if (asUInt64(v) === undefined && typeof v !== 'string')
          throw unableToParse(key, TRITON_JSON.notString);
        break;
      case 'sequence_start':
      case 'sequence_end':
      case 'binary_data_output':
        if (typeof v !== 'boolean') throw unableToParse(key, TRITON_JSON.notBool);
        break;
      case 'priority':
      case 'timeout':
        readUInt64(v, key);
        break;
      default:
        if (key.startsWith('triton_')) {
          throw new ProtocolError(
            'RESERVED_PARAMETER',
            "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.",
          );
        }
        if (
          typeof v !== 'string' &&
          typeof v !== 'number' &&
          typeof v !== 'bigint' &&
          typeof v !== 'boolean'
        ) {
          throw new ProtocolError(
            'INVALID_FIELD',
            `parameter '${key}' has invalid type. It should be either 'int', 'bool', or 'string'.`,
          );
        }
    }
  }
  return value as Parameters;
}

/** Triton's `ValidateInputContentType`: exactly one of data, binary_data_size, shared memory. */
function checkInputContent(raw: unknown): 'data' | 'binary' | 'shared_memory' {
  const hasData = hasMember(raw, 'data');
  const params = isObject(raw) ? raw.parameters : undefined;
  const hasBinary = hasMember(params, 'binary_data_size');
  const hasShm = hasMember(params, 'shared_memory_region');
  const set = Number(hasData) + Number(hasBinary) + Number(hasShm);
  if (set !== 1) {
    let message =
      "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But";
    if (set === 0) message += ' no field is set';
    else {
      message += ' set';
      if (hasData) message += " 'data'";
      if (hasBinary) message += " 'binary_data_size'";
      if (hasShm) message += " 'shared_memory_region'";
    }
    throw new ProtocolError('INVALID_FIELD', message);
  }
  return hasData ? 'data' : hasBinary ? 'binary' : 'shared_memory';
}

const INT64_MAX = 0x7fff_ffff_ffff_ffffn;

function decodeOutputs(
  parsed: Record<string, unknown>,
  prefix: string,
): DecodedRequestedOutput[] | undefined {
  if (!Object.hasOwn(parsed, 'outputs')) return undefined;
  const value = parsed.outputs;
  if (!Array.isArray(value)) throw unableToParse('outputs', TRITON_JSON.notArray);
  const seen = new Set<string>();
  return value.map((o: unknown) => {
    // Triton's ValidateOutputParameter, then the name, then the other parameters.
    const params = isObject(o) ? o.parameters : undefined;
    if (hasMember(params, 'shared_memory_region')) {
      if (Object.hasOwn(params, 'classification')) {
        throw new ProtocolError(
          'INVALID_FIELD',
          "Output can't set both 'shared_memory_region' and 'classification'",
        );
      }
      if (Object.hasOwn(params, 'binary_data')) {
        if (typeof params.binary_data !== 'boolean') {
          throw new ProtocolError('INVALID_FIELD', `Unable to set 'binary_data': ${TRITON_JSON.notBool}`);
        }
        if (params.binary_data) {
          throw new ProtocolError(
            'INVALID_FIELD',
            "Output can't set both 'shared_memory_region' and 'binary_data'",
          );
        }
      }
    }
    const name = readString(o, 'name');
    if (seen.has(name)) {
      throw new ProtocolError('DUPLICATE_OUTPUT', `${prefix}output '${name}' already exists in request`);
    }
    seen.add(name);
    const out: {
      name: string;
      parameters: Parameters;
      binaryData?: boolean;
      classCount?: number;
      sharedMemory?: SharedMemoryRef;
    } = { name, parameters: tensorParameters(params) };
    if (hasMember(params, 'classification')) {
      const n = asUInt64(params.classification);
      if (n === undefined) {
        throw new ProtocolError('INVALID_FIELD', `Unable to set 'classification': ${TRITON_JSON.notUInt}`);
      }
      if (n !== 0) out.classCount = Number(n);
    }
    const shm = readSharedMemory(params);
    if (shm !== undefined) {
      out.sharedMemory = shm;
    } else if (hasMember(params, 'binary_data')) {
      if (typeof params.binary_data !== 'boolean') throw unableToParse('binary_data', TRITON_JSON.notBool);
      out.binaryData = params.binary_data;
    }
    return out;
  });
}

/**
 * Decodes an HTTP inference request body (server side) the way Triton's HTTP front end does, in its
 * order and with its messages: splits at `Inference-Header-Content-Length`, parses the JSON (64-bit
 * integers kept exact, no recursion on nesting), reads `id`, then the request `parameters`, then each
 * input (content fields, `name`, `datatype`, `shape`, duplicates, binary / shared-memory / JSON
 * data), then checks that the binary tail was used up, then the requested outputs. The body must
 * already be decompressed.
 *
 * A header value of `0`, or an empty body without the header, means a raw binary request:
 * `{ kind: 'raw' }` is returned and the server builds the single input from the model's config
 * (shape deduction and batch dim are model facts).
 *
 * What Triton checks later against the model is left to the server: the byte size of binary and
 * shared-memory data, the string count of BYTES, and the shared-memory regions themselves.
 * @param headerLength - the raw `Inference-Header-Content-Length` header value, if any.
 * @param options.modelName - the model the request is for; Triton names it in size errors.
 * @param options.packBytes - decode BYTES inputs as a {@link BytesList} (one buffer: a view into
 *   `body` for binary data) instead of one `Uint8Array` per element.
 * @throws ProtocolError with a stable `code` and a message fit for the HTTP error body (status 400),
 *   worded like Triton's ("Unable to parse 'inputs': attempt to access non-existing object member
 *   'inputs'", "unexpected additional input data for model 'm'", "failed to parse the request JSON
 *   buffer: …", …).
 */
export function decodeInferRequest(
  body: Uint8Array,
  headerLength?: string | number | readonly string[] | null,
  options: { readonly modelName?: string; readonly packBytes?: boolean } = {},
): DecodedInferRequest | RawInferRequest {
  const model = options.modelName ?? '';
  const packBytes = options.packBytes === true;
  const jsonLength = parseHeaderLength(headerLength, body.byteLength);
  // Without the header the JSON is the whole body, so an empty body is a raw request (as in Triton).
  if (jsonLength === 0 || (jsonLength === undefined && body.byteLength === 0))
    return { kind: 'raw', data: body };
  const jsonEnd = jsonLength ?? body.byteLength;
  const parsed = parseJson(fromUtf8(body.subarray(0, jsonEnd)), 'the request JSON buffer');

  let id: string | undefined;
  if (hasMember(parsed, 'id')) {
    if (typeof parsed.id !== 'string') throw unableToParse('id', TRITON_JSON.notString);
    id = parsed.id;
  }
  const prefix = requestPrefix(id);
  const parameters = readRequestParameters(parsed);
  if (!hasMember(parsed, 'inputs')) throw unableToParse('inputs', TRITON_JSON.missing('inputs'));
  if (!Array.isArray(parsed.inputs)) throw unableToParse('inputs', TRITON_JSON.notArray);

  let offset = jsonEnd;
  const names = new Set<string>();
  const inputs = parsed.inputs.map((raw: unknown): DecodedInput => {
    const content = checkInputContent(raw);
    const name = readString(raw, 'name');
    const datatypeText = readString(raw, 'datatype');
    const { dims: shape, exact, count } = readInputShape(raw as Record<string, unknown>);
    if (names.has(name)) {
      throw new ProtocolError('INVALID_FIELD', `${prefix}input '${name}' already exists in request`);
    }
    names.add(name);
    const input = raw as Record<string, unknown>;
    const params = tensorParameters(input.parameters);
    // Binary and shared-memory data are sized against the shape by the model checks; a shape whose
    // element count overflows int64 cannot be sized at all (protocol.md §6.1).
    const tooManyElements = (): ProtocolError =>
      new ProtocolError('INVALID_VALUE', `input '${name}' has too many elements of datatype ${datatypeText}`);
    if (content === 'binary') {
      const size = readUInt64(
        (input.parameters as Record<string, unknown>).binary_data_size,
        'binary_data_size',
      );
      if (!isDatatype(datatypeText)) {
        throw new ProtocolError('UNKNOWN_DATATYPE', `invalid datatype for input ${name}`);
      }
      if (count === undefined) throw tooManyElements();
      if (typeof size === 'bigint' || offset + size > body.byteLength) {
        throw new ProtocolError(
          'BINARY_SIZE_MISMATCH',
          `unexpected size for input '${name}', expecting ${BigInt(offset) + BigInt(size) - BigInt(body.byteLength)} additional bytes for model '${model}'`,
        );
      }
      const bytes = body.subarray(offset, offset + size);
      offset += size;
      return {
        name,
        datatype: datatypeText,
        shape,
        data: decodeBinaryInput(datatypeText, bytes, name, count, model, prefix, packBytes),
        source: 'binary',
        parameters: params,
      };
    }
    if (content === 'shared_memory') {
      const shm = readSharedMemory(input.parameters) as SharedMemoryRef;
      if (!isDatatype(datatypeText)) {
        throw new ProtocolError('UNKNOWN_DATATYPE', `invalid datatype for input ${name}`);
      }
      if (count === undefined) throw tooManyElements();
      return {
        name,
        datatype: datatypeText,
        shape,
        data: undefined,
        source: 'shared_memory',
        sharedMemory: shm,
        parameters: params,
      };
    }
    // JSON data. As Triton, nothing about `data` is looked at when the shape has no elements.
    if (count === undefined) {
      throw new ProtocolError(
        'INVALID_VALUE',
        `input '${name}' with shape [${exact.join(',')}] causes total element count to exceed maximum size of ${INT64_MAX}`,
      );
    }
    if (!isDatatype(datatypeText)) {
      if (count !== 0n && !Array.isArray(input.data)) throw unableToParse('data', TRITON_JSON.notArray);
      throw new ProtocolError('UNKNOWN_DATATYPE', `invalid datatype for input ${name}`);
    }
    const datatype = datatypeText;
    if (count === 0n) {
      const data = packBytes && datatype === 'BYTES' ? BytesList.from([]) : emptyTensorData(datatype);
      return { name, datatype, shape, data, source: 'json', parameters: params };
    }
    if (datatype !== 'BYTES' && count * BigInt(DATATYPE_BYTE_SIZE[datatype]) > INT64_MAX) {
      throw new ProtocolError(
        'INVALID_VALUE',
        `byte size overflow for input '${name}': ${count} elements of ${datatype} exceed the maximum byte size of ${INT64_MAX}`,
      );
    }
    const data =
      packBytes && datatype === 'BYTES'
        ? bytesListFromJson(input.data)
        : tensorDataFromJson(datatype, input.data, Number(count), name, 'input');
    return { name, datatype, shape, data, source: 'json', parameters: params };
  });
  if (offset !== body.byteLength) {
    throw new ProtocolError('BINARY_SIZE_MISMATCH', `unexpected additional input data for model '${model}'`);
  }
  const outputs = decodeOutputs(parsed, prefix);
  const result: DecodedInferRequest = {
    kind: 'json',
    parameters,
    inputs,
    outputs,
    json: parsed as unknown as InferRequestJson,
    ...(id !== undefined ? { id } : {}),
  };
  return result;
}

/** Empty tensor data of a datatype (an input whose shape has no elements). */
function emptyTensorData(datatype: Datatype): TensorData {
  return datatype === 'BYTES' ? [] : tensorDataFromBytes(datatype, new Uint8Array(0));
}

/**
 * The data of a binary input. Its element count against the shape is the model's check (Triton's
 * core makes it after the datatype and shape checks); only bytes that do not even divide into
 * elements are refused here, with the core's message.
 */
function decodeBinaryInput(
  datatype: Datatype,
  bytes: Uint8Array,
  name: string,
  count: bigint,
  model: string,
  prefix: string,
  packBytes: boolean,
): TensorData | BytesList {
  if (datatype === 'BYTES') {
    return packBytes
      ? BytesList.fromSerialized(bytes, undefined, `input '${name}'`)
      : tensorDataFromBytes('BYTES', bytes, undefined, `input '${name}'`);
  }
  const size = DATATYPE_BYTE_SIZE[datatype];
  if (bytes.byteLength % size !== 0) {
    throw new ProtocolError(
      'BINARY_SIZE_MISMATCH',
      `${prefix}input byte size mismatch for input '${name}' for model '${model}'. Expected ${count * BigInt(size)}, got ${bytes.byteLength}`,
    );
  }
  return tensorDataFromBytes(datatype, bytes);
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
