/**
 * Where a tensor lives in a registered shared-memory region: the one reference type both wires
 * and both ends use (HTTP and gRPC carry it as the `shared_memory_region`, `shared_memory_byte_size`
 * and `shared_memory_offset` parameters).
 * @packageDocumentation
 */

/** A tensor placed in a registered shared-memory region instead of the body. */
export interface SharedMemoryRef {
  /** Registered region name (`shared_memory_region`). */
  readonly region: string;
  /** Bytes used in the region (`shared_memory_byte_size`). */
  readonly byteSize: number | bigint;
  /** Offset into the region (`shared_memory_offset`); sent only when not 0. */
  readonly offset?: number | bigint;
}
