/**
 * Triton's generate extension (`POST v2/models/{m}[/versions/{v}]/generate` and `…/generate_stream`)
 * in both directions, as Triton's HTTP front end maps it (`src/http_server.cc`:
 * `HandleGenerate`, `GenerateRequestClass::ConvertGenerateRequest` / `ExactMappingInput`,
 * `FinalizeResponse` / `ExactMappingOutput`, and the SSE framing of `generate_stream`).
 *
 * Request: one JSON object. Each member whose key names one of the model's inputs (its *metadata*
 * inputs: datatype and shape with −1 for variable dimensions, the batch dimension included) becomes
 * that input; any other member becomes a request parameter (string, integer, boolean or double). The
 * member `parameters`, when present, must be an object whose members are mapped the same way (an
 * input may be given there too). `id`, when present, must be a string: the request id (and, as in
 * Triton, also a parameter `id`). A scalar is one element; an array's top-level length is the element
 * count, spread over the input's shape: fixed dimensions first (innermost out), the innermost
 * variable dimension takes the rest, other variable dimensions are 1. Strings are BYTES.
 *
 * Response: one JSON object with `model_name`, `model_version`, `id` (when the request had one), each
 * response parameter and each output by name, in key order (Triton writes them from a sorted map;
 * on a clash the reserved names win over parameters, parameters over outputs). An output of one
 * element is written as a scalar, any other as a flat array; BYTES are strings.
 *
 * Streaming: each response is one Server-Sent Event, `data: <json>\n\n`; an error is
 * `{"error":"<message>"}` (in-band, in the same framing, once the stream has started). The events
 * are read back by `sse.ts` (`readServerSentEvents`).
 *
 * The functions here are pure (no I/O): the server decodes requests and encodes response events,
 * the client encodes requests and decodes response events.
 * @packageDocumentation
 */
import type { BytesList } from '../bytes-list.js';
import { DATATYPE_BYTE_SIZE, isDatatype, type Datatype, type TensorData } from '../datatypes.js';
import { ProtocolError } from '../errors.js';
import type { InferRequestInput, ServerInferResponse } from '../message.js';
import type { Parameters, ParameterValue } from '../parameters.js';
import { bytesListFromJson, tensorDataFromJson, tensorDataToJson } from './json-data.js';
import { parseJson, stringifyJson } from './json.js';
import { TRITON_JSON } from './triton-json.js';

const keyEncoder = new TextEncoder();

/** The request member whose object holds more inputs and parameters (Triton's nested schema). */
export const GENERATE_PARAMETERS_KEY = 'parameters';

/** Response members Triton writes from the response itself (never from an output or parameter). */
export const GENERATE_RESERVED_KEYS: readonly string[] = ['id', 'model_name', 'model_version'];

/** `Content-Type` of a `generate_stream` response (Triton's). */
export const GENERATE_STREAM_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/**
 * One input of the model as the generate mapping reads it: the model metadata's `inputs` entry
 * (`GET v2/models/{m}` → `inputs[i]`).
 */
export interface GenerateModelInput {
  readonly name: string;
  /** Protocol datatype (`FP32`, `BYTES`, …). */
  readonly datatype: string;
  /** Dimensions with −1 for a variable one, the batch dimension (−1) included for a batching model. */
  readonly shape: readonly (number | bigint)[];
}

/** A JSON value of a generate request member (a tensor's data or a parameter). */
export type GenerateValue = string | number | bigint | boolean | null | readonly GenerateValue[] | object;

/** What {@link decodeGenerateRequest} produces: the request's id, inputs and parameters. */
export interface DecodedGenerateRequest {
  /** The request id (`id`, a string), when given. */
  readonly id?: string;
  /** The inputs, in document order (top level first, then `parameters`' members in their place). */
  readonly inputs: readonly InferRequestInput[];
  /** Every member that is not an input, in document order (Triton's request parameters). */
  readonly parameters: Parameters;
}

/** Options of {@link decodeGenerateRequest}. */
export interface DecodeGenerateRequestOptions {
  /**
   * `--http-max-input-size`: the most bytes the request's inputs may take together (BYTES: each
   * string's UTF-8 length + 4). Absent: no bound.
   */
  readonly maxInputSize?: number;
}

