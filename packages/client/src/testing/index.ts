/**
 * `@tritonserver-ts/client/testing`: kept for one minor version as a re-export of
 * `@tritonserver-ts/protocol/testing` (sample gRPC requests). Not part of the client API.
 * @deprecated Import from `@tritonserver-ts/protocol/testing`; this entry is removed in 0.3.
 * @packageDocumentation
 */
export * from '@tritonserver-ts/protocol/testing';
