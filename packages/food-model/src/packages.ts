/** Where installed npm packages live and which version they are (for the build's input hashes). */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The directory of an installed package as Node resolves it from `fromFile`, found by walking up
 * from its entry point to the `package.json` that names it (works for packages whose `exports` do
 * not expose `./package.json`, such as sharp).
 * @returns `undefined` when the package is not installed.
 */
export function packageDir(name: string, fromFile: string): string | undefined {
  let entry: string;
  try {
    entry = createRequire(fromFile).resolve(name);
  } catch {
    return undefined;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    try {
      if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === name) return dir;
    } catch {
      // an unreadable package.json on the way up: keep looking
    }
  }
  return undefined;
}

/** The version of an installed package as resolved from `fromFile`, or `missing`. */
export function packageVersion(name: string, fromFile: string): string {
  const dir = packageDir(name, fromFile);
  if (dir === undefined) return 'missing';
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? '?';
}
