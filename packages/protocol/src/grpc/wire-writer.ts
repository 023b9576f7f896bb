/**
 * The protobuf wire writer the hand-written gRPC encoders share (the client's `ModelInferRequest`
 * encoder here, the server's request rewriter and response encoders): varints and the size of a
 * length-delimited field. Lengths and dimensions are JavaScript numbers below 2^53, so the arithmetic
 * is division, not 32-bit shifts.
 * @packageDocumentation
 */

/** Bytes of the protobuf varint of `n` (an integer, 0 ≤ n < 2^53). */
export function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

/** Writes the varint of `n` (an integer, 0 ≤ n < 2^53) at `at`; returns the offset after it. */
export function writeVarint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  out[at++] = n;
  return at;
}

/**
 * Bytes of a length-delimited field whose payload is `n` bytes: a one-byte tag (field numbers 1 to
 * 15), the varint length, the payload.
 */
export function delimitedSize(n: number): number {
  return 1 + varintSize(n) + n;
}
