/**
 * Paths that come from a model config or a load request must stay inside the directory that owns
 * them. A load request can carry any config (`label_filename: "../../../etc/passwd"`), so every file
 * a config names is resolved here: first lexically, then after symlink resolution, against the real
 * path of its root. Messages name paths relative to the root, never absolute host paths.
 * @packageDocumentation
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';

import { ModelRepositoryError } from './errors.js';

/** True when `child` lies strictly below `root` (both absolute). */
export function isStrictlyInside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function outside(what: string, relativePath: string, rootLabel: string, detail = ''): ModelRepositoryError {
  return new ModelRepositoryError(
    'PATH_OUTSIDE_MODEL',
    `${what} '${relativePath}' must stay inside ${rootLabel}${detail}`,
  );
}

/**
 * Lexical check of a relative path taken from untrusted input: not empty, not absolute, no NUL, and
 * strictly inside `root` once normalized. Returns the joined path (symlinks not yet resolved).
 * @param what - what the path is, for the message (for example `label_filename`).
 * @param rootLabel - how the message names the root (for example `the model directory`).
 * @throws ModelRepositoryError `PATH_OUTSIDE_MODEL`
 */
export function joinInside(root: string, relativePath: string, what: string, rootLabel: string): string {
  const joined = normalize(join(root, relativePath));
  if (relativePath.includes('\0') || isAbsolute(relativePath) || !isStrictlyInside(root, joined)) {
    throw outside(what, relativePath, rootLabel);
  }
  return joined;
}

/**
 * Resolves a file a config names (`label_filename`, `default_model_filename`, a warmup
 * `input_data_file`) under `root`: the lexical check of {@link joinInside}, then the real path of
 * the file (symlinks followed) must still lie inside the real path of `root`. A path that does not
 * exist yet is returned as joined; its reader reports it missing.
 * @throws ModelRepositoryError `PATH_OUTSIDE_MODEL`
 */
export async function resolveInside(
  root: string,
  relativePath: string,
  what: string,
  rootLabel: string,
): Promise<string> {
  const joined = joinInside(root, relativePath, what, rootLabel);
  const [realRoot, realTarget] = await Promise.all([realpathOrUndefined(root), realpathOrUndefined(joined)]);
  if (realRoot === undefined || realTarget === undefined) return joined;
  if (!isStrictlyInside(realRoot, realTarget)) {
    throw outside(what, relativePath, rootLabel, ' (a symbolic link leads outside)');
  }
  return realTarget;
}

async function realpathOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

/**
 * A host path as messages sent to clients show it: relative to `base` (the model repository) when
 * inside it, else only its last component, so clients never learn absolute host paths.
 */
export function displayPath(base: string, path: string): string {
  if (path === base) return '.';
  if (isStrictlyInside(base, path)) return relative(base, path).split(sep).join('/');
  return (
    path
      .split(sep)
      .filter((p) => p !== '')
      .at(-1) ?? '.'
  );
}

/** `message` with every occurrence of the host path `path` replaced by `shown` (for errors of libraries). */
export function redactPath(message: string, path: string, shown: string): string {
  return path === '' ? message : message.split(path).join(shown);
}
