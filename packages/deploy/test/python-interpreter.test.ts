// The Python a Python model needs (issue 30). models_staging/README.md lists, per model, the modules
// its model.py imports beyond the standard library: checked here against the files themselves
// (parsed by Python's own `ast`), and against what `npm start` asks of an interpreter
// (scripts/embedded-server.mjs). Then the server README's command, `npx tritonserver-ts
// --model-repository=models_staging`, on a machine whose `python3` on PATH has numpy but not
// Pillow (a wrapper of /usr/bin/python3 whose sitecustomize makes `import PIL` fail): it stops at
// startup, and each Python model's error names the interpreter used, the missing module, the
// interpreter that has it (/usr/bin/python3) and the flag and variable that choose it.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

import { exists, modelsDir, read, repoRoot } from '../src/repo.js';
import { freePort } from './free-port.js';

const { PYTHON_MODULES } = (await import(
  pathToFileURL(join(repoRoot, 'scripts/embedded-server.mjs')).href
)) as {
  PYTHON_MODULES: string[];
};

/** Top-level modules a Python file imports beyond the standard library and the backend's utils. */
function thirdPartyImports(file: string): string[] {
  const code = `
import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
names = set()
for node in ast.walk(tree):
    if isinstance(node, ast.Import):
        names.update(a.name.split(".")[0] for a in node.names)
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names.add(node.module.split(".")[0])
names -= set(sys.stdlib_module_names) | {"triton_python_backend_utils"}
print(json.dumps(sorted(names)))
`;
  const r = spawnSync('/usr/bin/python3', ['-c', code, file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as string[];
}

/** models_staging/README.md's table: model → the modules it lists. */
function documentedModules(): Map<string, string[]> {
  const text = read('models_staging/README.md');
  const section = text.slice(text.indexOf('## Python modules the Python models need'));
  const table = new Map<string, string[]>();
  for (const line of section.split('\n').slice(1)) {
    if (line.startsWith('## ')) break;
    const m = /^\| `([a-z_]+)` +\| ([^|]+)\|/.exec(line);
    if (m === null) continue;
    table.set(m[1] as string, [...(m[2] as string).matchAll(/`([^`]+)`/g)].map((x) => x[1] as string).sort());
  }
  return table;
}

const tmp = mkdtempSync(join(tmpdir(), 'python-interpreter-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the Python a Python model needs', () => {
  it("models_staging/README.md lists every Python model's imports, and npm start asks for them all", () => {
    const documented = documentedModules();
    const models = readdirSync(modelsDir).filter((m) => exists(`models_staging/${m}/1/model.py`));
    expect(models.sort()).toEqual([...documented.keys()].sort());
    for (const model of models) {
      expect(thirdPartyImports(join(modelsDir, model, '1/model.py')), model).toEqual(documented.get(model));
    }
    expect([...PYTHON_MODULES].sort()).toEqual([...new Set([...documented.values()].flat())].sort());
  });

  it('npx tritonserver-ts on models_staging with a python3 without Pillow: an error that says what to do', async () => {
    const bin = join(tmp, 'bin');
    mkdirSync(join(tmp, 'site'), { recursive: true });
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(tmp, 'site', 'sitecustomize.py'), "import sys\nsys.modules['PIL'] = None\n");
    writeFileSync(
      join(bin, 'python3'),
      `#!/bin/sh\n# /usr/bin/python3 without Pillow\nPYTHONPATH=${join(tmp, 'site')} exec /usr/bin/python3 "$@"\n`,
    );
    chmodSync(join(bin, 'python3'), 0o755);
    const env: Record<string, string> = {
      HOME: process.env.HOME ?? tmp,
      PATH: [bin, dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
    };
    // The server README's command, on free ports.
    const args = [
      'tritonserver-ts',
      '--model-repository=models_staging',
      `--http-port=${await freePort()}`,
      `--grpc-port=${await freePort()}`,
      `--metrics-port=${await freePort()}`,
    ];
    const child = spawn('npx', args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code, output).toBe(1);
    expect(output).toContain('error: creating server: Internal - failed to load all models');
    const hint =
      "The Python interpreter 'python3' (/usr/bin/python3), the first of python3 and /usr/bin/python3 with " +
      'numpy (neither --backend-config=python,python-interpreter nor TRITONSERVER_TS_PYTHON is set), ' +
      "cannot import 'PIL'. /usr/bin/python3 can: choose it with " +
      '--backend-config=python,python-interpreter=/usr/bin/python3 or TRITONSERVER_TS_PYTHON=/usr/bin/python3.';
    for (const model of ['food_classifier', 'food_preprocess']) {
      const at = output.indexOf(`failed to load '${model}'`);
      expect(at, output).toBeGreaterThanOrEqual(0);
      expect(output.slice(at), output).toContain(hint);
    }
  }, 90_000);
});
