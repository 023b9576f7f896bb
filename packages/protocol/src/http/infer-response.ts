/**
 * The HTTP inference response body in both directions: `encodeInferResponse` (server) and
 * `decodeInferResponse` (client).
 * @packageDocumentation
 */
import { BytesList } from '../bytes-list.js';
import type { Datatype } from '../datatypes.js';
import { ProtocolError } from '../errors.js';
import { tensorDataFromJson, tensorDataToJson } from './json-data.js';
import { parseJson, stringifyJson } from './json.js';
import { tensorDataFromBytes, tensorDataToBytes } from '../raw.js';
import {
  concatBytes,
  fromUtf8,
  isObject,
  parseHeaderLength,
  readDatatype,
  readParameters,
  readShape,
  readSize,
  readString,
  utf8,
} from './shared.js';
import type { EncodedBody } from './infer-request.js';
import type { InferResponse, InferResponseMessage, InferResponseOutput } from '../message.js';
import { elementCount } from '../tensor.js';
import type { InferOutputJson, InferResponseJson } from './wire.js';
import type { Parameters } from '../parameters.js';

/** Content type of an encoded body: octet-stream when a binary tail is present, else JSON. */
export function contentTypeFor(headerLength: number | undefined): string {
  return headerLength === undefined ? 'application/json' : 'application/octet-stream';
}

/**
 * Encodes an HTTP inference response body (server side): JSON (`model_name`, `model_version`,
 * `id`, `parameters`, `outputs`) followed by the binary outputs in output order, each announced by
 * `parameters.binary_data_size`. Send `headerLength` as `Inference-Header-Content-Length` when
 * defined (see {@link contentTypeFor}).
 * @throws ProtocolError `DATATYPE_NOT_JSON` when an FP16/BF16 output must be JSON (Triton's
 *   "sending FP16 data via JSON is not supported. Please use the binary data format for output").
 */
export function encodeInferResponse(message: InferResponseMessage): EncodedBody<InferResponseJson> {
  const json = { model_name: message.modelName, model_version: message.modelVersion } as InferResponseJson;
  if (message.id !== undefined && message.id !== '') json.id = message.id;
  if (message.parameters !== undefined && Object.keys(message.parameters).length > 0) {
    json.parameters = message.parameters;
  }
  const tail: Uint8Array[] = [];
  const spliced: Splice[] = [];
  json.outputs = message.outputs.map(({ tensor, binary, omitData, parameters }): InferOutputJson => {
    const out: InferOutputJson = { name: tensor.name, datatype: tensor.datatype, shape: [...tensor.shape] };
    const params: Parameters = { ...parameters };
    if (omitData === true) {
      if (Object.keys(params).length > 0) out.parameters = params;
    } else if (binary) {
      const raw = tensorDataToBytes(tensor.datatype, tensor.data);
      tail.push(raw);
      params.binary_data_size = raw.byteLength;
      out.parameters = params;
    } else {
      if (Object.keys(params).length > 0) out.parameters = params;
      if (BytesList.isBytesList(tensor.data)) {
        // Written straight from the list's memory (no string per element), spliced in below.
        const mark = `\u0000${spliced.length}:${SPLICE_NONCE}`;
        spliced.push({ mark: JSON.stringify(mark), text: tensor.data.toJson(), out, data: tensor.data });
        out.data = mark as unknown as NonNullable<InferOutputJson['data']>;
      } else {
        out.data = tensorDataToJson(tensor.datatype, tensor.data, 'output', tensor.name);
      }
    }
    return out;
  });
  const header = spliced.length === 0 ? utf8(stringifyJson(json)) : splice(stringifyJson(json), spliced);
  if (tail.length === 0) return { body: header, headerLength: undefined, json };
  let total = header.byteLength;
  for (const t of tail) total += t.byteLength;
  return { body: concatBytes([header, ...tail], total), headerLength: header.byteLength, json };
}

/** A nonce in the marks of spliced data (no JSON text of a response can hold a NUL and this). */
const SPLICE_NONCE = Array.from(globalThis.crypto.getRandomValues(new Uint8Array(12)), (b) =>
  b.toString(16).padStart(2, '0'),
).join('');

/** A BYTES output's JSON data, written apart and spliced into the header at its mark. */
interface Splice {
  /** The mark as it appears in the stringified header (a JSON string). */
  readonly mark: string;
  readonly text: Uint8Array;
  readonly out: InferOutputJson;
  readonly data: BytesList;
}

