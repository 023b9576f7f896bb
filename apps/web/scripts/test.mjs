#!/usr/bin/env node
// `npm test` in apps/web: route-handler tests (vitest) then the Playwright e2e suite in Debian's
// chromium against the production build. Installs chromium with apt when missing and running as
// root; otherwise fails with a clear message. Builds what is missing (model, Next build).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('..', import.meta.url));
const root = fileURLToPath(new URL('../../..', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };

function run(cmd, args, cwd = web) {
  console.log(`\n> ${cmd} ${args.join(' ')}`);
  return spawnSync(cmd, args, { cwd, stdio: 'inherit', env }).status === 0;
}

if (!existsSync(CHROMIUM)) {
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    console.log('chromium is missing: installing Debian chromium with apt-get (one time)…');
    const ok =
      run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium']) ||
      (run('apt-get', ['update']) &&
        run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium']));
    if (!ok || !existsSync(CHROMIUM)) {
      console.error(
        'apt-get install chromium failed; the e2e tests need Debian chromium at /usr/bin/chromium.',
      );
      process.exit(1);
    }
  } else {
    console.error(
      `The e2e tests need Debian's chromium at ${CHROMIUM}. Install it (sudo apt-get install -y chromium) or set CHROMIUM_PATH.`,
    );
    process.exit(1);
  }
}

// The clearly-not-food images of the out-of-distribution tests (test/ood.test.ts, e2e/app.spec.ts).
const NONFOOD = '/usr/share/doc/opencv-doc/examples/data/leuvenA.jpg';
const SKIMAGE = '/usr/lib/python3/dist-packages/skimage/data/chelsea.png';
if (!existsSync(NONFOOD) || !existsSync(SKIMAGE)) {
  const pkgs = ['opencv-doc', 'python3-skimage'];
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    console.log(
      'the non-food sample images are missing: installing opencv-doc and python3-skimage with apt-get…',
    );
    const install = ['install', '-y', '--no-install-recommends', ...pkgs];
    if (!run('apt-get', install) && !(run('apt-get', ['update']) && run('apt-get', install))) {
      console.error(
        'apt-get install opencv-doc python3-skimage failed; the out-of-distribution tests need them.',
      );
      process.exit(1);
    }
  } else {
    console.error(
      `The out-of-distribution tests need Debian's ${pkgs.join(' and ')} (sudo apt-get install -y ${pkgs.join(' ')}).`,
    );
    process.exit(1);
  }
}

// The /api page's curl examples are run as a reader would run them (e2e/api-page.spec.ts).
if (spawnSync('curl', ['--version'], { stdio: 'ignore' }).status !== 0) {
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    console.log('curl is missing: installing it with apt-get…');
    const install = ['install', '-y', '--no-install-recommends', 'curl'];
    if (!run('apt-get', install) && !(run('apt-get', ['update']) && run('apt-get', install))) {
      console.error('apt-get install curl failed; the API page tests run its curl examples.');
      process.exit(1);
    }
  } else {
    console.error('The API page tests run its curl examples: install curl (sudo apt-get install -y curl).');
    process.exit(1);
  }
}

if (!existsSync(`${root}/models_staging/food_classifier_onnx/1/model.onnx`)) {
  if (!run('npm', ['run', 'model:ensure', '-w', '@gourmetgram/food-model'], root)) process.exit(1);
}
if (!existsSync(`${web}/.next/BUILD_ID`)) {
  if (!run('npx', ['next', 'build'])) process.exit(1);
}

const unit = run('npx', ['vitest', 'run']);
const e2e = run('npx', ['playwright', 'test']);
process.exit(unit && e2e ? 0 : 1);
