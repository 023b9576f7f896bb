/**
 * `@tritonserver-ts/client`: a Triton Inference Server / KServe v2 client.
 *
 * The root export is what a client needs: `TritonClient`, its options, results and errors, the
 * tensor types and helpers a caller builds inputs and reads outputs with, and the
 * transport-neutral message types. The wire codecs (HTTP request/response bodies in both
 * directions, the server-side encoders and decoders) live in `@tritonserver-ts/client/protocol`
 * and `@tritonserver-ts/client/protocol/grpc`.
 * @packageDocumentation
 */
export {
  DATATYPES,
  DATATYPE_BYTE_SIZE,
  MODEL_CONFIG_DATATYPES,
  datatypeFromModelConfig,
  datatypeToModelConfig,
  isDatatype,
  type Datatype,
  type DatatypeArrayMap,
  type FixedSizeDatatype,
  type ModelConfigDatatype,
  type TensorData,
} from './protocol/datatypes.js';
export { elementCount, type Tensor } from './protocol/tensor.js';
export { ProtocolError, type ProtocolErrorCode } from './protocol/errors.js';
export * from './protocol/fp16.js';
export {
  bytesToStrings,
  deserializeBytesTensor,
  serializeByteTensor,
  serializedByteSize,
  stringsToBytes,
  type BytesElement,
} from './protocol/bytes.js';
export { createTensor, toTensorData, type PlainValues, type TensorValues } from './protocol/tensor-data.js';
export {
  INFERENCE_HEADER_CONTENT_LENGTH,
  RESERVED_PARAMETERS,
  type ErrorJson,
  type InferOutputJson,
  type InferResponseJson,
  type ParameterValue,
  type Parameters,
  type WireData,
} from './protocol/wire.js';
export type { SharedMemoryRef } from './protocol/shared.js';
export {
  encodeRawBinaryRequest,
  type InferInput,
  type InferRequestOptions,
  type InferRequestedOutput,
} from './protocol/infer-request.js';
export type {
  HttpInferHints,
  InferResponse,
  InferResponseOutput,
  NeutralRequestOptions,
  NeutralRequestedOutput,
} from './protocol/message.js';
export type { CompressionAlgorithm } from './protocol/compression.js';
export { parseClassificationEntry, type ClassificationEntry } from './protocol/classification.js';
export { TritonClient, type InferOptions } from './client.js';
export type { InferStat, InferTimer } from './infer-stat.js';
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
export type { Cancellation, CancellationListener, Transport, TransportContext } from './transport.js';
export { backoffDelay, isRetryable, parseRetryAfter, type BackoffPolicy } from './retry.js';
export { HttpTransport, generateRequestBody, parseResponseBody } from './http/index.js';
