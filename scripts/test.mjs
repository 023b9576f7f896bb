#!/usr/bin/env node
// `npm test`: build every package, type-check every package's whole tsconfig.json (sources and the
// tests, benches, scripts, examples and e2e files the build leaves out), lint, run every package's
// tests one after another, then print one closing line `Tests: N passed, N failed, N skipped` summed
// over all runners' JSON reports. A type error or a lint error fails the run even when every test passes.
import { spawnSync } from 'node:child_process';
import { rmSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { pythonInterpreter } from './embedded-server.mjs';
import { sumTestReports } from './test-reports.mjs';

const root = new URL('..', import.meta.url).pathname;
const resultsDir = join(root, 'test-results');
const env = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  DO_NOT_TRACK: '1',
};
// Tests that serve models_staging run food_classifier's model.py, which needs numpy and Pillow: give
// every suite the Python `npm start` would use (a PATH python3 may have numpy without Pillow, which
// the server's own discovery accepts). Unset when no Python has both; the suites then say why.
if (!env.TRITONSERVER_TS_PYTHON) {
  const python = pythonInterpreter(env);
  if (python !== undefined) env.TRITONSERVER_TS_PYTHON = python;
}

function run(label, cmd, args) {
  console.log(`\n=== ${label}: ${cmd} ${args.join(' ')}`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  console.log(`=== ${label}: exit ${r.status ?? r.signal} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return r.status === 0;
}

rmSync(resultsDir, { recursive: true, force: true });
mkdirSync(resultsDir, { recursive: true });

if (!run('build', 'npx', ['turbo', 'run', 'build'])) process.exit(1);
// The demo food model is built by project code (never downloaded); a no-op when it is up to date.
if (!run('model', 'npm', ['run', 'model:ensure', '-w', '@gourmetgram/food-model'])) process.exit(1);
// `tsc --noEmit -p tsconfig.json` per package, two at a time; the builds it would depend on ran above.
const typecheckOk = run('typecheck', 'npx', [
  'turbo',
  'run',
  'typecheck',
  '--only',
  '--concurrency=2',
  '--continue',
]);
const lintOk = run('lint', 'npm', ['run', 'lint']);
const testsOk = run('tests', 'npx', ['turbo', 'run', 'test', '--concurrency=1', '--continue']);

const { files, passed, failed, skipped } = sumTestReports(resultsDir);
console.log(`\nReports: ${files.join(', ') || 'none'}`);
if (!typecheckOk) console.log('Type check failed.');
if (!lintOk) console.log('Lint failed.');
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(typecheckOk && lintOk && testsOk && failed === 0 && passed > 0 ? 0 : 1);
