/**
 * The HTTP inference response body in both directions: `encodeInferResponse` (server) and
 * `decodeInferResponse` (client).
 * @packageDocumentation
 */
import type { Datatype } from './datatypes.js';
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
  readShape,
  readSize,
  readString,
  utf8,
} from './shared.js';
import type { EncodedBody } from './infer-request.js';
import type { InferResponse, InferResponseOutput } from './message.js';
import { elementCount, type Tensor } from './tensor.js';
import type { InferOutputJson, InferResponseJson, Parameters } from './wire.js';

/** One output of a response to encode (server side). */
export interface ResponseOutput {
  readonly tensor: Tensor;
  /** Put the data in the binary tail (`true`) or in JSON `data` (`false`). */
  readonly binary: boolean;
  /** Leave the data out entirely (the output was written to shared memory). */
  readonly omitData?: boolean;
  /** Extra output parameters (e.g. the shared-memory ones); `binary_data_size` is added for you. */
  readonly parameters?: Parameters;
}

/** A response to encode (server side). */
export interface InferResponseMessage {
  readonly modelName: string;
  readonly modelVersion: string;
  /** The request `id`, echoed when the request carried one. */
  readonly id?: string;
  readonly parameters?: Parameters;
  readonly outputs: readonly ResponseOutput[];
}

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
      out.data = tensorDataToJson(tensor.datatype, tensor.data, 'output', tensor.name);
    }
    return out;
  });
  const header = utf8(stringifyJson(json));
  if (tail.length === 0) return { body: header, headerLength: undefined, json };
  let total = header.byteLength;
  for (const t of tail) total += t.byteLength;
  return { body: concatBytes([header, ...tail], total), headerLength: header.byteLength, json };
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

/**
 * The HTTP wire's response converter: decodes a response body ({@link decodeInferResponse}) into
 * the neutral {@link InferResponse}, without the JSON header.
 * @throws ProtocolError on any inconsistency.
 */
export function inferResponseFromHttp(
  body: Uint8Array,
  headerLength?: string | number | readonly string[] | null,
): InferResponse {
  const { json: _header, ...neutral } = decodeInferResponse(body, headerLength);
  return neutral;
}
