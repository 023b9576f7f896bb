/**
 * `@tritonserver-ts/client/protocol`: kept for one minor version as a re-export of
 * `@tritonserver-ts/protocol` (the wire-neutral model) and `@tritonserver-ts/protocol/http` (the
 * HTTP codec), which is what this entry held before the protocol became a package of its own.
 * @deprecated Import from `@tritonserver-ts/protocol` and `@tritonserver-ts/protocol/http`; this
 * entry is removed in 0.3.
 * @packageDocumentation
 */
export * from '@tritonserver-ts/protocol';
export * from '@tritonserver-ts/protocol/http';
