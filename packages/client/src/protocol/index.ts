/**
 * The pure KServe v2 / Triton wire codec, shared by the client and the embedded server.
 * @packageDocumentation
 */
export * from './datatypes.js';
export * from './tensor.js';
