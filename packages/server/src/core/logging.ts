/**
 * The server's logger and Triton's log-settings extension (`GET/POST v2/logging`).
 *
 * Settings use Triton's keys and types: `log_file` (string), `log_info` / `log_warning` /
 * `log_error` (bool), `log_verbose_level` (uint), `log_format` (`default` | `ISO8601`). Lines go to
 * the sink given at construction (stderr by default) or, when `log_file` is set at construction
 * (`--log-file`), are appended to that file. The network can read `log_file` but never change it.
 * @packageDocumentation
 */
import { appendFileSync } from 'node:fs';

import { stringifyJson } from '@tritonserver-ts/client/protocol';

import { invalidArg, unavailable, unsupported } from './errors.js';

/** Triton's log settings object. */
export interface LogSettings {
  log_file: string;
  log_info: boolean;
  log_warning: boolean;
  log_error: boolean;
  log_verbose_level: number;
  log_format: 'default' | 'ISO8601';
}

/** Default settings, as tritonserver starts without logging flags. */
export const DEFAULT_LOG_SETTINGS: Readonly<LogSettings> = {
  log_file: '',
  log_info: true,
  log_warning: true,
  log_error: true,
  log_verbose_level: 0,
  log_format: 'default',
};

/** Where log lines go when no `log_file` is set. */
export type LogSink = (line: string) => void;

const BOOL_KEYS = ['log_info', 'log_warning', 'log_error'] as const;

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** The server logger. Levels follow Triton: I (info), W (warning), E (error), V (verbose, level ≥ n). */
export class Logger {
  #settings: LogSettings;
  readonly #sink: LogSink;

  constructor(
    settings: Partial<LogSettings> = {},
    sink: LogSink = (line) => process.stderr.write(line + '\n'),
  ) {
    this.#settings = { ...DEFAULT_LOG_SETTINGS, ...settings };
    this.#sink = sink;
  }

  /** A copy of the current settings. */
  get settings(): LogSettings {
    return { ...this.#settings };
  }

  /**
   * Applies a `POST v2/logging` body: only the given keys change. Unknown keys and wrongly typed
   * values are refused with Triton-style INVALID_ARG errors; nothing changes on error. A non-null
   * `log_file` is refused (UNSUPPORTED), as Triton does: the file is set at startup only.
   */
  update(body: unknown): LogSettings {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw invalidArg('log settings must be a JSON object');
    }
    if ((body as Record<string, unknown>).log_file != null) {
      // Triton (since 24.05): the log file is chosen at startup only; a client must not pick a path.
      throw unsupported('log file location can not be updated through network protocol');
    }
    const next: LogSettings = { ...this.#settings };
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      if (value === null) continue;
      if ((BOOL_KEYS as readonly string[]).includes(key)) {
        if (typeof value !== 'boolean') throw invalidArg(`expect boolean for log setting '${key}'`);
        next[key as (typeof BOOL_KEYS)[number]] = value;
      } else if (key === 'log_verbose_level') {
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0xffffffff) {
          throw invalidArg(`expect unsigned integer for log setting '${key}'`);
        }
        next.log_verbose_level = value;
      } else if (key === 'log_format') {
        if (value !== 'default' && value !== 'ISO8601') {
          // Triton answers this one UNAVAILABLE (503), with the flag's name.
          throw unavailable(
            `invalid argument for --log_format, got: ${typeof value === 'string' ? value : stringifyJson(value)}`,
          );
        }
        next.log_format = value;
      } else {
        throw invalidArg(`unknown log setting '${key}'`);
      }
    }
    this.#settings = next;
    return this.settings;
  }

  /** True when verbose messages of `level` are written. */
  isVerbose(level = 1): boolean {
    return this.#settings.log_verbose_level >= level;
  }

  info(message: string): void {
    if (this.#settings.log_info) this.#write('I', message);
  }

  warn(message: string): void {
    if (this.#settings.log_warning) this.#write('W', message);
  }

  error(message: string): void {
    if (this.#settings.log_error) this.#write('E', message);
  }

  verbose(level: number, message: string): void {
    if (this.isVerbose(level)) this.#write('V', message);
  }

  #write(level: string, message: string): void {
    const now = new Date();
    const line =
      this.#settings.log_format === 'ISO8601'
        ? `${now.toISOString().replace(/\.\d{3}Z$/, 'Z')} ${level} ${message}`
        : `${level}${pad(now.getMonth() + 1)}${pad(now.getDate())} ${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}.${pad(now.getMilliseconds(), 3)}000 ${process.pid} ${message}`;
    if (this.#settings.log_file !== '') {
      try {
        appendFileSync(this.#settings.log_file, line + '\n');
        return;
      } catch {
        // fall through to the sink when the file cannot be written
      }
    }
    this.#sink(line);
  }
}
