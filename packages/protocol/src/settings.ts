/**
 * Triton's trace and log settings messages (`GET/POST v2[/models/{m}]/trace/setting`, gRPC
 * `TraceSetting`; `GET/POST v2/logging`, gRPC `LogSettings`), written once for both ends: the server
 * returns {@link TraceSettings} and {@link LogSettings} as they are in effect, the client receives
 * {@link ReceivedTraceSettings} and {@link ReceivedLogSettings} (every field optional, unknown keys
 * kept: another Triton version or trace mode may send more).
 * @packageDocumentation
 */

/**
 * Triton's trace settings object (values are strings, `trace_level` a list). A type alias, not an
 * interface, so that it fits {@link ReceivedTraceSettings}' index signature.
 */
export type TraceSettings = {
  trace_level: string[];
  trace_rate: string;
  trace_count: string;
  log_frequency: string;
  trace_file: string;
  trace_mode: string;
};

/**
 * Trace settings as a client receives them: any field may be missing, and a value is a string or,
 * when gRPC carries other than one value (or the key is `trace_level`), a list.
 */
export type ReceivedTraceSettings = { [K in keyof TraceSettings]?: TraceSettings[K] | string | string[] } & {
  [setting: string]: string | string[] | undefined;
};

/**
 * A trace settings update as a client sends it (HTTP body, gRPC `TraceSettingRequest.settings`):
 * a value to set, `null` to clear the setting back to the global one (or, globally, the startup
 * value), absent to keep. The server reads it into its own typed command.
 */
export type TraceSettingsUpdate = Record<string, string | number | readonly string[] | null>;

/** Triton's log settings object (a type alias, so that it fits {@link ReceivedLogSettings}). */
export type LogSettings = {
  log_file: string;
  log_info: boolean;
  log_warning: boolean;
  log_error: boolean;
  log_verbose_level: number;
  log_format: 'default' | 'ISO8601';
};

/**
 * Log settings as a client receives them: any field may be missing, unknown keys are kept. Also what
 * a client sends as an update (absent = keep; the server checks the values).
 */
export interface ReceivedLogSettings {
  log_file?: string;
  log_info?: boolean;
  log_warning?: boolean;
  log_error?: boolean;
  log_verbose_level?: number;
  log_format?: string;
  [setting: string]: string | number | boolean | undefined;
}

/**
 * A log settings update as the server reads it from either wire: a value to set, absent to keep.
 * `log_verbose_level` is Triton's int32 level; `log_file` is not part of it (Triton, since 24.05,
 * refuses to change the log file through the network).
 */
export type LogSettingsUpdate = { readonly [K in Exclude<keyof LogSettings, 'log_file'>]?: LogSettings[K] };
