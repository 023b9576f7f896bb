/**
 * Triton's trace extension settings (`GET/POST v2[/models/{m}]/trace/setting`), kept in memory.
 *
 * Values are strings except `trace_level`, which is a list. A model's settings inherit every key from
 * the global settings until the key is set for that model; posting `null` for a key resets it to the
 * inherited (global) value. This server records the settings but does not emit traces (see README).
 * @packageDocumentation
 */
import { invalidArg, unsupported } from './errors.js';

/** The trace settings object as Triton returns it. */
export interface TraceSettings {
  trace_file: string;
  trace_level: string[];
  trace_rate: string;
  trace_count: string;
  log_frequency: string;
  trace_mode: string;
}

/** tritonserver's defaults (tracing off). */
export const DEFAULT_TRACE_SETTINGS: Readonly<TraceSettings> = {
  trace_file: '',
  trace_level: ['OFF'],
  trace_rate: '1000',
  trace_count: '-1',
  log_frequency: '0',
  trace_mode: 'triton',
};

const LEVELS = new Set(['OFF', 'TIMESTAMPS', 'TENSORS']);
type Key = keyof TraceSettings;
const KEYS: readonly Key[] = [
  'trace_file',
  'trace_level',
  'trace_rate',
  'trace_count',
  'log_frequency',
  'trace_mode',
];

function scalar(key: string, value: unknown): string {
  const v = Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  throw invalidArg(`expect a string value for trace setting '${key}'`);
}

function parseValue(key: Key, value: unknown): string | string[] {
  switch (key) {
    case 'trace_level': {
      const list = Array.isArray(value) ? (value as unknown[]) : [value];
      const levels = list.map((l) => {
        if (typeof l !== 'string' || !LEVELS.has(l.toUpperCase())) {
          throw invalidArg(
            `invalid value for trace_level: '${String(l)}' (expected OFF, TIMESTAMPS or TENSORS)`,
          );
        }
        return l.toUpperCase();
      });
      if (levels.length === 0) throw invalidArg('trace_level must not be empty');
      if (levels.includes('OFF') && levels.length > 1) {
        throw invalidArg('trace_level OFF cannot be combined with other levels');
      }
      return levels;
    }
    case 'trace_rate':
    case 'log_frequency': {
      const s = scalar(key, value);
      if (!/^\d+$/.test(s))
        throw invalidArg(`unable to parse '${key}', expecting an unsigned integer, got: ${s}`);
      return s;
    }
    case 'trace_count': {
      const s = scalar(key, value);
      if (!/^-?\d+$/.test(s) || Number(s) < -1) {
        throw invalidArg(`unable to parse '${key}', expecting an integer >= -1, got: ${s}`);
      }
      return s;
    }
    case 'trace_mode': {
      const s = scalar(key, value);
      if (s !== 'triton' && s !== 'opentelemetry') throw invalidArg(`unsupported trace mode '${s}'`);
      return s;
    }
    case 'trace_file':
      throw unsupported('trace file location can not be updated through network protocol');
  }
}

/** `--trace-config` setting names → trace setting keys (Triton's names). */
const TRACE_CONFIG_KEYS: Readonly<Record<string, Key>> = {
  level: 'trace_level',
  rate: 'trace_rate',
  count: 'trace_count',
  'log-frequency': 'log_frequency',
  file: 'trace_file',
  mode: 'trace_mode',
};

/**
 * Parses tritonserver's `--trace-config` values (`[<mode>,]<setting>=<value>`, repeatable; `level`
 * may be given more than once) into initial trace settings, validated like the API's.
 * @throws ServerError INVALID_ARG naming the bad value
 */
export function parseTraceConfig(values: readonly string[]): Partial<TraceSettings> {
  const out: Record<string, unknown> = {};
  const levels: string[] = [];
  for (const raw of values) {
    const comma = raw.indexOf(',');
    const eq = raw.indexOf('=');
    const body = comma >= 0 && comma < eq ? raw.slice(comma + 1) : raw;
    const [name, value] = [body.slice(0, body.indexOf('=')), body.slice(body.indexOf('=') + 1)];
    const key = TRACE_CONFIG_KEYS[name];
    if (body.indexOf('=') <= 0 || key === undefined) {
      throw invalidArg(`--trace-config option format is '[<mode>,]<setting>=<value>'. Got ${raw}`);
    }
    if (key === 'trace_level') levels.push(value);
    else out[key] = key === 'trace_file' ? value : parseValue(key, value);
  }
  if (levels.length > 0) out.trace_level = parseValue('trace_level', levels);
  return out;
}

/** Global and per-model trace settings. */
export class TraceSettingsStore {
  #global: TraceSettings;
  readonly #models = new Map<string, Partial<TraceSettings>>();

  constructor(initial: Partial<TraceSettings> = {}) {
    this.#global = { ...DEFAULT_TRACE_SETTINGS, ...initial };
  }

  /** Settings of `model` (global ones when `model` is undefined). */
  get(model?: string): TraceSettings {
    const own = model === undefined ? {} : (this.#models.get(model) ?? {});
    return { ...this.#global, trace_level: [...this.#global.trace_level], ...own };
  }

  /**
   * Applies a POST body (`{key: value | [values] | null}`) to the global settings or to `model`'s,
   * validating everything before changing anything. Returns the resulting settings.
   */
  update(body: unknown, model?: string): TraceSettings {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw invalidArg('trace settings must be a JSON object');
    }
    if (Object.hasOwn(body, 'trace_file')) {
      // Triton (since 24.05): any `trace_file` key, even null, is refused over the network.
      throw unsupported('trace file location can not be updated through network protocol');
    }
    const changes: [Key, string | string[] | null][] = [];
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      if (!(KEYS as readonly string[]).includes(key)) throw invalidArg(`unknown trace setting '${key}'`);
      changes.push([key as Key, value === null ? null : parseValue(key as Key, value)]);
    }
    if (model === undefined) {
      const next: Record<string, unknown> = { ...this.#global };
      for (const [key, value] of changes) next[key] = value ?? DEFAULT_TRACE_SETTINGS[key];
      this.#global = next as unknown as TraceSettings;
    } else {
      const own: Record<string, unknown> = { ...(this.#models.get(model) ?? {}) };
      for (const [key, value] of changes) {
        if (value === null) delete own[key];
        else own[key] = value;
      }
      this.#models.set(model, own);
    }
    return this.get(model);
  }
}
