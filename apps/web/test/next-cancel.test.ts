import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeKserve } from './fake-kserve';
import { startFakeKserve } from './fake-kserve';
import { photo } from './helpers';

// End to end through the production build (`next start`): when the browser goes away, Next aborts
// the route's request signal and the gateway cancels the inference call. The python-path FAKE
// responder (see fake-kserve.ts) holds the inference open so the cancellation is observable.
const web = fileURLToPath(new URL('..', import.meta.url));
let fake: FakeKserve;
let next: ChildProcess;
let url = '';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  if (!existsSync(join(web, '.next/BUILD_ID'))) throw new Error('run `next build` first (npm test does)');
  fake = await startFakeKserve();
  fake.mode = 'hang';
  const port = await freePort();
  const bin = createRequire(join(web, 'package.json')).resolve('next/dist/bin/next');
  next = spawn(process.execPath, [bin, 'start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: web,
    stdio: 'ignore',
    env: {
      ...process.env,
      TRITON_SERVER_URL: fake.url,
      FOOD11_MODEL_NAME: 'food_classifier',
      INFERENCE_TIMEOUT_MS: '60000',
      FEEDBACK_STORAGE: 'none',
      GATEWAY_LOG: 'false',
      NEXT_TELEMETRY_DISABLED: '1',
    },
  });
  url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    if (
      await fetch(`${url}/api/health`).then(
        (r) => r.status > 0,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 200));
  }
});
afterAll(async () => {
  next?.kill('SIGTERM');
  await fake?.close();
});

describe('closing the tab cancels the inference (next start)', () => {
  it('aborting the browser request closes the inference request on the server', async () => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(photo('S005'))], { type: 'image/jpeg' }), 's.jpg');
    const ac = new AbortController();
    const pending = fetch(`${url}/api/predict`, { method: 'POST', body: form, signal: ac.signal }).catch(
      (e: unknown) => e,
    );
    for (let i = 0; i < 100 && fake.received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(fake.received).toHaveLength(1);
    ac.abort();
    await pending;
    const outcome = await Promise.race([
      fake.cancelled.then(() => 'cancelled'),
      new Promise((r) => setTimeout(() => r('still waiting'), 5000)),
    ]);
    expect(outcome).toBe('cancelled');
  });
});
