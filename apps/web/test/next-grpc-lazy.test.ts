/**
 * Through the production build (`next start`): the gRPC transport is loaded only when gRPC is
 * selected. A preload hook (written here, passed with `--require`) records every server chunk the
 * process loads; the chunks holding the gRPC code are those whose text names the
 * `ModelStreamInfer` RPC (the client's gRPC transport and service definition). Over HTTP none of them is loaded, over gRPC they are, and both
 * answer the same prediction from the real embedded server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Prediction } from '../src/lib/types';
import { photo, startEmbedded } from './helpers';

const web = fileURLToPath(new URL('..', import.meta.url));
/** The build `next start` serves (NEXT_DIST_DIR when set, as next.config.ts reads it). */
const distDir = process.env.NEXT_DIST_DIR ?? '.next';
const chunksDir = join(web, distDir, 'server/chunks');

const HOOK = `const Module = require('node:module');
const fs = require('node:fs');
const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (request.includes('/server/chunks/')) fs.appendFileSync(process.env.CHUNK_LOG, request + '\\n');
  return load.apply(this, arguments);
};
`;

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

let server: RunningServer;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (!existsSync(join(web, distDir, 'BUILD_ID'))) throw new Error('run `next build` first (npm test does)');
  server = await startEmbedded();
  dir = mkdtempSync(join(tmpdir(), 'gg-lazy-'));
  writeFileSync(join(dir, 'hook.cjs'), HOOK);
});
afterAll(async () => {
  for (const c of children) c.kill('SIGTERM');
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `next start` over `protocol`, predicts one photo, stops; the prediction and chunks loaded. */
async function runOver(protocol: 'http' | 'grpc'): Promise<{ prediction: Prediction; chunks: Set<string> }> {
  const port = await freePort();
  const log = join(dir, `${protocol}.log`);
  writeFileSync(log, '');
  const bin = createRequire(join(web, 'package.json')).resolve('next/dist/bin/next');
  const next = spawn(
    process.execPath,
    ['--require', join(dir, 'hook.cjs'), bin, 'start', '-p', String(port), '-H', '127.0.0.1'],
    {
      cwd: web,
      stdio: 'ignore',
      env: {
        ...process.env,
        CHUNK_LOG: log,
        TRITON_PROTOCOL: protocol,
        TRITON_SERVER_URL: protocol === 'http' ? server.url : `grpc://${server.grpcUrl}`,
        TRITON_GRPC_URL: '',
        FEEDBACK_STORAGE: 'none',
        GATEWAY_LOG: 'false',
        NEXT_TELEMETRY_DISABLED: '1',
      },
    },
  );
  children.push(next);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    const up = await fetch(`${url}/api/version`).then(
      (r) => r.status > 0,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(photo('P005'))], { type: 'image/jpeg' }), 'p.jpg');
  const res = await fetch(`${url}/api/predict`, { method: 'POST', body: form });
  expect(res.status).toBe(200);
  const prediction = (await res.json()) as Prediction;
  await new Promise<void>((resolve) => {
    next.once('exit', () => resolve());
    next.kill('SIGTERM');
  });
  const chunks = new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean));
  return { prediction, chunks };
}

describe('the gRPC transport in the production build', () => {
  it('is loaded over gRPC only; both protocols answer the same prediction', async () => {
    const grpcChunks = readdirSync(chunksDir)
      .filter((f) => f.endsWith('.js'))
      .map((f) => join(chunksDir, f))
      .filter((f) => readFileSync(f, 'utf8').includes('ModelStreamInfer'));
    expect(grpcChunks.length).toBeGreaterThan(0);

    const http = await runOver('http');
    const grpc = await runOver('grpc');
    expect(http.chunks.size).toBeGreaterThan(0); // the hook saw the route's chunks load
    expect(grpcChunks.filter((f) => http.chunks.has(f))).toEqual([]);
    expect(grpcChunks.some((f) => grpc.chunks.has(f))).toBe(true);
    expect(grpc.prediction.top).toEqual(http.prediction.top);
  }, 120_000);
});
