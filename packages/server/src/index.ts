/**
 * `@tritonserver-ts/server`: an embedded Triton-compatible inference server on onnxruntime-node.
 * @packageDocumentation
 */
export { startServer, StartupError, type RunningServer, type StartServerOptions } from './start.js';
export {
  InferenceServer,
  SERVER_EXTENSIONS,
  SERVER_NAME,
  SERVER_VERSION,
  TRITON_NGC_RELEASE,
  type InferenceServerOptions,
} from './core/server.js';
export { ServerError, type ServerErrorKind } from './common/errors.js';
export { httpStatusForKind } from './http/status.js';
export { compileHeaderForwardPattern } from './core/header-forward.js';
export type * from './common/types.js';
export type * from './core/types.js';
export type { LogSettings } from './core/logging.js';
export type { TraceSettings } from './core/trace.js';
export { startHttpServer, type HttpServerHandle, type HttpServerOptions } from './http/server.js';
export { DEFAULT_MAX_INPUT_SIZE } from './http/body.js';
export { GrpcStartError, startGrpcServer, type GrpcServerHandle } from './grpc/server.js';
export type { GrpcServerSettings, GrpcTlsFiles } from './grpc/settings.js';
export { GRPC_STATUS_FOR_KIND, grpcStatusForKind } from './grpc/status.js';
