/**
 * `@tritonserver-ts/client`: a Triton Inference Server / KServe v2 client.
 * @packageDocumentation
 */
export * from './protocol/index.js';
export { TritonClient, type InferOptions } from './client.js';
export * from './errors.js';
export * from './api-types.js';
export { InferResult } from './infer-result.js';
export { NdArrayView, rowMajorStrides, type ElementOf } from './ndarray.js';
export {
  basicAuthHeader,
  basicAuthPlugin,
  type ClientPlugin,
  silentLogger,
  type CallOptions,
  type ClientOptions,
  type Logger,
  type QueryParams,
} from './options.js';
export type { Transport, TransportContext } from './transport.js';
export { backoffDelay, isRetryable, parseRetryAfter, type BackoffPolicy } from './retry.js';
export { HttpTransport, generateRequestBody, parseResponseBody } from './http/index.js';