function invalid(message: string): ProtocolError {
  return new ProtocolError('INVALID_FIELD', message);
}

/** TritonJson's `Members` on a value that is not an object. */
const NOT_OBJECT_MEMBERS = TRITON_JSON.notObjectMembers;
/** TritonJson's `MemberAsObject` on a member that is not an object. */
const NOT_OBJECT = 'attempt to access JSON non-object as object';

/**
 * Parses a generate request body (UTF-8 JSON text) the way Triton reads it before mapping it.
 * @throws ProtocolError `MALFORMED_JSON` ("failed to parse the request JSON buffer: …")
 */
export function parseGenerateRequestBody(body: Uint8Array | string): unknown {
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  return parseJson(text, 'the request JSON buffer');
}

/** A request parameter from a member that is not an input (`SetTritonParameterFromJsonParameter`). */
function parameterValue(key: string, value: unknown): ParameterValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return value;
    case 'bigint':
      // Beyond int64 Triton reads the number as a double.
      return value >= -(2n ** 63n) && value < 2n ** 63n ? value : Number(value);
    default:
      throw invalid(`parameter '${key}' has invalid type. It should be either 'int', 'bool', or 'string'.`);
  }
}

/** `JsonBytesArrayByteSize`: each string's UTF-8 length + 4, walking nested arrays. */
function bytesByteSize(value: unknown): number {
  const encoder = keyEncoder;
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else if (typeof v === 'string') {
      total += encoder.encode(v).byteLength + 4;
    } else {
      throw new ProtocolError('INVALID_VALUE', `Unable to parse JSON bytes array: ${TRITON_JSON.notString}`);
    }
  }
  return total;
}

/**
 * The shape Triton gives `count` elements of an input whose metadata shape is `dims`: fixed
 * dimensions divide the count (innermost first), the innermost variable dimension takes what is
 * left, other variable dimensions are 1.
 * @throws ProtocolError when the count does not fit ("The schema can not convert input …").
 */
export function generateInputShape(
  name: string,
  dims: readonly (number | bigint)[],
  count: number,
): number[] {
  const shape = dims.map(Number);
  const refuse = (): ProtocolError =>
    invalid(`The schema can not convert input '${name}' to tensor with proper shape`);
  let left = count;
  for (let i = shape.length - 1; i >= 0; i--) {
    const d = shape[i] as number;
    if (d === -1) continue;
    if (d <= 0 || left % d !== 0) throw refuse();
    left /= d;
  }
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] === -1) {
      shape[i] = left;
      left = 1;
    }
  }
  if (left !== 1) throw refuse();
  return shape;
}

/** Running state of one request's conversion. */
interface Conversion {
  readonly byName: ReadonlyMap<string, GenerateModelInput>;
  readonly inputs: InferRequestInput[];
  readonly parameters: Parameters;
  readonly maxInputSize: number | undefined;
  inputBytes: number;
}

/** `ExactMappingInput`: `key` of `holder` becomes an input (when the model has one by that name) or a parameter. */
function mapMember(c: Conversion, key: string, value: unknown): void {
  const meta = c.byName.get(key);
  if (meta === undefined) {
    c.parameters[key] = parameterValue(key, value);
    return;
  }
  const datatype = meta.datatype;
  const count = Array.isArray(value) ? value.length : 1;
  let byteSize: number;
  if (datatype === 'BYTES') byteSize = bytesByteSize(value);
  else {
    const size = isDatatype(datatype) ? DATATYPE_BYTE_SIZE[datatype as Exclude<Datatype, 'BYTES'>] : 0;
    byteSize = count * size;
  }
  c.inputBytes += byteSize;
  if (c.maxInputSize !== undefined && c.inputBytes > c.maxInputSize) {
    throw invalid(
      `request size of ${c.inputBytes} bytes with input '${key}' of size ${byteSize} bytes exceeds the maximum allowed input size of ${c.maxInputSize}. Use --http-max-input-size to increase the limit.`,
    );
  }
  const shape = generateInputShape(key, meta.shape, count);
  const elements = Array.isArray(value) ? value : [value];
  let data: TensorData | BytesList;
  if (datatype === 'BYTES') data = bytesListFromJson(elements);
  else if (isDatatype(datatype)) data = tensorDataFromJson(datatype, elements, count, key, 'input');
  else throw new ProtocolError('UNKNOWN_DATATYPE', `invalid datatype for input ${key}`);
  c.inputs.push({ name: key, datatype, shape, data });
}

