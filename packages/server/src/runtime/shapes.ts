/**
 * Shape helpers for backends: config `reshape`, variable dims, shape checks.
 * @packageDocumentation
 */

/** Product of dims (1 for `[]`). */
export function product(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/**
 * Resolves a target shape that may hold −1 dims for `elements` elements: one −1 is computed from
 * the element count; several −1 take the source dims at the same positions (same rank).
 * @returns `undefined` when the shape cannot hold that many elements.
 */
export function resolveShape(
  target: readonly number[],
  elements: number,
  source: readonly number[],
): number[] | undefined {
  const wild = target.filter((d) => d === -1).length;
  if (wild === 0) return product(target) === elements ? [...target] : undefined;
  if (wild === 1) {
    const known = product(target.filter((d) => d !== -1));
    if (known === 0 || elements % known !== 0)
      return known === 0 && elements === 0 ? target.map((d) => (d === -1 ? 0 : d)) : undefined;
    return target.map((d) => (d === -1 ? elements / known : d));
  }
  if (source.length !== target.length) return undefined;
  const out = target.map((d, i) => (d === -1 ? (source[i] as number) : d));
  return product(out) === elements ? out : undefined;
}

/**
 * Maps a shape through a reshape: `[batch?, ...from]` → `[batch?, ...to]` (only the non-batch part
 * changes).
 * @returns `undefined` when the element counts do not fit.
 */
export function reshapeBatched(
  shape: readonly number[],
  batched: boolean,
  to: readonly number[],
): number[] | undefined {
  const rest = batched ? shape.slice(1) : [...shape];
  const resolved = resolveShape(to, product(rest), rest);
  if (resolved === undefined) return undefined;
  return batched ? [shape[0] as number, ...resolved] : resolved;
}

/** True when every fixed (non −1) dim of `expected` equals the dim of `actual` at that position. */
export function shapeMatches(expected: readonly number[], actual: readonly number[]): boolean {
  if (expected.length !== actual.length) return false;
  return expected.every((d, i) => d === -1 || d === actual[i]);
}

/** `[1,2,3]` → `[1,2,3]` as text for messages. */
export function formatShape(shape: readonly (number | string)[]): string {
  return `[${shape.join(',')}]`;
}
