import { fileURLToPath } from 'node:url';

// Random ports per run (other test runs may share this machine), fixed through the environment so the
// Playwright runner, its workers and the webServer command (which inherit it) all agree.
const base = 20_000 + 3 * Math.floor(Math.random() * 10_000);
process.env.E2E_WEB_PORT ??= String(base);
process.env.E2E_TRITON_PORT ??= String(base + 1);
process.env.E2E_CONTROL_PORT ??= String(base + 2);

/** Ports and paths of the e2e stack. */
export const E2E = {
  webPort: Number(process.env.E2E_WEB_PORT),
  tritonPort: Number(process.env.E2E_TRITON_PORT),
  controlPort: Number(process.env.E2E_CONTROL_PORT),
  maxUploadBytes: 1024 * 1024,
  feedbackDir: fileURLToPath(new URL('../test-results/e2e-feedback', import.meta.url)),
};
