/**
 * JSON shapes of the KServe v2 / Triton HTTP inference messages, with the protocol's own field
 * names. These types describe the wire; the public API uses camelCase types built on them.
 * @packageDocumentation
 */
import type { JsonElement } from './json-data.js';
import type { Parameters } from '../parameters.js';

/** JSON `data` as it appears on the wire: flat or nested arrays of elements. */
export type WireData = readonly (JsonElement | WireData)[];

/** An input tensor in the request JSON. */
export interface InferInputJson {
  name: string;
  shape: number[];
  datatype: string;
  parameters?: Parameters;
  data?: WireData;
}

/** A requested output in the request JSON. */
export interface InferRequestedOutputJson {
  name: string;
  parameters?: Parameters;
}

/** The request JSON (the header part of an HTTP infer body). */
export interface InferRequestJson {
  id?: string;
  inputs: InferInputJson[];
  outputs?: InferRequestedOutputJson[];
  parameters?: Parameters;
}

/** An output tensor in the response JSON. */
export interface InferOutputJson {
  name: string;
  datatype: string;
  shape: number[];
  parameters?: Parameters;
  data?: WireData;
}

/** The response JSON (the header part of an HTTP infer response body). */
export interface InferResponseJson {
  model_name: string;
  model_version?: string;
  id?: string;
  parameters?: Parameters;
  outputs: InferOutputJson[];
}

/** The HTTP error body every Triton endpoint answers with on failure. */
export interface ErrorJson {
  error: string;
}

/** Name of the header that carries the JSON length of a body with a binary tail (lower case). */
export const INFERENCE_HEADER_CONTENT_LENGTH = 'inference-header-content-length';
