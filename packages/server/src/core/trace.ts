/**
 * Triton's trace settings: the settings object of the trace extension
 * (`GET/POST v2[/models/{m}]/trace/setting`), tritonserver's `--trace-config` flag, and the rules and
 * messages both use. The settings drive {@link TraceManager} (`tracing.ts`), which samples requests
 * and writes Triton's JSON trace file.
 *
 * Levels: `OFF`, `TIMESTAMPS` and `TENSORS` (the request's input and output tensors in the trace,
 * `trace-tensors.ts`), alone or both. The `opentelemetry` mode is refused with a clear message: this
 * server writes Triton's own JSON trace file only.
 * @packageDocumentation
 */
import { type TraceSettings } from '@tritonserver-ts/protocol';

import { echo } from '../common/echo.js';
import { invalidArg, unsupported, type ServerError } from '../common/errors.js';

/** The trace settings object as Triton returns it: the shared message (`protocol/settings.ts`). */
export type { TraceSettings } from '@tritonserver-ts/protocol';

/** tritonserver's defaults (tracing off). */
export const DEFAULT_TRACE_SETTINGS: Readonly<TraceSettings> = {
  trace_level: ['OFF'],
  trace_rate: '1000',
  trace_count: '-1',
  log_frequency: '0',
  trace_file: '',
  trace_mode: 'triton',
};

/**
 * A trace level: `OFF`, or what is traced — timestamps, tensors, or both (Triton's level flags
 * `TIMESTAMPS` and `TENSORS`, combined).
 */
export type TraceLevel = 'OFF' | 'TIMESTAMPS' | 'TENSORS' | 'TIMESTAMPS+TENSORS';

/** The level tracing `timestamps` and / or `tensors` (`OFF` when neither). */
export function traceLevelOf(timestamps: boolean, tensors: boolean): TraceLevel {
  if (timestamps) return tensors ? 'TIMESTAMPS+TENSORS' : 'TIMESTAMPS';
  return tensors ? 'TENSORS' : 'OFF';
}

/** Whether `level` traces timestamps. */
export function tracesTimestamps(level: TraceLevel): boolean {
  return level === 'TIMESTAMPS' || level === 'TIMESTAMPS+TENSORS';
}

/** Whether `level` traces tensors. */
export function tracesTensors(level: TraceLevel): boolean {
  return level === 'TENSORS' || level === 'TIMESTAMPS+TENSORS';
}

/** `trace_level` as Triton reports it: `["OFF"]`, or `TIMESTAMPS` then `TENSORS` when set. */
export function traceLevelNames(level: TraceLevel): string[] {
  return level === 'OFF' ? ['OFF'] : level.split('+');
}

/** Numeric trace settings, as the trace manager uses them. */
export interface TraceValues {
  level: TraceLevel;
  /** Every `rate`-th request is traced (uint32; 0 makes the setting invalid). */
  rate: number;
  /** Traces still to collect; -1 (any negative) = no limit, 0 = done. */
  count: number;
  /** Write the collected traces to `<file>.<n>` every `logFrequency` traces; 0 = at shutdown. */
  logFrequency: number;
  /** The trace file; '' = none (no trace is collected in `triton` mode). */
  file: string;
}

/**
 * A trace settings update (HTTP `POST v2[/models/{m}]/trace/setting`, gRPC `TraceSetting`), as each
 * wire's converter reads it: a value to set, `null` to fall back (a model's setting to the global
 * one, the global one to its startup value), absent to keep. Not a wire message: the values are
 * already parsed (the message a client sends is the protocol's `TraceSettingsUpdate`, text keyed by
 * Triton's setting names).
 */
export interface TraceSettingsUpdate {
  level?: TraceLevel | null;
  rate?: number | null;
  count?: number | null;
  logFrequency?: number | null;
}

/** A bad `--trace-config`, with tritonserver's message (`Bad option: "--trace-config …".\n…`). */
export class TraceConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TraceConfigError';
  }
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * `std::stoi`: leading white space, an optional sign, decimal digits (anything after them is
 * ignored). `invalid` when there are no digits, `range` outside int32.
 */
function stoi(text: string): number | 'invalid' | 'range' {
  const m = /^[ \t\n\v\f\r]*([+-]?\d+)/.exec(text);
  if (m === null) return 'invalid';
  const n = BigInt(m[1] as string);
  if (n < BigInt(INT32_MIN) || n > BigInt(INT32_MAX)) return 'range';
  return Number(n);
}

/** An int32 as a C++ cast to `uint32_t` keeps it. */
function toUint32(n: number): number {
  return n >>> 0;
}

/** tritonserver's `ParseOption<int>` and its messages. */
function parseOptionInt(value: string): number {
  const n = stoi(value);
  if (n === 'invalid') throw new Error(`Invalid option value. Got ${value}`);
  if (n === 'range') throw new Error(`Provided option value is out of bound. Got ${value}`);
  return n;
}

const OPENTELEMETRY_REFUSED =
  "the opentelemetry trace mode is not supported by tritonserver-ts; traces are written as Triton's JSON trace file (mode triton)";

