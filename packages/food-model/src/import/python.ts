/**
 * The Python that `model:import` runs its converter with: Debian's `/usr/bin/python3` with
 * `python3-torch`, `python3-torchvision` and `python3-onnx` (installed with apt-get when they are
 * missing and this runs as root on a Debian-like host; otherwise the error says what to install).
 *
 * @packageDocumentation
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FoodModelError } from '../errors.js';

/** The converter script (`python/import_food11.py` of this package). */
export const IMPORT_SCRIPT = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'python',
  'import_food11.py',
);

/** The Debian packages the converter needs. */
export const IMPORT_PYTHON_PACKAGES = [
  'python3-torch',
  'python3-torchvision',
  'python3-onnx',
  'python3-numpy',
];

/** The interpreter: `FOOD_MODEL_PYTHON`, else `/usr/bin/python3` (where Debian's packages are). */
export function importPython(): string {
  return process.env.FOOD_MODEL_PYTHON ?? '/usr/bin/python3';
}

/** Interpreters already found to import the modules (importing torch takes seconds). */
const checked = new Set<string>();

function hasModules(python: string): boolean {
  if (checked.has(python)) return true;
  const ok =
    spawnSync(python, ['-c', 'import torch, torchvision, onnx, numpy'], { stdio: 'ignore' }).status === 0;
  if (ok) checked.add(python);
  return ok;
}

/**
 * Makes sure `python` imports torch, torchvision, onnx and numpy, installing Debian's packages with
 * apt-get when it can. Fails with `IMPORT_PYTHON_MISSING` saying what to install.
 */
export function ensureImportPython(
  python: string = importPython(),
  log: (line: string) => void = () => {},
): void {
  if (hasModules(python)) return;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root && python === '/usr/bin/python3' && existsSync('/usr/bin/apt-get')) {
    log(`installing ${IMPORT_PYTHON_PACKAGES.join(' ')} with apt-get (one time, a few minutes)`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const apt = (...args: string[]): boolean =>
      spawnSync('apt-get', args, { stdio: 'inherit', env }).status === 0;
    const install = (): boolean =>
      apt(
        'install',
        '-y',
        '--no-install-recommends',
        '-o',
        'DPkg::Lock::Timeout=300',
        ...IMPORT_PYTHON_PACKAGES,
      );
    if (!install()) {
      apt('update');
      install();
    }
    if (hasModules(python)) return;
  }
  throw new FoodModelError(
    'IMPORT_PYTHON_MISSING',
    `${python} cannot import torch, torchvision, onnx and numpy. Install them (Debian/Ubuntu: ` +
      `sudo apt-get install -y ${IMPORT_PYTHON_PACKAGES.join(' ')}) or point FOOD_MODEL_PYTHON at a ` +
      'python3 that has them.',
  );
}

/** Runs the converter script; fails with `IMPORT_FAILED` and its message. */
export function runImportScript(args: readonly string[], python: string = importPython()): void {
  const result = spawnSync(python, [IMPORT_SCRIPT, ...args], {
    encoding: 'utf8',
    // One thread: the machine may be shared, and a MobileNetV2 export is small.
    env: { ...process.env, OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' },
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status === 0) return;
  const stderr = result.stderr ?? '';
  const line = /IMPORT_ERROR: (.*)/.exec(stderr)?.[1];
  throw new FoodModelError(
    'IMPORT_FAILED',
    line ??
      `${python} ${IMPORT_SCRIPT} ${args[0]} failed (${result.error?.message ?? `exit ${result.status}`}): ${stderr.trim().slice(-2000)}`,
  );
}
