import { fileURLToPath } from 'node:url';

/** Fixed ports and paths of the e2e stack (override with E2E_WEB_PORT etc. when they clash). */
export const E2E = {
  webPort: Number(process.env.E2E_WEB_PORT ?? 3100),
  tritonPort: Number(process.env.E2E_TRITON_PORT ?? 18100),
  controlPort: Number(process.env.E2E_CONTROL_PORT ?? 3199),
  maxUploadBytes: 1024 * 1024,
  feedbackDir: fileURLToPath(new URL('../test-results/e2e-feedback', import.meta.url)),
};
