/**
 * `@tritonserver-ts/protocol/grpc`: Triton's gRPC messages (generated from the package's own
 * `.proto` files with @bufbuild/protobuf), their binary codec, @grpc/grpc-js service definitions,
 * and converters between `ModelInferRequest` / `ModelInferResponse` and the codec's neutral
 * request and response types. Imports no gRPC library.
 * @packageDocumentation
 */
export * from './gen/grpc_service_pb.js';
export * from './gen/model_config_pb.js';
export * from './gen/health_pb.js';
export * from './codec.js';
export * from './service.js';
export * from './parameters.js';
export * from './contents.js';
export * from './infer-request.js';
export * from './infer-request-encoder.js';
export * from './infer-response.js';
export * from './infer-response-decoder.js';
export * from './wire-writer.js';
export * from './proto-dir.js';
export {
  create,
  isMessage,
  toJson,
  fromJson,
  type MessageInitShape,
  type MessageShape,
} from '@bufbuild/protobuf';
