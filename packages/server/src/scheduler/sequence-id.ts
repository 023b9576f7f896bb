/**
 * Triton's sequence (correlation) id: an unsigned 64-bit integer or a string. Two ids are the same
 * sequence only when both kind and value agree (`1` and `"1"` are two sequences, as Triton's
 * `InferenceRequest::SequenceId` compares them); 0 and `""` mean "no sequence".
 * @packageDocumentation
 */

/** A request's `sequence_id` as the core hands it on. */
export type CorrelationId = number | bigint | string;

/** A correlation id read for the sequence batcher. */
export interface SequenceId {
  readonly kind: 'uint64' | 'string';
  /** Decimal text of the uint64 (negative int64 values wrap, as Triton's cast), or the string. */
  readonly text: string;
  /** Map key: kind and value. */
  readonly key: string;
}

/** Reads a request's correlation id (absent = 0, no sequence). */
export function readSequenceId(id: CorrelationId | undefined): SequenceId {
  if (typeof id === 'string') return { kind: 'string', text: id, key: `s:${id}` };
  const value = id === undefined ? 0n : BigInt.asUintN(64, BigInt(id));
  const text = value.toString();
  return { kind: 'uint64', text, key: `u:${text}` };
}

/** Whether the id names a sequence (not 0, not empty): Triton's `SequenceId::InSequence`. */
export function inSequence(id: SequenceId): boolean {
  return id.kind === 'string' ? id.text !== '' : id.text !== '0';
}
