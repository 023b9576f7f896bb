/**
 * Settings of the Python backend: `--backend-config=python,<key>=<value>` (Triton's keys that make
 * sense here, plus this project's `python-interpreter` and `execute-timeout-seconds`), and finding a
 * Python interpreter that can import numpy.
 * @packageDocumentation
 */
import { execFile } from 'node:child_process';

import type { CustomMetricsRegistry } from '../../statistics/custom-metrics.js';

/** The environment variable that names the interpreter (overridden by the backend config). */
export const PYTHON_INTERPRETER_ENV = 'TRITONSERVER_TS_PYTHON';

/**
 * Default execute timeout (beyond Triton, which waits forever): a stub whose `execute` runs longer
 * is killed, its requests fail and it is restarted.
 */
export const DEFAULT_EXECUTE_TIMEOUT_SECONDS = 300;
/** Triton's default `stub-timeout-seconds`: how long starting a stub and `initialize` may take. */
export const DEFAULT_STUB_TIMEOUT_SECONDS = 30;

/** Python-backend settings (all optional). */
export interface PythonBackendSettings {
  /** The interpreter (`python-interpreter`, else `$TRITONSERVER_TS_PYTHON`, else discovered). */
  readonly interpreter?: string;
  /** `stub-timeout-seconds` (Triton): stub start-up, `initialize`, `auto_complete_config`, `finalize`. */
  readonly stubTimeoutSeconds?: number;
  /** `execute-timeout-seconds` (this project's; 0 = none). Default {@link DEFAULT_EXECUTE_TIMEOUT_SECONDS}. */
  readonly executeTimeoutSeconds?: number;
  /** Where `pb_utils.Logger` lines and the model's stdout / stderr go (the server log). */
  readonly log?: PythonLogSink;
  /**
   * Where `pb_utils.MetricFamily` / `Metric` live (the server's, shown on `/metrics`); without it
   * the model's metric calls fail.
   */
  readonly customMetrics?: CustomMetricsRegistry;
}

/** The server log as the Python backend writes to it. */
export interface PythonLogSink {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  verbose(level: number, message: string): void;
}

/**
 * Triton python-backend keys that configure its shared-memory pool and message queue. Stubs here
 * talk over pipes, so they are accepted and have no effect.
 */
export const IGNORED_PYTHON_BACKEND_KEYS: readonly string[] = [
  'shm-default-byte-size',
  'shm-growth-byte-size',
  'shm-message-queue-size',
  'shm-region-prefix-name',
];

/** Keys `--backend-config=python,…` accepts. */
export const PYTHON_BACKEND_KEYS: readonly string[] = [
  'python-interpreter',
  'stub-timeout-seconds',
  'execute-timeout-seconds',
  ...IGNORED_PYTHON_BACKEND_KEYS,
];

/** A bad `--backend-config=python,…` value. */
export class PythonBackendConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PythonBackendConfigError';
  }
}

function seconds(key: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new PythonBackendConfigError(
      `invalid value '${value}' for --backend-config=python,${key}: expected a number of seconds >= 0`,
    );
  }
  return n;
}

/**
 * Applies one `--backend-config=python,<key>=<value>` setting to `settings`; returns the warning to
 * log for a key accepted without effect.
 * @throws PythonBackendConfigError for an unknown key or a bad value.
 */
export function applyPythonBackendConfig(
  settings: { -readonly [K in keyof PythonBackendSettings]?: PythonBackendSettings[K] },
  key: string,
  value: string,
): string | undefined {
  switch (key) {
    case 'python-interpreter':
      if (value === '')
        throw new PythonBackendConfigError('--backend-config=python,python-interpreter needs a path');
      settings.interpreter = value;
      return undefined;
    case 'stub-timeout-seconds':
      settings.stubTimeoutSeconds = seconds(key, value);
      return undefined;
    case 'execute-timeout-seconds':
      settings.executeTimeoutSeconds = seconds(key, value);
      return undefined;
    default:
      if (IGNORED_PYTHON_BACKEND_KEYS.includes(key)) {
        return `--backend-config=python,${key} has no effect in tritonserver-ts (stubs exchange tensors over pipes, not a shared-memory pool)`;
      }
      throw new PythonBackendConfigError(
        `unknown --backend-config key '${key}' for backend 'python' (supported: ${PYTHON_BACKEND_KEYS.join(', ')})`,
      );
  }
}

/** A usable interpreter, or why none is. */
export type InterpreterResult =
  | { readonly ok: true; readonly path: string; readonly numpyVersion: string }
  | { readonly ok: false; readonly reason: string };

function probe(path: string): Promise<{ ok: true; version: string } | { ok: false; why: string }> {
  return new Promise((resolve) => {
    execFile(
      path,
      ['-c', 'import sys, numpy; sys.stdout.write(numpy.__version__)'],
      { timeout: 20_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ ok: true, version: stdout.trim() });
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') resolve({ ok: false, why: 'not found' });
        else if (code === 'EACCES') resolve({ ok: false, why: 'not executable' });
        else if (/No module named '?numpy/.test(stderr)) resolve({ ok: false, why: 'cannot import numpy' });
        else {
          const last = stderr.trim().split('\n').at(-1) ?? error.message;
          resolve({ ok: false, why: `failed (${last})` });
        }
      },
    );
  });
}

const found = new Map<string, Promise<InterpreterResult>>();

/**
 * The interpreter Python models run with: `settings.interpreter`, else `$TRITONSERVER_TS_PYTHON`,
 * else the first of `python3` (on PATH) and `/usr/bin/python3` that can import numpy. A successful
 * probe is cached per candidate list; a failed one is not (the interpreter may be installed, or a
 * probe that timed out under load may succeed, on the next model load).
 */
export function findPythonInterpreter(settings: PythonBackendSettings = {}): Promise<InterpreterResult> {
  const explicit = settings.interpreter ?? process.env[PYTHON_INTERPRETER_ENV];
  const candidates = explicit !== undefined && explicit !== '' ? [explicit] : ['python3', '/usr/bin/python3'];
  const key = candidates.join('\u0000');
  let result = found.get(key);
  if (result === undefined) {
    result = (async (): Promise<InterpreterResult> => {
      const problems: string[] = [];
      for (const candidate of candidates) {
        const r = await probe(candidate);
        if (r.ok) return { ok: true, path: candidate, numpyVersion: r.version };
        problems.push(`'${candidate}': ${r.why}`);
      }
      const how =
        explicit !== undefined && explicit !== ''
          ? ''
          : ` (set --backend-config=python,python-interpreter=<path> or ${PYTHON_INTERPRETER_ENV})`;
      return {
        ok: false,
        reason: `the python backend needs a Python 3 interpreter with numpy: ${problems.join('; ')}${how}`,
      };
    })();
    const pending = result;
    found.set(key, pending);
    // Concurrent look-ups share one probe; a failure is forgotten once it is known.
    void pending.then((r) => {
      if (!r.ok && found.get(key) === pending) found.delete(key);
    });
  }
  return result;
}
