/** Deterministic, stratified data splits (no randomness: by rank within each class). */

/** Every `every`-th photo of each class (rank `offset`, `offset+every`, …) is held out. */
export function heldOutMask(labels: readonly number[], every = 5, offset = 2): boolean[] {
  const rank = new Map<number, number>();
  return labels.map((l) => {
    const r = rank.get(l) ?? 0;
    rank.set(l, r + 1);
    return r % every === offset % every;
  });
}

/** Stratified fold index per row: the row's rank within its class, modulo `k`. */
export function stratifiedFolds(labels: readonly number[], k: number): number[] {
  const rank = new Map<number, number>();
  return labels.map((l) => {
    const r = rank.get(l) ?? 0;
    rank.set(l, r + 1);
    return r % k;
  });
}