/**
 * The UTF-8 header with each mark replaced by its data's JSON text; the header object's `data` of
 * those outputs reads the strings when first asked for.
 */
function splice(header: string, spliced: readonly Splice[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const s of spliced) {
    const at = header.indexOf(s.mark, from);
    parts.push(utf8(header.slice(from, at)), s.text);
    from = at + s.mark.length;
    const { out, data } = s;
    let strings: string[] | undefined;
    Object.defineProperty(out, 'data', {
      enumerable: true,
      configurable: true,
      get: () => (strings ??= data.toStrings()),
    });
  }
  parts.push(utf8(header.slice(from)));
  return concatBytes(parts);
}

/** One decoded output (client side): the neutral {@link InferResponseOutput}. */
export type DecodedOutput<D extends Datatype = Datatype> = InferResponseOutput<D>;

/**
 * A decoded HTTP inference response (client side): the neutral {@link InferResponse} plus the
 * parsed JSON header. Transports hand on only the neutral part ({@link inferResponseFromHttp}).
 */
export interface DecodedInferResponse extends InferResponse {
  /** The parsed JSON header as received (output `data` left as sent). */
  readonly json: InferResponseJson;
}

/**
 * Decodes an HTTP inference response body (client side). The body must already be decompressed.
 * Splits at `headerLength` (absent: the whole body is JSON), slices each output with
 * `binary_data_size` from the tail by cumulative offset in output order (size 0 → empty data),
 * falls back to JSON `data`, and checks every element count against the shape. Binary data is a
 * zero-copy view into `body` when aligned.
 * @throws ProtocolError on any inconsistency.
 */
export function decodeInferResponse(
  body: Uint8Array,
  headerLength?: string | number | readonly string[] | null,
): DecodedInferResponse {
  const jsonLength = parseHeaderLength(headerLength, body.byteLength);
  const jsonEnd = jsonLength ?? body.byteLength;
  const parsed = parseJson(fromUtf8(body.subarray(0, jsonEnd)), 'the response JSON');
  if (!isObject(parsed) || !Array.isArray(parsed.outputs)) {
    throw new ProtocolError('INVALID_FIELD', `the response JSON has no 'outputs' array`);
  }
  let offset = jsonEnd;
  const outputs = parsed.outputs.map((raw: unknown): DecodedOutput => {
    if (!isObject(raw)) throw new ProtocolError('INVALID_FIELD', "Unable to parse 'outputs'");
    const name = readString(raw, 'name');
    const where = `output '${name}'`;
    const datatype = readDatatype(raw, 'output', name);
    const shape = readShape(raw);
    const parameters = readParameters(raw.parameters, where);
    const count = elementCount(shape);
    if (parameters.binary_data_size !== undefined) {
      const size = readSize(parameters.binary_data_size, 'binary_data_size');
      if (offset + size > body.byteLength) {
        throw new ProtocolError(
          'BINARY_SIZE_MISMATCH',
          `${where} announces ${size} binary bytes but only ${body.byteLength - offset} remain in the body`,
        );
      }
      const data = tensorDataFromBytes(datatype, body.subarray(offset, offset + size), count, where);
      offset += size;
      return { name, datatype, shape, data, parameters };
    }
    if (raw.data === undefined) return { name, datatype, shape, data: undefined, parameters };
    const data = tensorDataFromJson(datatype, raw.data, count, name, 'output');
    return { name, datatype, shape, data, parameters };
  });
  if (offset !== body.byteLength) {
    throw new ProtocolError(
      'BINARY_SIZE_MISMATCH',
      `the response body has ${body.byteLength - offset} bytes after the last binary output`,
    );
  }
  const json = parsed as unknown as InferResponseJson;
  const modelName = typeof json.model_name === 'string' ? json.model_name : '';
  const modelVersion = typeof json.model_version === 'string' ? json.model_version : undefined;
  const id = typeof json.id === 'string' && json.id !== '' ? json.id : undefined;
  const parameters = isObject(json.parameters) ? json.parameters : {};
  return {
    modelName,
    ...(modelVersion === undefined ? {} : { modelVersion }),
    ...(id === undefined ? {} : { id }),
    parameters,
    outputs,
    json,
  };
}

