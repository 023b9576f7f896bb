/**
 * What to do when a model.py cannot import a module. The stub reports the module a
 * `ModuleNotFoundError` names and the interpreter it runs on (`sys.executable`); this module adds to
 * the model's error which interpreter was used and how it was chosen, which other Python 3
 * interpreters on this machine do import the module, and the flag and variable that choose one.
 *
 * Interpreters looked at: `python3` in every directory of `PATH`, then `/usr/bin/python3` and
 * `/usr/local/bin/python3`; two paths to the same installation count once.
 * @packageDocumentation
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

import { PYTHON_INTERPRETER_ENV, type PythonBackendSettings } from './settings.js';

/** pip's name for modules whose distribution is named otherwise. */
const PIP_NAMES: Readonly<Record<string, string>> = {
  PIL: 'Pillow',
  cv2: 'opencv-python-headless',
  sklearn: 'scikit-learn',
  skimage: 'scikit-image',
  yaml: 'PyYAML',
};

/** How long an answer about which interpreters import a module is reused. */
const PROBE_CACHE_MS = 10_000;

/** The interpreter paths to look at, in order (see the module documentation). */
export function pythonCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = (env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  const paths = [...dirs.map((d) => join(d, 'python3')), '/usr/bin/python3', '/usr/local/bin/python3'];
  return [...new Set(paths)].filter((p) => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Whether `interpreter` imports `module`, and which Python it is: its executable (symlinks
 * resolved), prefix and module search path, so that two paths to one installation count once while
 * a virtual environment (same executable, another prefix) or a wrapper setting PYTHONPATH does not.
 */
function probe(interpreter: string, module: string): Promise<{ identity: string; imports: boolean }> {
  const code = [
    'import importlib, json, os, sys',
    'print(json.dumps([os.path.realpath(sys.executable), sys.prefix, sys.path]), flush=True)',
    'importlib.import_module(sys.argv[1])',
  ].join('\n');
  return new Promise((resolve) => {
    execFile(
      interpreter,
      ['-c', code, module],
      { timeout: 20_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
      (error, stdout) => {
        const identity = stdout.split('\n')[0]?.trim() ?? '';
        resolve({ identity: identity === '' ? interpreter : identity, imports: error === null });
      },
    );
  });
}

/** An interpreter found, and whether it imports the module. */
export interface InterpreterProbe {
  readonly path: string;
  readonly imports: boolean;
}

const probes = new Map<string, Promise<InterpreterProbe[]>>();

/** The interpreters of {@link pythonCandidates} (one per installation) and whether each imports `module`. */
export function interpretersImporting(
  module: string,
  candidates: readonly string[] = pythonCandidates(),
): Promise<InterpreterProbe[]> {
  const key = [module, ...candidates].join('\u0000');
  let answer = probes.get(key);
  if (answer === undefined) {
    answer = (async () => {
      const results = await Promise.all(candidates.map((path) => probe(path, module)));
      const seen = new Set<string>();
      const found: InterpreterProbe[] = [];
      results.forEach((r, i) => {
        if (seen.has(r.identity)) return;
        seen.add(r.identity);
        found.push({ path: candidates[i] as string, imports: r.imports });
      });
      return found;
    })();
    probes.set(key, answer);
    setTimeout(() => probes.delete(key), PROBE_CACHE_MS).unref();
  }
  return answer;
}

/** How the interpreter was chosen, for the message. */
function chosenBy(settings: PythonBackendSettings, env: NodeJS.ProcessEnv): string {
  if (settings.interpreter !== undefined) return 'chosen with --backend-config=python,python-interpreter';
  const fromEnv = env[PYTHON_INTERPRETER_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return `chosen with ${PYTHON_INTERPRETER_ENV}`;
  return `the first of python3 and /usr/bin/python3 with numpy (neither --backend-config=python,python-interpreter nor ${PYTHON_INTERPRETER_ENV} is set)`;
}

/** What {@link missingModuleHint} needs to know. */
export interface MissingModule {
  /** The module `ModuleNotFoundError` names (`PIL`, `cv2`, `a.b`…). */
  readonly module: string;
  /** The interpreter the stub was started with (a path or a command on PATH). */
  readonly interpreter: string;
  /** The executable it runs (`sys.executable` in the stub), when known. */
  readonly executable?: string;
}

/**
 * The paragraph added to a model's error when its model.py cannot import `missing.module` (see the
 * module documentation).
 */
export async function missingModuleHint(
  missing: MissingModule,
  settings: PythonBackendSettings,
  env: NodeJS.ProcessEnv = process.env,
  candidates?: readonly string[],
): Promise<string> {
  const { module, interpreter, executable } = missing;
  const used =
    executable !== undefined && executable !== interpreter
      ? `'${interpreter}' (${executable})`
      : `'${interpreter}'`;
  const others = await interpretersImporting(module, candidates ?? pythonCandidates(env));
  const able = others.filter((p) => p.imports).map((p) => p.path);
  const top = module.split('.')[0] ?? module;
  const head = `The Python interpreter ${used}, ${chosenBy(settings, env)}, cannot import '${module}'.`;
  if (able.length > 0) {
    const [first] = able as [string, ...string[]];
    const which = able.length === 1 ? `${first} can` : `These can: ${able.join(', ')}`;
    return (
      `${head} ${which}: choose it with --backend-config=python,python-interpreter=${first} ` +
      `or ${PYTHON_INTERPRETER_ENV}=${first}.`
    );
  }
  const looked = others.length > 0 ? ` (${others.map((p) => p.path).join(', ')})` : '';
  return (
    `${head} None of the Python 3 interpreters found on this machine can${looked}: install ` +
    `'${PIP_NAMES[top] ?? top}' for ${executable ?? interpreter}, or choose an interpreter that has it ` +
    `with --backend-config=python,python-interpreter=<path> or ${PYTHON_INTERPRETER_ENV}=<path>.`
  );
}

/**
 * The error message of a stub's `init_error` frame: the Python error, then, when it is a module
 * that could not be imported, {@link missingModuleHint}.
 */
export async function initErrorMessage(
  header: Readonly<Record<string, unknown>>,
  interpreter: string,
  settings: PythonBackendSettings,
): Promise<string> {
  const message = String(header.message);
  if (typeof header.missing_module !== 'string' || header.missing_module === '') return message;
  const hint = await missingModuleHint(
    {
      module: header.missing_module,
      interpreter,
      ...(typeof header.executable === 'string' ? { executable: header.executable } : {}),
    },
    settings,
  );
  return `${message.trimEnd()}\n\n${hint}`;
}
