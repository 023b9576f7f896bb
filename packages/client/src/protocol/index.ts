/**
 * The pure KServe v2 / Triton wire codec, shared by the client and the embedded server.
 * @packageDocumentation
 */
export * from './datatypes.js';
export * from './tensor.js';
export * from './errors.js';
export * from './fp16.js';
export * from './bytes.js';
export * from './bytes-list.js';
export * from './raw.js';
export * from './json.js';
export * from './json-data.js';
export * from './tensor-data.js';
export * from './wire.js';
export { parseHeaderLength, type SharedMemoryRef } from './shared.js';
export * from './infer-request.js';
export * from './infer-response.js';
export * from './compression.js';
export * from './classification.js';
export * from './message.js';
export * from './config-int64.js';
export * from './statistics.js';
export * from './model-config.js';
export * from './settings.js';
export * from './buffer-pool.js';
