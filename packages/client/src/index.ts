/**
 * `@tritonserver-ts/client`: a Triton Inference Server / KServe v2 client.
 *
 * The root export is what a client needs: `TritonClient`, its options, results and errors, the
 * tensor types and helpers a caller builds inputs and reads outputs with, and the
 * transport-neutral message types (re-exported from `@tritonserver-ts/protocol`). The wire codecs
 * (HTTP request/response bodies in both directions, the server-side encoders and decoders) live in
 * `@tritonserver-ts/protocol/http` and `@tritonserver-ts/protocol/grpc`.
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
} from '@tritonserver-ts/protocol';
export { elementCount, type Tensor } from '@tritonserver-ts/protocol';
export { ProtocolError, type ProtocolErrorCode } from '@tritonserver-ts/protocol';
export {
  bf16ArrayToFloat32,
  bf16BitsToFloat32,
  float32ArrayToBf16,
  float32ArrayToFp16,
  float32ToBf16Bits,
  float32ToFp16Bits,
  fp16ArrayToFloat32,
  fp16BitsToFloat32,
  type Bf16Rounding,
} from '@tritonserver-ts/protocol';
export {
  bytesToStrings,
  deserializeBytesTensor,
  serializeByteTensor,
  serializedByteSize,
  stringsToBytes,
  type BytesElement,
} from '@tritonserver-ts/protocol';
export { createTensor, toTensorData, type PlainValues, type TensorValues } from '@tritonserver-ts/protocol';
export {
  INFERENCE_HEADER_CONTENT_LENGTH,
  type ErrorJson,
  type InferOutputJson,
  type InferResponseJson,
  type WireData,
} from '@tritonserver-ts/protocol/http';
export { RESERVED_PARAMETERS, type ParameterValue, type Parameters } from '@tritonserver-ts/protocol';
export type { SharedMemoryRef } from '@tritonserver-ts/protocol';
export {
  encodeRawBinaryRequest,
  type InferRequestOptions,
  type InferRequestedOutput,
} from '@tritonserver-ts/protocol/http';
export { type InferInput } from '@tritonserver-ts/protocol';
export type { HttpInferHints } from '@tritonserver-ts/protocol/http';
export type {
  InferResponse,
  InferResponseOutput,
  NeutralRequestOptions,
  NeutralRequestedOutput,
} from '@tritonserver-ts/protocol';
export type { CompressionAlgorithm } from '@tritonserver-ts/protocol';
export { parseClassificationEntry, type ClassificationEntry } from '@tritonserver-ts/protocol';
export { TritonClient, type InferOptions } from './client.js';
export type { GenerateInputs, GenerateOptions, GenerateRequestValue, GenerateResponse } from './generate.js';
export { readServerSentEvents, ServerSentEventReader, type ServerSentEvent } from './sse.js';
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
