#!/usr/bin/env node
// Test setup: the parity test needs Debian's python3-torchvision (PyPI is not reachable here).
// Installs it with apt when missing and running as root; otherwise fails with a clear message.
import { spawnSync } from 'node:child_process';

const PY = '/usr/bin/python3';
const PKGS = ['python3-torchvision', 'python3-pil', 'python3-numpy', 'python3-skimage'];
const probe = () =>
  spawnSync(PY, ['-c', 'import torchvision, PIL, skimage'], { stdio: 'ignore' }).status === 0;

if (probe()) process.exit(0);
if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
  console.error(
    `image-preprocess tests need ${PKGS.join(' ')} for ${PY}. Install them: sudo apt-get install -y ${PKGS.join(' ')}`,
  );
  process.exit(1);
}
console.log(`installing ${PKGS.join(' ')} with apt-get (one time, about a minute)…`);
const started = Date.now();
const apt = (...args) =>
  spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
    .status === 0;
const install = () => apt('install', '-y', '--no-install-recommends', ...PKGS);
// A fresh machine may have empty package lists: update once and retry.
if (!(install() || (apt('update') && install())) || !probe()) {
  console.error(`apt-get install ${PKGS.join(' ')} failed; install them by hand and retry.`);
  process.exit(1);
}
console.log(`installed in ${((Date.now() - started) / 1000).toFixed(0)}s`);
