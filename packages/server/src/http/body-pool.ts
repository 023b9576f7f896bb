/**
 * Reusable memory for request bodies (issue 11). A binary-extension infer body of a known length
 * (`Content-Length`, no content coding) is received straight into a buffer taken from this pool
 * instead of being gathered as chunks and joined into a fresh buffer; the listener gives the
 * buffer back when the request's handler settles, after the reply has been encoded (every
 * reply is its own memory). Steady traffic then allocates no body memory per request: a fresh
 * 600 KB buffer per request is external memory that V8 only returns through garbage collections it
 * starts for the pressure (most of the server's per-request CPU beyond the model before this pool),
 * and freed 600 KB blocks fragment the C heap.
 *
 * Bounds: only bodies from {@link POOLED_BODY_MIN_BYTES} to {@link POOLED_BODY_MAX_BYTES} are
 * pooled, and at most {@link DEFAULT_BODY_POOL_IDLE_BYTES} of idle buffers are kept; anything else
 * is left to the garbage collector as before. The bodies in flight are bounded by the in-flight
 * body budget as before; the pool adds at most its idle bytes. Not a Triton setting. The pool itself
 * is the protocol layer's `BufferPool` (shared with the gRPC client's encoded requests).
 * @packageDocumentation
 */
import { BufferPool } from '@tritonserver-ts/protocol';

/** Smaller bodies arrive in one piece and cost little: they are not pooled. */
export const POOLED_BODY_MIN_BYTES = 64 * 1024;
/** Larger bodies are rare and costly to keep idle: they are not pooled. */
export const POOLED_BODY_MAX_BYTES = 16 * 1024 * 1024;
/** Idle buffers kept for reuse, in bytes, by default. */
export const DEFAULT_BODY_POOL_IDLE_BYTES = 32 * 1024 * 1024;

/** Buffers for request bodies, reused from one request to the next (see the module documentation). */
export class BodyPool extends BufferPool {
  /** @param maxIdleBytes - idle buffers kept at most, in bytes. */
  constructor(maxIdleBytes = DEFAULT_BODY_POOL_IDLE_BYTES) {
    super({ minBytes: POOLED_BODY_MIN_BYTES, maxBytes: POOLED_BODY_MAX_BYTES, maxIdleBytes });
  }
}
