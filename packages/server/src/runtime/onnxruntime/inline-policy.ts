/**
 * When a worker-hosted onnxruntime instance runs an execution on the main thread instead (issue 11).
 *
 * The worker hop (a copy and a `postMessage` out, the worker's wake-up and event-loop turn, the
 * result back and the main thread's wake-up) costs about 100–150 µs of CPU per execution on the
 * 2-core host of `bench/README.md` (the `simple` suite), several times what a tiny model's own
 * compute costs (`simple`: ~30 µs). For such executions the hop buys nothing: blocking the event loop
 * for about as long as the hop costs is cheaper than the hop (and no worse for the other requests,
 * whose own JavaScript path costs about that much).
 *
 * The policy learns from the worker's own compute times (`compute_infer`, measured in the worker):
 * over each window of {@link INLINE_WINDOW} worker executions, if the median is at most
 * {@link INLINE_COMPUTE_MAX_NS}, executions whose inputs are no larger than the largest short one of
 * that window may run inline. The bound only grows (larger executions keep going to the worker,
 * which keeps measuring them); compute time grows with input size for a given model, so a size once
 * proven short stays short. Models whose file is larger than {@link INLINE_MODEL_MAX_BYTES} never run
 * inline (a second, main-thread session is created for inline executions, and it should be small).
 * @packageDocumentation
 */

/** Worker executions whose median `compute_infer` is at most this qualify their sizes for inline runs. */
export const INLINE_COMPUTE_MAX_NS = 200_000n;
/** Worker executions per decision window. */
export const INLINE_WINDOW = 32;
/** Largest model file given a main-thread session for inline executions. */
export const INLINE_MODEL_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Bytes of an execution's inputs (BYTES tensors: their serialized size, 4 bytes per element plus the
 * elements' bytes, so that many empty elements do not pass for a tiny execution).
 */
export function inputBytes(
  inputs: ReadonlyMap<string, { readonly data: { readonly byteLength: number } }>,
): number {
  let bytes = 0;
  for (const t of inputs.values()) bytes += t.data.byteLength;
  return bytes;
}

/** One instance's inline decision (see the module documentation). */
export class InlinePolicy {
  readonly #maxNs: bigint;
  #window: bigint[] = [];
  #shortBytes = -1;
  #limit = -1;
  #disabled = false;

  /** @param maxNs - the short-execution bound (default {@link INLINE_COMPUTE_MAX_NS}; tests). */
  constructor(maxNs: bigint = INLINE_COMPUTE_MAX_NS) {
    this.#maxNs = maxNs;
  }

  /** Whether an execution with `bytes` of input may run inline (once a main-thread session exists). */
  allows(bytes: number): boolean {
    return bytes <= this.#limit;
  }

  /** Whether some input size has been proven short (time to create the main-thread session). */
  get proven(): boolean {
    return this.#limit >= 0;
  }

  /** Records one execution that ran in the worker. */
  record(bytes: number, computeInferNs: bigint): void {
    if (this.#disabled) return;
    this.#window.push(computeInferNs);
    if (computeInferNs <= this.#maxNs && bytes > this.#shortBytes) this.#shortBytes = bytes;
    if (this.#window.length < INLINE_WINDOW) return;
    const sorted = this.#window.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const median = sorted[sorted.length >> 1] as bigint;
    if (median <= this.#maxNs && this.#shortBytes > this.#limit) this.#limit = this.#shortBytes;
    this.#window = [];
    this.#shortBytes = -1;
  }

  /** Every later execution runs in the worker (a failed main-thread session, a worker test hook). */
  disable(): void {
    this.#disabled = true;
    this.#limit = -1;
    this.#window = [];
  }
}
