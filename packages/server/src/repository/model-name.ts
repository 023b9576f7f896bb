/**
 * Model names that reach the disk: the load API's name becomes a directory name, so it is checked
 * before anything touches the file system.
 * @packageDocumentation
 */
import { echo } from '../core/echo.js';

/**
 * Triton's model-name rule for the load API: no `..` and no `/` (names become directory names). A
 * name with a NUL byte cannot name a directory either.
 */
export function isValidModelName(name: string): boolean {
  return !name.includes('..') && !name.includes('/') && !name.includes('\0');
}

/** Triton's message for a name {@link isValidModelName} refuses. */
export function invalidModelNameMessage(name: string): string {
  return `invalid model name '${echo(name)}', model name must not contain path traversal characters`;
}
