/**
 * `@tritonserver-ts/protocol`: the wire-neutral model of the KServe v2 / Triton protocol, shared by
 * the client and the embedded server: datatypes and tensors, inference requests and responses,
 * parameters, shared-memory references, model configs (and the platform → backend map),
 * statistics, trace and log settings, and the protocol's error kinds. Each wire has its own entry
 * point: `@tritonserver-ts/protocol/http` (JSON header plus binary tensors, both directions) and
 * `@tritonserver-ts/protocol/grpc` (Triton's protobuf messages and their converters). This entry
 * loads neither. Beside the model, two memory helpers the client, the server and the perf tools
 * share: `BufferPool` and `applyHeapGrowingPercent` (the commands' V8 heap growth).
 * @packageDocumentation
 */
export * from './datatypes.js';
export * from './tensor.js';
export * from './errors.js';
export * from './fp16.js';
export * from './bytes.js';
export * from './bytes-list.js';
export * from './raw.js';
export * from './tensor-data.js';
export * from './parameters.js';
export * from './shared-memory.js';
export * from './message.js';
export * from './compression.js';
export * from './classification.js';
export * from './statistics.js';
export * from './model-config.js';
export * from './platform.js';
export * from './settings.js';
export * from './buffer-pool.js';
export * from './heap-growth.js';
