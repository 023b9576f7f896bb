/**
 * `@tritonserver-ts/client/testing`: test data shared by this package's tests and the embedded
 * server's (sample gRPC requests). Not part of the client API.
 * @packageDocumentation
 */
export * from './grpc-samples.js';
