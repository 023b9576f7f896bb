#!/usr/bin/env node
// Set-up for this package's tests: the food_classifier model tests need Debian's python3 with numpy
// and PIL. When they are missing and we run as root on Debian, install them with apt; otherwise stop
// with a message that says what to install.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const python = process.env.DEPLOY_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const packages = ['python3-numpy', 'python3-pil'];

function hasModules() {
  const r = spawnSync(python, ['-c', 'import numpy, PIL'], { stdio: 'ignore' });
  return r.status === 0;
}

if (!hasModules()) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && existsSync('/usr/bin/apt-get')) {
    console.log(`[deploy] installing ${packages.join(' ')} with apt-get`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () =>
      spawnSync('apt-get', ['install', '-y', '-o', 'DPkg::Lock::Timeout=300', ...packages], {
        stdio: 'inherit',
        env,
      }).status === 0;
    if (!install()) {
      spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
      install();
    }
  }
  if (!hasModules()) {
    console.error(
      `[deploy] ${python} cannot import numpy and PIL. Install them (Debian/Ubuntu: ` +
        `sudo apt-get install -y ${packages.join(' ')}) or point DEPLOY_PYTHON at a python3 that has them.`,
    );
    process.exit(1);
  }
}
