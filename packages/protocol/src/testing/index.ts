/**
 * `@tritonserver-ts/protocol/testing`: test data shared by the tests of this package, the client
 * and the embedded server (sample gRPC requests with their golden bytes). Not part of any API.
 * @packageDocumentation
 */
export * from './grpc-samples.js';
