/**
 * `@tritonserver-ts/client/protocol/grpc`: kept for one minor version as a re-export of
 * `@tritonserver-ts/protocol/grpc`.
 * @deprecated Import from `@tritonserver-ts/protocol/grpc`; this entry is removed in 0.3.
 * @packageDocumentation
 */
export * from '@tritonserver-ts/protocol/grpc';
