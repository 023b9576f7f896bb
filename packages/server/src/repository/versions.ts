/**
 * Version directories and `version_policy` (Triton's rules: numeric subdirectories; latest N,
 * all, or specific versions).
 * @packageDocumentation
 */
import { readdir } from 'node:fs/promises';

import type { ModelVersionPolicy } from './model-config.js';

/** Numeric version subdirectories of a model directory, ascending. Other names (and leading zeros) are ignored. */
export async function listVersionDirectories(modelDirectory: string): Promise<number[]> {
  const entries = await readdir(modelDirectory, { withFileTypes: true });
  const versions: number[] = [];
  for (const e of entries) {
    if (!(e.isDirectory() || e.isSymbolicLink())) continue;
    if (!/^(0|[1-9][0-9]*)$/.test(e.name)) continue;
    const v = Number(e.name);
    if (Number.isSafeInteger(v)) versions.push(v);
  }
  return versions.sort((a, b) => a - b);
}

/**
 * The versions a policy selects from `available` (ascending). No policy = latest 1. `specific`
 * versions that do not exist are left out here; the caller reports them.
 */
export function selectVersions(
  policy: ModelVersionPolicy | undefined,
  available: readonly number[],
): number[] {
  const sorted = [...available].sort((a, b) => a - b);
  if (policy?.all !== undefined) return sorted;
  if (policy?.specific !== undefined) {
    const wanted = new Set(policy.specific.versions);
    return sorted.filter((v) => wanted.has(v));
  }
  const n = policy?.latest?.num_versions ?? 1;
  return sorted.slice(Math.max(0, sorted.length - n));
}