/** tritonserver's `ParseTraceLevelOption` (case-insensitive, with its aliases). */
function parseLevelOption(value: string): 'OFF' | 'TIMESTAMPS' | 'TENSORS' {
  const v = value.toLowerCase();
  if (v === 'false' || v === 'off') return 'OFF';
  if (['true', 'on', 'min', 'max', 'timestamps'].includes(v)) return 'TIMESTAMPS';
  if (v === 'tensors') return 'TENSORS';
  throw new Error(`invalid value for trace level option: ${v}`);
}

/** tritonserver's `ParseTraceModeOption`; `opentelemetry` is refused here. */
function parseModeOption(value: string): 'triton' {
  const v = value.toLowerCase();
  if (v === 'triton') return 'triton';
  if (v === 'opentelemetry') throw new Error(OPENTELEMETRY_REFUSED);
  throw new Error(
    `invalid value for trace mode option: ${v}. Available options are "triton" and "opentelemetry"`,
  );
}

function badOption(flag: string, message: string): TraceConfigError {
  return new TraceConfigError(`Bad option: "${flag}".\n${message}`);
}

const GLOBAL_SETTINGS = ['rate', 'level', 'count', 'mode'];
const TRITON_SETTINGS = ['file', 'log-frequency'];

/**
 * Parses tritonserver's `--trace-config` values (`[<mode>,]<setting>=<value>`, repeatable) into the
 * initial trace settings, with tritonserver's parsing and messages: global settings `rate`, `level`
 * (repeatable: `TIMESTAMPS` and `TENSORS` add up, `OFF` wins), `count`, `mode`; `triton,` settings
 * `file` and `log-frequency`.
 *
 * Stricter than tritonserver, so that nobody believes tracing is on when it is not: a setting
 * tritonserver would silently ignore (unknown, or given in the wrong group such as `file=` without
 * `triton,`) is refused with a hint, and `opentelemetry` is refused.
 * @throws TraceConfigError
 */
export function parseTraceConfig(values: readonly string[]): Partial<TraceSettings> {
  const groups: { mode: '' | 'triton'; setting: string; value: string }[] = [];
  for (const raw of values) {
    const comma = raw.indexOf(',');
    let mode: '' | 'triton' = '';
    if (comma === 0) {
      throw badOption(
        '--trace-config',
        `No trace mode specified. --trace-config option format is <trace mode>,<setting>=<value> or <setting>=<value>. Got ${raw}`,
      );
    }
    if (comma > 0) {
      try {
        mode = parseModeOption(raw.slice(0, comma));
      } catch (error) {
        throw badOption('--trace-config', (error as Error).message);
      }
    }
    const eq = raw.indexOf('=', comma + 1);
    const setting = eq < 0 ? '' : raw.slice(comma + 1, eq);
    const value = eq < 0 ? '' : raw.slice(eq + 1);
    if (setting === '' || value === '') {
      throw badOption(
        '--trace-config',
        `--trace-config option format is '<trace mode>,<setting>=<value>'. Got ${raw}`,
      );
    }
    groups.push({ mode, setting, value });
  }

  const out: Partial<TraceSettings> = {};
  const levels = new Set<'TIMESTAMPS' | 'TENSORS'>();
  let disabled = false;
  for (const { mode, setting, value } of groups) {
    const flag = mode === '' ? `--trace-config ${setting}` : `--trace-config ${mode},${setting}`;
    try {
      if (mode === '') {
        if (setting === 'rate') out.trace_rate = String(toUint32(parseOptionInt(value)));
        else if (setting === 'count') out.trace_count = String(parseOptionInt(value));
        else if (setting === 'mode') out.trace_mode = parseModeOption(value);
        else if (setting === 'level') {
          const parsed = parseLevelOption(value);
          if (parsed === 'OFF') disabled = true;
          else levels.add(parsed);
        } else if (TRITON_SETTINGS.includes(setting)) {
          throw new Error(
            `'${setting}' is a setting of the triton trace mode: use --trace-config triton,${setting}=${value}`,
          );
        } else {
          throw new Error(
            `unknown trace setting '${setting}' (global: ${GLOBAL_SETTINGS.join(', ')}; triton mode: ${TRITON_SETTINGS.join(', ')})`,
          );
        }
      } else if (setting === 'file') {
        out.trace_file = value;
      } else if (setting === 'log-frequency') {
        out.log_frequency = String(toUint32(parseOptionInt(value)));
      } else if (GLOBAL_SETTINGS.includes(setting)) {
        throw new Error(`'${setting}' is a global trace setting: use --trace-config ${setting}=${value}`);
      } else {
        throw new Error(
          `unknown triton trace setting '${setting}' (triton mode: ${TRITON_SETTINGS.join(', ')})`,
        );
      }
    } catch (error) {
      if (error instanceof TraceConfigError) throw error;
      throw badOption(flag, (error as Error).message);
    }
  }
  if (disabled) out.trace_level = ['OFF'];
  else if (levels.size > 0) {
    out.trace_level = traceLevelNames(traceLevelOf(levels.has('TIMESTAMPS'), levels.has('TENSORS')));
  }
  return out;
}

