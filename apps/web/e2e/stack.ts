/**
 * The e2e stack: the embedded Triton-compatible server on models_staging/ (in this process) and the
 * production web app (`next start`), plus a tiny control endpoint the tests use to stop and restart
 * the inference server on the same port ("server stopped" scenario).
 *
 *   node --import tsx e2e/stack.ts     (Playwright's webServer runs this)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunningServer } from '@tritonserver-ts/server';
import { startServer } from '@tritonserver-ts/server';
import { E2E } from './ports';

const webDir = fileURLToPath(new URL('..', import.meta.url));
const models = join(webDir, '../../models_staging');

let triton: RunningServer | undefined;
async function startTriton() {
  // Debian's python3 (numpy and Pillow) runs food_classifier's model.py: both models READY.
  triton = await startServer({
    modelRepositories: [models],
    httpPort: E2E.tritonPort,
    exitTimeoutSecs: 1,
    python: { interpreter: '/usr/bin/python3' },
  });
}
await startTriton();

rmSync(E2E.feedbackDir, { recursive: true, force: true });
mkdirSync(E2E.feedbackDir, { recursive: true });

const nextBin = createRequire(join(webDir, 'package.json')).resolve('next/dist/bin/next');
const next = spawn(process.execPath, [nextBin, 'start', '-p', String(E2E.webPort), '-H', '127.0.0.1'], {
  cwd: webDir,
  stdio: 'inherit',
  env: {
    ...process.env,
    TRITON_SERVER_URL: `127.0.0.1:${E2E.tritonPort}`,
    INFERENCE_TIMEOUT_MS: '5000',
    MAX_UPLOAD_BYTES: String(E2E.maxUploadBytes),
    FEEDBACK_DIR: E2E.feedbackDir,
    GATEWAY_LOG: 'false',
    NEXT_TELEMETRY_DISABLED: '1',
  },
});

const control = createServer((req, res) => {
  void (async () => {
    if (req.method === 'POST' && req.url === '/triton/stop') {
      await triton?.close();
      triton = undefined;
    } else if (req.method === 'POST' && req.url === '/triton/start') {
      if (!triton) await startTriton();
    } else {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(204).end();
  })();
});
control.listen(E2E.controlPort, '127.0.0.1');

const shutdown = () => {
  next.kill('SIGTERM');
  control.close();
  void triton?.close().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 3000).unref();
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
next.on('exit', (code) => {
  console.error(`next start exited (${code})`);
  process.exit(code ?? 1);
});
