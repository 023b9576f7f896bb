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
   * Applies a `POST v2/logging` body as Triton's `HandleLogging` does: the known keys are read in
   * Triton's order (`log_file`, `log_info`, `log_warning`, `log_error`, `log_verbose_level`,
   * `log_format`), each applied as it is read, `null` values and unknown keys ignored. A non-null
   * `log_file` is refused (UNSUPPORTED): the file is set at startup only. A value of the wrong JSON
   * type gets TritonJson's message (INVALID_ARG); a `log_format` other than `default` / `ISO8601` is
   * UNAVAILABLE, naming the flag. No value is ever serialised back (a deep value cannot recurse).
   */
  update(body: unknown): LogSettings {
    const fields: Record<string, unknown> =
      body !== null && typeof body === 'object' && !Array.isArray(body)
        ? (body as Record<string, unknown>)
        : {};
    const present = (key: string): boolean => Object.hasOwn(fields, key) && fields[key] !== null;
    if (present('log_file')) {
      // Triton (since 24.05): the log file is chosen at startup only; a client must not pick a path.
      throw unsupported('log file location can not be updated through network protocol');
    }
    for (const key of BOOL_KEYS) {
      if (!present(key)) continue;
      const value = fields[key];
      if (typeof value !== 'boolean') throw invalidArg('attempt to access JSON non-boolean as boolean');
      this.#settings[key] = value;
    }
    if (present('log_verbose_level')) {
      const value = fields.log_verbose_level;
      const uint =
        (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) ||
        (typeof value === 'bigint' && value >= 0n && value <= 0xffff_ffff_ffff_ffffn);
      if (!uint) throw invalidArg('attempt to access JSON non-unsigned-integer as unsigned-integer');
      // Triton casts the uint64 to its int32 level.
      this.#settings.log_verbose_level = Number(BigInt.asIntN(32, BigInt(value)));
    }
    if (present('log_format')) {
      const value = fields.log_format;
      if (typeof value !== 'string') throw invalidArg('attempt to access JSON non-string as string');
      if (value !== 'default' && value !== 'ISO8601') {
        // Triton answers this one UNAVAILABLE (503), with the flag's name.
        throw unavailable(`invalid argument for --log_format, got: ${value}`);
      }
      this.#settings.log_format = value;
    }
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
