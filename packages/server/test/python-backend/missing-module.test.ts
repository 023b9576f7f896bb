// A model.py that imports a module the chosen Python lacks (issue 30): on a machine whose `python3` on
// PATH has numpy but not Pillow, `tritonserver-ts` picks that python3 (the search asks for numpy
// only) and a model importing PIL fails to load. The error must say which interpreter was used and
// how it was chosen, which module is missing, which other interpreters on the machine have it, and
// the flag and variable that choose one. The Python without Pillow is /usr/bin/python3 behind a
// wrapper on PATH whose sitecustomize makes `import PIL` fail (no virtual environment needed);
// /usr/bin/python3 itself has numpy and Pillow.
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { missingModuleHint, pythonCandidates } from '../../src/runtime/python/missing-module.js';
import { addSubPythonModel, writePythonModels, type GeneratedPythonModel } from '../../src/testing/index.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

let dir: string;
let bin: string;
let fakePython: string;
let repository: string;

/** A model whose model.py imports PIL: at module level, in `initialize`, or before an auto-complete. */
function pilModel(name: string, autoComplete: boolean): GeneratedPythonModel {
  const add = addSubPythonModel(name);
  const py = add.files['1/model.py'] as string;
  const code = autoComplete
    ? py.replace(
        'class TritonPythonModel:',
        'from PIL import Image\n\n\nclass TritonPythonModel:\n    @staticmethod\n    def auto_complete_config(config):\n        return config\n',
      )
    : py.replace('class TritonPythonModel:', 'from PIL import Image\n\n\nclass TritonPythonModel:');
  return { name, files: { ...add.files, '1/model.py': code } };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-nopil-'));
  bin = join(dir, 'bin');
  await mkdir(join(dir, 'site'), { recursive: true });
  await mkdir(bin);
  await writeFile(join(dir, 'site', 'sitecustomize.py'), "import sys\nsys.modules['PIL'] = None\n");
  fakePython = join(bin, 'python3');
  await writeFile(
    fakePython,
    `#!/bin/sh\n# /usr/bin/python3 without Pillow\nPYTHONPATH=${join(dir, 'site')} exec /usr/bin/python3 "$@"\n`,
  );
  await chmod(fakePython, 0o755);
  repository = join(dir, 'models');
  await writePythonModels(repository, [pilModel('py_pil', false), pilModel('py_pil_auto', true)]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `tritonserver-ts` on `repository` with python3 on PATH = the Python without Pillow. */
function runCli(env: NodeJS.ProcessEnv = {}): { status: number | null; stderr: string } {
  const base: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:/usr/bin:/bin`, ...env };
  delete base.TRITONSERVER_TS_PYTHON;
  const r = spawnSync(
    process.execPath,
    [cli, `--model-repository=${repository}`, '--http-port=0', '--allow-grpc=false', '--allow-metrics=false'],
    { encoding: 'utf8', timeout: 60_000, env: { ...base, ...env } },
  );
  return { status: r.status, stderr: r.stderr };
}

describe('a model.py importing a module the chosen Python lacks', () => {
  it('the found python3 lacks Pillow: the error names it, the module, /usr/bin/python3 and how to choose it', () => {
    // The probe sees what the stub sees: the fake imports numpy but not PIL.
    expect(spawnSync(fakePython, ['-c', 'import numpy']).status).toBe(0);
    expect(spawnSync(fakePython, ['-c', 'import PIL']).status).not.toBe(0);
    const { status, stderr } = runCli();
    expect(status).toBe(1);
    expect(stderr).toContain('failed to load all models');
    const hint =
      "The Python interpreter 'python3' (/usr/bin/python3), the first of python3 and /usr/bin/python3 " +
      'with numpy (neither --backend-config=python,python-interpreter nor TRITONSERVER_TS_PYTHON is ' +
      "set), cannot import 'PIL'. /usr/bin/python3 can: choose it with " +
      '--backend-config=python,python-interpreter=/usr/bin/python3 or TRITONSERVER_TS_PYTHON=/usr/bin/python3.';
    // Both paths: the model's own stub (initialize) and the auto-complete stub.
    for (const model of ['py_pil', 'py_pil_auto']) {
      const line = stderr.split('\n').find((l) => l.includes(`failed to load '${model}'`));
      expect(line, stderr).toBeDefined();
      const block = stderr.slice(stderr.indexOf(line as string));
      expect(block.slice(0, block.indexOf(hint) + hint.length), stderr).toContain(hint);
    }
    expect(stderr.split(hint).length - 1, stderr).toBe(2);
  });

  it('names TRITONSERVER_TS_PYTHON when that chose the interpreter', () => {
    const { status, stderr } = runCli({ TRITONSERVER_TS_PYTHON: fakePython });
    expect(status).toBe(1);
    expect(stderr).toContain(
      `The Python interpreter '${fakePython}' (/usr/bin/python3), chosen with TRITONSERVER_TS_PYTHON, cannot import 'PIL'. /usr/bin/python3 can:`,
    );
  });

  it('when no interpreter has the module: what to install, for which interpreter', async () => {
    const hint = await missingModuleHint(
      { module: 'PIL', interpreter: fakePython, executable: '/usr/bin/python3' },
      { interpreter: fakePython },
      {},
      [fakePython],
    );
    expect(hint).toBe(
      `The Python interpreter '${fakePython}' (/usr/bin/python3), chosen with --backend-config=python,python-interpreter, ` +
        `cannot import 'PIL'. None of the Python 3 interpreters found on this machine can (${fakePython}): ` +
        `install 'Pillow' for /usr/bin/python3, or choose an interpreter that has it with ` +
        '--backend-config=python,python-interpreter=<path> or TRITONSERVER_TS_PYTHON=<path>.',
    );
    // Candidates: python3 of every PATH directory, then the usual system paths; one per installation.
    expect(pythonCandidates({ PATH: `${bin}:/nonexistent` })[0]).toBe(fakePython);
  });
});
