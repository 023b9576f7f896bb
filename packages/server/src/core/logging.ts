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

import type { LogSettings, LogSettingsUpdate } from '@tritonserver-ts/protocol';

import type { ServerError } from '../common/errors.js';

/** Triton's log settings object and its update: the shared messages (`protocol/settings.ts`). */
export type { LogSettings, LogSettingsUpdate } from '@tritonserver-ts/protocol';

/** Default settings, as tritonserver starts without logging flags. */
export const DEFAULT_LOG_SETTINGS: Readonly<LogSettings> = {
  log_file: '',
  log_info: true,
  log_warning: true,
  log_error: true,
  log_verbose_level: 0,
  log_format: 'default',
};

/**
 * What a wire's converter read from a log settings request. Triton applies each setting as it
 * reads it (`HandleLogging`, gRPC `LogSettings`), so a bad value leaves the settings before it
 * applied: `update` holds those, `error` the refusal the request is then answered with.
 */
export interface LogSettingsRead {
  readonly update: LogSettingsUpdate;
  readonly error?: ServerError;
}

/** Where log lines go when no `log_file` is set. */
export type LogSink = (line: string) => void;

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
   * Applies an update (each given setting replaces the current one) and returns the settings now in
   * effect. The wires' converters have read and checked the values; `log_file` is never part of an
   * update (the file is chosen at startup only).
   */
  update(update: LogSettingsUpdate): LogSettings {
    const s = this.#settings;
    if (update.log_info !== undefined) s.log_info = update.log_info;
    if (update.log_warning !== undefined) s.log_warning = update.log_warning;
    if (update.log_error !== undefined) s.log_error = update.log_error;
    if (update.log_verbose_level !== undefined) s.log_verbose_level = update.log_verbose_level;
    if (update.log_format !== undefined) s.log_format = update.log_format;
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
