/**
 * `TraceSetting` and `LogSettings`: the gRPC wire's settings converters (the request's value shapes
 * read with tritonserver's gRPC checks and messages, `grpc_server.cc`, into the core's typed
 * updates) and the handlers, which apply them through the same core calls as HTTP.
 * @packageDocumentation
 */
import {
  LogSettingsResponseSchema,
  TraceSettingResponseSchema,
  type LogSettingsRequest,
  type LogSettingsResponse,
  type TraceSettingRequest,
  type TraceSettingResponse,
} from '@tritonserver-ts/protocol/grpc';

import { echo } from '../../common/echo.js';
import { invalidArg, unsupported } from '../../common/errors.js';
import type { LogSettingsRead, LogSettingsUpdate } from '../../core/logging.js';
import {
  parseTraceCount,
  parseTraceLevels,
  parseTraceUint,
  traceFileRefused,
  type TraceSettings,
  type TraceSettingsUpdate,
} from '../../core/trace.js';
import { message } from '../messages.js';
import type { UnaryHandler } from './types.js';

/** The trace settings tritonserver reads from a gRPC request, in its order. */
const TRACE_KEYS = ['trace_file', 'trace_level', 'trace_rate', 'trace_count', 'log_frequency'] as const;

/**
 * A `TraceSettingRequest`'s settings as a {@link TraceSettingsUpdate}, with tritonserver's gRPC
 * checks and messages: first the shape of each key it reads, in its order (`trace_file` refused in
 * any form; an empty value list clears a setting; `trace_level` is a list, the others take exactly
 * one value), then the values, with the same text rules and messages as HTTP. Keys tritonserver
 * does not read (`trace_mode` among them) are ignored, as there.
 */
export function traceUpdateFromGrpc(settings: TraceSettingRequest['settings']): TraceSettingsUpdate {
  const read: [(typeof TRACE_KEYS)[number], readonly string[] | null][] = [];
  for (const key of TRACE_KEYS) {
    const setting = settings[key];
    if (setting === undefined) continue;
    const values = setting.value;
    // Since 24.05 tritonserver refuses any trace_file in an update.
    if (key === 'trace_file') throw traceFileRefused();
    if (values.length === 0) read.push([key, null]);
    else if (key === 'trace_level' || values.length === 1) read.push([key, values]);
    else throw invalidArg(`expect only 1 value for '${echo(key)}'`);
  }
  const update: TraceSettingsUpdate = {};
  for (const [key, values] of read) {
    const text = values?.[0] ?? '';
    switch (key) {
      case 'trace_level':
        if (values === null) update.level = null;
        else {
          const level = parseTraceLevels(values);
          if (level !== undefined) update.level = level;
        }
        break;
      case 'trace_rate':
        update.rate = values === null ? null : parseTraceUint(key, text);
        break;
      case 'log_frequency':
        update.logFrequency = values === null ? null : parseTraceUint(key, text);
        break;
      case 'trace_count':
        update.count = values === null ? null : parseTraceCount(text);
        break;
    }
  }
  return update;
}

function traceResponse(settings: TraceSettings): TraceSettingResponse {
  const out: Record<string, { value: string[] }> = {};
  for (const [key, value] of Object.entries(settings)) {
    out[key] = { value: Array.isArray(value) ? value.map(String) : [String(value)] };
  }
  return message(TraceSettingResponseSchema, { settings: out });
}

export const traceSetting: UnaryHandler<TraceSettingRequest, TraceSettingResponse> = (req, { core }) => {
  const model = req.modelName === '' ? undefined : req.modelName;
  const hasUpdate = Object.keys(req.settings).length > 0;
  if (!hasUpdate) return traceResponse(core.traceSettings(model));
  // The model check comes before the update is read (as tritonserver).
  core.traceSettings(model);
  return traceResponse(core.traceSettings(model, traceUpdateFromGrpc(req.settings)));
};

type LogChoice = LogSettingsRequest['settings'][string]['parameterChoice'];

/** Each key tritonserver reads, the value kind it wants, and its message for another kind. */
const LOG_KEYS: readonly (readonly [string, LogChoice['case'], string])[] = [
  ['log_file', 'stringParam', 'string'],
  ['log_info', 'boolParam', 'boolean'],
  ['log_warning', 'boolParam', 'boolean'],
  ['log_error', 'boolParam', 'boolean'],
  ['log_verbose_level', 'uint32Param', 'int32'],
  ['log_format', 'stringParam', 'string'],
];

/**
 * A `LogSettingsRequest`'s settings as tritonserver's gRPC front end reads them: the keys in its
 * order, each of the parameter kind it wants (`expect <kind> for '<key>'`), any `log_file` refused
 * (UNSUPPORTED), a `log_format` other than `default` / `ISO8601` refused (INVALID_ARG, as there).
 * Reading stops at the first refusal; the settings read before it are still applied
 * ({@link LogSettingsRead}).
 */
export function logUpdateFromGrpc(settings: LogSettingsRequest['settings']): LogSettingsRead {
  const update: { -readonly [K in keyof LogSettingsUpdate]: LogSettingsUpdate[K] } = {};
  for (const [key, kind, what] of LOG_KEYS) {
    const setting = settings[key];
    if (setting === undefined) continue;
    const choice = setting.parameterChoice;
    if (key === 'log_file') {
      return { update, error: unsupported('log file location can not be updated through network protocol') };
    }
    if (choice.case !== kind) return { update, error: invalidArg(`expect ${what} for '${echo(key)}'`) };
    const value = choice.value;
    if (key === 'log_verbose_level' && typeof value === 'number') {
      // tritonserver passes the uint32 on as its int32 level.
      update.log_verbose_level = value | 0;
    } else if (key === 'log_format' && typeof value === 'string') {
      if (value !== 'default' && value !== 'ISO8601') {
        return { update, error: invalidArg(`invalid argument for log_format, got: ${echo(value)}`) };
      }
      update.log_format = value;
    } else if (
      (key === 'log_info' || key === 'log_warning' || key === 'log_error') &&
      typeof value === 'boolean'
    ) {
      update[key] = value;
    }
  }
  return { update };
}

export const logSettings: UnaryHandler<LogSettingsRequest, LogSettingsResponse> = (req, { core }) => {
  // As tritonserver, a later bad value leaves the earlier ones set.
  const { update, error } = logUpdateFromGrpc(req.settings);
  core.logSettings(update);
  if (error !== undefined) throw error;
  const s = core.logSettings();
  return message(LogSettingsResponseSchema, {
    settings: {
      log_file: { parameterChoice: { case: 'stringParam', value: s.log_file } },
      log_info: { parameterChoice: { case: 'boolParam', value: s.log_info } },
      log_warning: { parameterChoice: { case: 'boolParam', value: s.log_warning } },
      log_error: { parameterChoice: { case: 'boolParam', value: s.log_error } },
      log_verbose_level: { parameterChoice: { case: 'uint32Param', value: s.log_verbose_level } },
      log_format: { parameterChoice: { case: 'stringParam', value: s.log_format } },
    },
  });
};
