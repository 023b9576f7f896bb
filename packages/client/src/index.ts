/**
 * `@tritonserver-ts/client`: a Triton Inference Server / KServe v2 client.
 * @packageDocumentation
 */
export * from './protocol/index.js';