/**
 * Maps a parsed generate request body onto the model's inputs (Triton's `ConvertGenerateRequest`
 * with its default schema): see the module comment. Checks are Triton's, in its order, with its
 * messages; what Triton checks later against the model (input count, duplicate inputs, BYTES
 * element count) is left to the server's model checks.
 * @param body - the parsed JSON ({@link parseGenerateRequestBody}).
 * @param modelInputs - the model metadata's inputs.
 * @throws ProtocolError (status 400) for a body that cannot be mapped.
 */
export function decodeGenerateRequest(
  body: unknown,
  modelInputs: readonly GenerateModelInput[],
  options: DecodeGenerateRequestOptions = {},
): DecodedGenerateRequest {
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  let id: string | undefined;
  if (isObject && 'id' in body) {
    const value = (body as Record<string, unknown>).id;
    if (typeof value !== 'string') throw invalid(`Unable to parse 'id': ${TRITON_JSON.notString}`);
    id = value;
  }
  if (!isObject) throw invalid(NOT_OBJECT_MEMBERS);
  const c: Conversion = {
    byName: new Map(modelInputs.map((i) => [i.name, i])),
    inputs: [],
    parameters: {},
    maxInputSize: options.maxInputSize,
    inputBytes: 0,
  };
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (key !== GENERATE_PARAMETERS_KEY) {
      mapMember(c, key, value);
      continue;
    }
    if (c.byName.has(key)) {
      throw invalid(`Keyword '${key}' for nested schema also given as input tensor name`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw invalid(`Expected JSON object for keyword: '${key}': ${NOT_OBJECT}`);
    }
    try {
      for (const [inner, v] of Object.entries(value as Record<string, unknown>)) mapMember(c, inner, v);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      throw new ProtocolError(error.code, `Converting keyword: '${key}': ${error.message}`, {
        cause: error,
        status: error.status,
      });
    }
  }
  return { ...(id !== undefined ? { id } : {}), inputs: c.inputs, parameters: c.parameters };
}

/** One value of a client's generate request: a JSON value or a typed array (sent as a JSON array). */
export type GenerateRequestValue = GenerateValue | ArrayLike<number> | ArrayLike<bigint>;

/** Options of {@link encodeGenerateRequest}. */
export interface EncodeGenerateRequestOptions {
  /** The request id (`id`). */
  readonly id?: string;
  /** Members of the `parameters` object (request parameters, or inputs given there). */
  readonly parameters?: Readonly<Record<string, GenerateRequestValue>>;
}

function toJsonValue(value: GenerateRequestValue): unknown {
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return Array.from(value as unknown as ArrayLike<number | bigint>);
  }
  return value;
}

/**
 * The body of a generate request (client side): `inputs` as top-level members (input name → value),
 * `id` and `parameters` as given. Typed arrays become JSON arrays; `bigint` values are written as
 * exact integers.
 * @throws ProtocolError `INVALID_FIELD` when an input is named `id` or `parameters` (those members
 *   are the request's own) or when `parameters` is given both ways.
 */
export function encodeGenerateRequest(
  inputs: Readonly<Record<string, GenerateRequestValue>>,
  options: EncodeGenerateRequestOptions = {},
): string {
  const body: Record<string, unknown> = {};
  if (options.id !== undefined) body.id = options.id;
  for (const [name, value] of Object.entries(inputs)) {
    if (name === 'id' || name === GENERATE_PARAMETERS_KEY) {
      throw invalid(`'${name}' is a member of the generate request itself, not an input name`);
    }
    body[name] = toJsonValue(value);
  }
  if (options.parameters !== undefined) {
    const parameters: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(options.parameters)) parameters[k] = toJsonValue(v);
    body[GENERATE_PARAMETERS_KEY] = parameters;
  }
  return stringifyJson(body);
}

