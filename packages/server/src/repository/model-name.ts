/**
 * Model names that reach the disk: the load API's name becomes a directory name, so it is checked
 * before anything touches the file system.
 * @packageDocumentation
 */

/**
 * Triton 2.73's model-name rule for the load API: a name is refused as traversal only when it is
 * `..` or holds a path separator (`/`); `...`, `..my_model` or `model..1` are ordinary directory
 * names. A name with a NUL byte cannot name a directory either. Whatever passes names one entry of
 * the repository directory (or, for `.`, the directory itself), never a path outside it.
 */
export function isValidModelName(name: string): boolean {
  return name !== '..' && !name.includes('/') && !name.includes('\0');
}

/** Triton's message for a name {@link isValidModelName} refuses. */
export function invalidModelNameMessage(name: string): string {
  return `invalid model name '${name}', model name must not contain path traversal characters`;
}
