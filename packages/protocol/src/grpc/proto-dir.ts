/**
 * Where the package's `.proto` files are, for tools that want them (other protobuf runtimes,
 * `grpcurl -import-path`, Python's protoc in the tests).
 * @packageDocumentation
 */
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the package's `proto/` directory (`grpc_service.proto`, `model_config.proto`,
 * `health.proto`). Resolved relative to this module, so it is right both from `src` and from `dist`.
 */
export const PROTO_DIR: string = fileURLToPath(new URL('../../proto/', import.meta.url));

/** The `.proto` files in {@link PROTO_DIR}. */
export const PROTO_FILES: readonly string[] = ['grpc_service.proto', 'model_config.proto', 'health.proto'];