/** A member of a response object as {@link encodeGenerateResponse} writes it. */
type ResponseMember =
  { readonly kind: 'text'; readonly value: string } | { readonly kind: 'json'; readonly value: unknown };

/** Bytewise (UTF-8) order of keys, as `std::map<std::string, …>` sorts them. */
function compareKeys(a: string, b: string): number {
  const x = keyEncoder.encode(a);
  const y = keyEncoder.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
}

/**
 * The JSON text of one generate response (server side), as Triton's `FinalizeResponse` writes it:
 * see the module comment. Outputs in shared memory are not expected (the generate extension never
 * asks for them).
 * @throws ProtocolError `DATATYPE_NOT_JSON` for an FP16/BF16 output, `INVALID_BYTES_ELEMENT` for a
 *   BYTES output that is not UTF-8.
 */
export function encodeGenerateResponse(response: ServerInferResponse): string {
  const members = new Map<string, ResponseMember>();
  // std::map::emplace keeps the first value of a key: reserved names, then parameters, then outputs.
  if (response.id !== undefined && response.id !== '')
    members.set('id', { kind: 'text', value: response.id });
  members.set('model_name', { kind: 'text', value: response.modelName });
  members.set('model_version', { kind: 'text', value: response.modelVersion });
  for (const [key, value] of Object.entries(response.parameters ?? {})) {
    if (!members.has(key)) members.set(key, { kind: 'json', value });
  }
  for (const output of response.outputs) {
    if (members.has(output.name)) continue;
    const t = output.tensor;
    const data = tensorDataToJson(t.datatype, t.data, 'output', t.name);
    let count = 1;
    for (const d of t.shape) count *= d;
    members.set(output.name, { kind: 'json', value: count === 1 ? data[0] : data });
  }
  const keys = [...members.keys()].sort(compareKeys);
  let text = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const member = members.get(key) as ResponseMember;
    text += `${i > 0 ? ',' : ''}${JSON.stringify(key)}:${member.kind === 'text' ? JSON.stringify(member.value) : stringifyJson(member.value)}`;
  }
  return `${text}}`;
}

/** The JSON text of an error (`{"error":"<message>"}`), in or out of a stream. */
export function encodeGenerateError(message: string): string {
  return JSON.stringify({ error: message });
}

/** One Server-Sent Event carrying `json` (Triton's framing: `data: ` + the JSON + a blank line). */
export function frameServerSentEvent(json: string): string {
  return `data: ${json}\n\n`;
}

/** A decoded generate response (client side). */
export interface GenerateResponse {
  readonly modelName: string;
  readonly modelVersion: string;
  /** The request id, when the request had one. */
  readonly id?: string;
  /**
   * Every other member: the outputs by name (a scalar for one element, else a flat array; BYTES as
   * strings) and the response's parameters, which Triton writes beside them without a mark.
   */
  readonly values: Readonly<Record<string, unknown>>;
}

/** A decoded generate response event: a response, or an error the server sent. */
export type GenerateEvent =
  | { readonly kind: 'response'; readonly response: GenerateResponse }
  | { readonly kind: 'error'; readonly message: string };

/**
 * Decodes one generate response body or one `generate_stream` event's data (client side). An object
 * with a string `error` member is an error event.
 * @throws ProtocolError `MALFORMED_JSON` for text that is not JSON, `INVALID_FIELD` for JSON that is
 *   not a response object (no string `model_name` / `model_version`).
 */
export function decodeGenerateEvent(json: string): GenerateEvent {
  const value = parseJson(json, 'the generate response');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('a generate response must be a JSON object');
  }
  const obj = value as Record<string, unknown>;
  if (typeof obj.error === 'string' && obj.model_name === undefined) {
    return { kind: 'error', message: obj.error };
  }
  const { model_name: modelName, model_version: modelVersion, id, ...values } = obj;
  if (typeof modelName !== 'string' || typeof modelVersion !== 'string') {
    throw invalid("a generate response must have string 'model_name' and 'model_version' members");
  }
  const response: GenerateResponse = {
    modelName,
    modelVersion,
    ...(typeof id === 'string' ? { id } : {}),
    values: typeof id === 'string' || id === undefined ? values : { ...values, id },
  };
  return { kind: 'response', response };
}