function intSetting(raw: string | undefined, fallback: string, what: string): number {
  const n = stoi(raw ?? fallback);
  if (typeof n !== 'number') throw new TraceConfigError(`invalid trace ${what}: '${raw}'`);
  return n;
}

/**
 * The numeric values of initial settings (the `trace` option of the server, e.g. from
 * {@link parseTraceConfig}), defaults filled in.
 * @throws TraceConfigError on a value the flag would have refused
 */
export function initialTraceValues(settings: Partial<TraceSettings>): TraceValues {
  const levels = settings.trace_level ?? DEFAULT_TRACE_SETTINGS.trace_level;
  for (const l of levels) {
    if (l !== 'OFF' && l !== 'TIMESTAMPS' && l !== 'TENSORS') {
      throw new TraceConfigError(`invalid trace level '${l}'`);
    }
  }
  const level = levels.includes('OFF')
    ? 'OFF'
    : traceLevelOf(levels.includes('TIMESTAMPS'), levels.includes('TENSORS'));
  if ((settings.trace_mode ?? 'triton') !== 'triton') throw new TraceConfigError(OPENTELEMETRY_REFUSED);
  return {
    level,
    rate: toUint32(intSetting(settings.trace_rate, DEFAULT_TRACE_SETTINGS.trace_rate, 'rate')),
    count: intSetting(settings.trace_count, DEFAULT_TRACE_SETTINGS.trace_count, 'count'),
    logFrequency: toUint32(
      intSetting(settings.log_frequency, DEFAULT_TRACE_SETTINGS.log_frequency, 'log frequency'),
    ),
    file: settings.trace_file ?? '',
  };
}

/*
 * The text rules of the trace settings API, shared by the wires' converters (`http/settings-json.ts`,
 * `grpc/handlers/settings.ts`): Triton reads every setting value as text on both wires, with the
 * same messages. A converter turns its wire's request into a {@link TraceSettingsUpdate}; the core
 * ({@link TraceManager.update}) takes only that.
 */

/** Any `trace_file` in an update, even a clearing one (Triton since 24.05, both wires): UNSUPPORTED. */
export function traceFileRefused(): ServerError {
  return unsupported('trace file location can not be updated through network protocol');
}

/** `trace_rate` / `log_frequency` text: `std::stoi`, then kept as uint32, with Triton's messages. */
export function parseTraceUint(key: 'trace_rate' | 'log_frequency', text: string): number {
  const n = stoi(text);
  if (n === 'invalid') throw invalidArg(`Unable to parse '${key}', got: ${echo(text)}`);
  if (n === 'range') {
    throw invalidArg(`Unable to parse '${key}', value is out of range [ 0, 4294967295 ], got: ${echo(text)}`);
  }
  return toUint32(n);
}

/** `trace_count` text, with Triton's messages. */
export function parseTraceCount(text: string): number {
  const n = stoi(text);
  if (n === 'invalid') throw invalidArg(`Unable to parse 'trace_count', got: ${echo(text)}`);
  if (n === 'range') {
    throw invalidArg(
      `Unable to parse 'trace_count', value is out of range [ -1, ${INT32_MAX} ], got: ${echo(text)}`,
    );
  }
  if (n < -1) throw invalidArg(`Unable to parse 'trace_count'. Expecting value >= -1, got:${echo(text)}`);
  return n;
}

/**
 * The `trace_level` list: `OFF` alone, or `TIMESTAMPS` and / or `TENSORS` (they add up, as Triton's
 * level flags). An empty list, and names Triton does not know, change nothing (undefined; as Triton,
 * which skips them). A value that is not text is refused (only JSON can send one).
 */
export function parseTraceLevels(list: readonly unknown[]): TraceLevel | undefined {
  let off = false;
  let timestamps = false;
  let tensors = false;
  for (const l of list) {
    if (l === 'OFF') {
      if (list.length !== 1) throw invalidArg("Expect only one trace level 'OFF' is specified");
      off = true;
    } else if (l === 'TIMESTAMPS') {
      timestamps = true;
    } else if (l === 'TENSORS') {
      tensors = true;
    } else if (typeof l !== 'string') {
      throw invalidArg(`invalid value for trace_level: '${echo(jsonText(l))}' (expected a string)`);
    }
  }
  if (off) return 'OFF';
  return timestamps || tensors ? traceLevelOf(timestamps, tensors) : undefined;
}

/** The settings object for `values` (Triton's key order). */
export function traceSettingsObject(values: TraceValues): TraceSettings {
  return {
    trace_level: traceLevelNames(values.level),
    trace_rate: String(values.rate),
    trace_count: String(values.count),
    log_frequency: String(values.logFrequency),
    trace_file: values.file,
    trace_mode: 'triton',
  };
}

/**
 * `value` as JSON for a message, `bigint` values as exact integer literals (a 64-bit value of a
 * JSON body), without importing a wire's codec into the core.
 */
function jsonText(value: unknown): string {
  const mark = '\u0000bigint:';
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${mark}${v}` : v)) as
    string | undefined;
  if (text === undefined) return String(text);
  return text.replace(/"\\u0000bigint:(-?\d+)"/g, '$1');
}
