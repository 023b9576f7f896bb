/**
 * The HTTP wire's settings converters: `POST v2[/models/{m}]/trace/setting` and `POST v2/logging`
 * JSON bodies as the core's typed updates ({@link TraceSettingsUpdate}, {@link LogSettingsUpdate}),
 * read the way Triton's HTTP front end reads them, with its messages and statuses.
 * @packageDocumentation
 */
import { echo } from '../common/echo.js';
import { invalidArg, unavailable, unsupported, type ServerError } from '../common/errors.js';
import type { LogSettingsRead, LogSettingsUpdate } from '../core/logging.js';
import {
  parseTraceCount,
  parseTraceLevels,
  parseTraceUint,
  traceFileRefused,
  type TraceSettingsUpdate,
} from '../core/trace.js';

/** A JSON value that should carry a string (Triton's clients send strings; numbers are accepted). */
function scalar(key: string, value: unknown): string {
  const v = Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  throw invalidArg(`expect a string value for trace setting '${echo(key)}'`);
}

/**
 * A trace settings body as a {@link TraceSettingsUpdate}: `trace_file` in any form is refused
 * (UNSUPPORTED, the file is a command-line setting only); `null` makes a setting fall back; a value
 * may be a string, an integer or a one-element list of either (`trace_level`: a list, or one name).
 *
 * As Triton (`HandleTrace`), keys it does not read are ignored — among them `trace_mode`, which is
 * fixed at startup (`--trace-config mode=…`) and only reported — and so are level names it does not
 * know. `TIMESTAMPS` and `TENSORS` add up.
 * @throws ServerError
 */
export function traceUpdateFromJson(body: unknown): TraceSettingsUpdate {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidArg('trace settings must be a JSON object');
  }
  if (Object.hasOwn(body, 'trace_file')) throw traceFileRefused();
  const update: TraceSettingsUpdate = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    switch (key) {
      case 'trace_level': {
        if (value === null) update.level = null;
        else {
          const level = parseTraceLevels(Array.isArray(value) ? (value as unknown[]) : [value]);
          if (level !== undefined) update.level = level;
        }
        break;
      }
      case 'trace_rate':
      case 'log_frequency': {
        const parsed = value === null ? null : parseTraceUint(key, scalar(key, value));
        if (key === 'trace_rate') update.rate = parsed;
        else update.logFrequency = parsed;
        break;
      }
      case 'trace_count':
        update.count = value === null ? null : parseTraceCount(scalar(key, value));
        break;
      default:
        // Triton reads no other key (`trace_mode` included): ignored.
        break;
    }
  }
  return update;
}

const BOOL_KEYS = ['log_info', 'log_warning', 'log_error'] as const;

/**
 * A `POST v2/logging` body as Triton's `HandleLogging` reads it: the known keys in Triton's order
 * (`log_file`, `log_info`, `log_warning`, `log_error`, `log_verbose_level`, `log_format`), `null`
 * values and unknown keys ignored, a body that is not an object read as `{}`. A non-null `log_file`
 * is refused (UNSUPPORTED): the file is set at startup only. A value of the wrong JSON type gets
 * TritonJson's message (INVALID_ARG); a `log_format` other than `default` / `ISO8601` is
 * UNAVAILABLE, naming the flag. Reading stops at the first refusal; the settings read before it are
 * still applied (see {@link LogSettingsRead}). No value is ever serialised back (a deep value
 * cannot recurse).
 */
export function logUpdateFromJson(body: unknown): LogSettingsRead {
  const fields: Record<string, unknown> =
    body !== null && typeof body === 'object' && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const present = (key: string): boolean => Object.hasOwn(fields, key) && fields[key] !== null;
  const update: { -readonly [K in keyof LogSettingsUpdate]: LogSettingsUpdate[K] } = {};
  const stop = (error: ServerError): LogSettingsRead => ({ update, error });
  if (present('log_file')) {
    // Triton (since 24.05): the log file is chosen at startup only; a client must not pick a path.
    return stop(unsupported('log file location can not be updated through network protocol'));
  }
  for (const key of BOOL_KEYS) {
    if (!present(key)) continue;
    const value = fields[key];
    if (typeof value !== 'boolean') return stop(invalidArg('attempt to access JSON non-boolean as boolean'));
    update[key] = value;
  }
  if (present('log_verbose_level')) {
    const value = fields.log_verbose_level;
    const uint =
      (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) ||
      (typeof value === 'bigint' && value >= 0n && value <= 0xffff_ffff_ffff_ffffn);
    if (!uint) return stop(invalidArg('attempt to access JSON non-unsigned-integer as unsigned-integer'));
    // Triton casts the uint64 to its int32 level.
    update.log_verbose_level = Number(BigInt.asIntN(32, BigInt(value)));
  }
  if (present('log_format')) {
    const value = fields.log_format;
    if (typeof value !== 'string') return stop(invalidArg('attempt to access JSON non-string as string'));
    if (value !== 'default' && value !== 'ISO8601') {
      // Triton answers this one UNAVAILABLE (503), with the flag's name.
      return stop(unavailable(`invalid argument for --log_format, got: ${echo(value)}`));
    }
    update.log_format = value;
  }
  return { update };
}
