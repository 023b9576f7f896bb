/**
 * `TraceSetting` and `LogSettings`: the gRPC value shapes read with tritonserver's gRPC checks and
 * messages (`grpc_server.cc`), then applied through the same core calls as HTTP.
 * @packageDocumentation
 */
import {
  LogSettingsResponseSchema,
  TraceSettingResponseSchema,
  type LogSettingsRequest,
  type LogSettingsResponse,
  type TraceSettingRequest,
  type TraceSettingResponse,
} from '@tritonserver-ts/client/protocol/grpc';

import { invalidArg, unsupported } from '../../core/errors.js';
import type { TraceSettings } from '../../core/trace.js';
import { message } from '../messages.js';
import type { UnaryHandler } from './types.js';

/** The trace settings tritonserver reads from a gRPC request, in its order. */
const TRACE_KEYS = ['trace_file', 'trace_level', 'trace_rate', 'trace_count', 'log_frequency'] as const;

/**
 * A gRPC trace update as the core's update object: an empty value list clears a setting (`null`),
 * `trace_level` is a list, the others take exactly one value.
 */
function traceUpdate(settings: TraceSettingRequest['settings']): Record<string, unknown> {
  const update: Record<string, unknown> = {};
  for (const key of TRACE_KEYS) {
    const setting = settings[key];
    if (setting === undefined) continue;
    const values = setting.value;
    if (key === 'trace_file') {
      // Since 24.05 tritonserver refuses any trace_file in an update.
      throw unsupported('trace file location can not be updated through network protocol');
    }
    if (values.length === 0) update[key] = null;
    else if (key === 'trace_level') update[key] = [...values];
    else if (values.length === 1) update[key] = values[0];
    else throw invalidArg(`expect only 1 value for '${key}'`);
  }
  // Keys tritonserver does not read (`trace_mode` among them) are ignored, as there.
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
  return traceResponse(core.traceSettings(model, traceUpdate(req.settings)));
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

export const logSettings: UnaryHandler<LogSettingsRequest, LogSettingsResponse> = (req, { core }) => {
  // Applied one key at a time in tritonserver's order: a later bad value leaves earlier ones set.
  for (const [key, kind, what] of LOG_KEYS) {
    const setting = req.settings[key];
    if (setting === undefined) continue;
    const choice = setting.parameterChoice;
    if (key === 'log_file') {
      throw unsupported('log file location can not be updated through network protocol');
    }
    if (choice.case !== kind) throw invalidArg(`expect ${what} for '${key}'`);
    if (key === 'log_format' && choice.value !== 'default' && choice.value !== 'ISO8601') {
      throw invalidArg(`invalid argument for log_format, got: ${String(choice.value)}`);
    }
    core.logSettings({ [key]: choice.value });
  }
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
