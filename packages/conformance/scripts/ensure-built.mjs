#!/usr/bin/env node
// The suite imports the compiled client and server. Under the root `npm test`, turbo has built them
// already; when this package's tests run on their own (fresh clone), build them (and their own
// workspace dependencies) first.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const root = new URL('../../../', import.meta.url).pathname;
const needed = [
  'packages/client/dist/index.js',
  'packages/client/dist/grpc/index.js',
  'packages/server/dist/index.js',
  'packages/server/dist/testing/index.js',
];
const missing = needed.filter((f) => !existsSync(root + f));
if (missing.length > 0) {
  console.log(`building dependencies (missing: ${missing.join(', ')})`);
  const r = spawnSync(
    'npx',
    ['turbo', 'run', 'build', '--filter=@tritonserver-ts/conformance...', '--output-logs=errors-only'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  process.exit(r.status ?? 1);
}