/** An output of a cached response header: everything but the data, which is in the binary tail. */
interface HeaderOutput {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: readonly number[];
  readonly parameters: Readonly<Parameters>;
  readonly size: number;
  readonly count: number;
}

/** What a response's JSON header decodes to when every output is in the binary tail. */
interface DecodedHeader {
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  readonly id: string | undefined;
  readonly parameters: Readonly<Parameters>;
  readonly outputs: readonly HeaderOutput[];
}

/** Headers longer than this are not cached. */
const CACHED_HEADER_MAX_LENGTH = 4096;
/** How many distinct headers are kept (the cache is emptied when full). */
const CACHED_HEADER_COUNT = 64;
/**
 * Recently decoded response headers by their text. A model's responses usually carry the same
 * header call after call (names, datatypes, shapes, binary sizes), and decoding is a pure function
 * of that text, so an identical header is not parsed and checked again; only the binary tail is.
 */
const headerCache = new Map<string, DecodedHeader>();

function isScalar(v: unknown): boolean {
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'bigint' || t === 'boolean';
}

/** The cacheable form of a decoded response (all outputs binary, scalar parameters), else undefined. */
function headerOf(decoded: DecodedInferResponse): DecodedHeader | undefined {
  if (!Object.values(decoded.parameters).every(isScalar)) return undefined;
  const outputs: HeaderOutput[] = [];
  for (const o of decoded.outputs) {
    const size = o.parameters.binary_data_size;
    if (size === undefined || o.data === undefined) return undefined;
    const n = readSize(size, 'binary_data_size');
    outputs.push({
      name: o.name,
      datatype: o.datatype,
      shape: [...o.shape],
      parameters: { ...o.parameters },
      size: n,
      count: elementCount(o.shape),
    });
  }
  return {
    modelName: decoded.modelName,
    modelVersion: decoded.modelVersion,
    id: decoded.id,
    parameters: { ...decoded.parameters },
    outputs,
  };
}

/** Decodes a body whose header is `header` (already checked): only the binary tail is read. */
function fromHeader(header: DecodedHeader, body: Uint8Array, jsonEnd: number): InferResponse {
  let offset = jsonEnd;
  const outputs: DecodedOutput[] = [];
  for (const o of header.outputs) {
    const where = `output '${o.name}'`;
    if (offset + o.size > body.byteLength) {
      throw new ProtocolError(
        'BINARY_SIZE_MISMATCH',
        `${where} announces ${o.size} binary bytes but only ${body.byteLength - offset} remain in the body`,
      );
    }
    const data = tensorDataFromBytes(o.datatype, body.subarray(offset, offset + o.size), o.count, where);
    offset += o.size;
    outputs.push({
      name: o.name,
      datatype: o.datatype,
      shape: [...o.shape],
      data,
      parameters: { ...o.parameters },
    });
  }
  if (offset !== body.byteLength) {
    throw new ProtocolError(
      'BINARY_SIZE_MISMATCH',
      `the response body has ${body.byteLength - offset} bytes after the last binary output`,
    );
  }
  return {
    modelName: header.modelName,
    ...(header.modelVersion === undefined ? {} : { modelVersion: header.modelVersion }),
    ...(header.id === undefined ? {} : { id: header.id }),
    parameters: { ...header.parameters },
    outputs,
  };
}

/**
 * The HTTP wire's response converter: decodes a response body ({@link decodeInferResponse}) into
 * the neutral {@link InferResponse}, without the JSON header. A header identical to a recent one
 * (every output binary) is not parsed again.
 * @throws ProtocolError on any inconsistency.
 */
export function inferResponseFromHttp(
  body: Uint8Array,
  headerLength?: string | number | readonly string[] | null,
): InferResponse {
  const jsonLength = parseHeaderLength(headerLength, body.byteLength);
  let key: string | undefined;
  if (jsonLength !== undefined && jsonLength <= CACHED_HEADER_MAX_LENGTH) {
    key = fromUtf8(body.subarray(0, jsonLength));
    const header = headerCache.get(key);
    if (header !== undefined) return fromHeader(header, body, jsonLength);
  }
  const { json: _header, ...neutral } = decodeInferResponse(body, headerLength);
  if (key !== undefined) {
    const header = headerOf(neutral as DecodedInferResponse);
    if (header !== undefined) {
      if (headerCache.size >= CACHED_HEADER_COUNT) headerCache.clear();
      headerCache.set(key, header);
    }
  }
  return neutral;
}
