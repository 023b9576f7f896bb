/**
 * `@tritonserver-ts/protocol/http`: the KServe v2 / Triton HTTP wire in both directions: inference
 * requests and responses as a JSON header plus the binary tensor extension's tail (encode for a
 * client, decode for a server), the JSON shapes with the protocol's field names, the HTTP-only
 * request hints (`binary_data_output`, per-output `binary_data`, raw binary requests), and Triton's
 * JSON conventions (lossless 64-bit numbers, which int64 config fields print as numbers), and the
 * generate extension's JSON mapping and Server-Sent Events framing (`generate.ts`) and the event-stream
 * reader (`sse.ts`, also its own dependency-free entry `@tritonserver-ts/protocol/sse`).
 * @packageDocumentation
 */
export * from './wire.js';
export * from './json.js';
export * from './json-data.js';
export { parseHeaderLength } from './shared.js';
export * from './infer-request.js';
export * from './infer-response.js';
export {
  splitRequestOptions,
  type HttpInferHints,
  type InferRequestOptions,
  type InferRequestedOutput,
} from './hints.js';
export * from './config-int64.js';
export * from './generate.js';
export * from './sse.js';
