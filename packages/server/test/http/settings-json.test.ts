import { describe, expect, it } from 'vitest';

import { LogSettingsRequestSchema, TraceSettingRequestSchema } from '@tritonserver-ts/protocol/grpc';
import { create } from '@tritonserver-ts/protocol/grpc';

import { Logger } from '../../src/core/logging.js';
import { logUpdateFromGrpc, traceUpdateFromGrpc } from '../../src/grpc/handlers/settings.js';
import { logUpdateFromJson, traceUpdateFromJson } from '../../src/http/settings-json.js';
import { cudaShmRegisterFromJson, systemShmRegisterFromJson } from '../../src/http/shared-memory-json.js';

/** The error a converter throws, as `{ kind, message }`. */
function refusal(fn: () => unknown): { kind: string; message: string } {
  try {
    fn();
  } catch (error) {
    const e = error as { kind: string; message: string };
    return { kind: e.kind, message: e.message };
  }
  throw new Error('expected a refusal');
}

describe('HTTP JSON → shared-memory register commands', () => {
  it('reads {key, offset, byte_size} exactly (uint64 beyond 2^53 kept)', () => {
    expect(systemShmRegisterFromJson('r', { key: '/k', offset: 0, byte_size: 2n ** 64n - 1n })).toEqual({
      name: 'r',
      key: '/k',
      offset: 0n,
      byteSize: 2n ** 64n - 1n,
    });
  });

  it('checks the fields in Triton’s order with its messages', () => {
    const bad = (body: unknown): { kind: string; message: string } =>
      refusal(() => systemShmRegisterFromJson('r', body));
    expect(bad([])).toEqual({
      kind: 'INVALID_ARG',
      message: 'Shared memory register request JSON must be an object',
    });
    expect(bad({ offset: 'x' }).message).toBe("Shared memory register request has no 'key' field");
    expect(bad({ key: 1 }).message).toBe('attempt to access JSON non-string as string');
    expect(bad({ key: '/k', byte_size: 1 }).message).toBe(
      "Shared memory register request has no 'offset' field",
    );
    for (const offset of [-1, 1.5, '0', 2n ** 64n]) {
      expect(bad({ key: '/k', offset, byte_size: 1 }).message).toBe(
        'attempt to access JSON non-unsigned-integer as unsigned-integer',
      );
    }
    expect(bad({ key: '/k', offset: 0 }).message).toBe(
      "Shared memory register request has no 'byte_size' field",
    );
  });

  it('CUDA: takes the well-typed fields and refuses nothing (the core refuses every CUDA register)', () => {
    expect(cudaShmRegisterFromJson('g', { raw_handle: { b64: 'AAE=' }, device_id: 0, byte_size: 8 })).toEqual(
      {
        name: 'g',
        rawHandle: Buffer.from([0, 1]),
        deviceId: 0n,
        byteSize: 8n,
      },
    );
    expect(cudaShmRegisterFromJson('g', 'nonsense')).toEqual({ name: 'g' });
  });
});

/** gRPC trace settings from `{key: [values]}`. */
const grpcTrace = (settings: Record<string, string[]>) =>
  create(TraceSettingRequestSchema, {
    settings: Object.fromEntries(Object.entries(settings).map(([k, value]) => [k, { value }])),
  }).settings;

describe('trace settings: one typed update from either wire, the same messages', () => {
  it('reads values, clears with null / an empty list, and ignores keys Triton does not read', () => {
    const expected = { level: 'TIMESTAMPS', rate: 10, count: null, logFrequency: 4294967295 };
    expect(
      traceUpdateFromJson({
        trace_level: ['TIMESTAMPS'],
        trace_rate: 10,
        trace_count: null,
        log_frequency: '-1',
        trace_mode: 'opentelemetry',
      }),
    ).toEqual(expected);
    expect(
      traceUpdateFromGrpc(
        grpcTrace({
          trace_level: ['TIMESTAMPS'],
          trace_rate: ['10'],
          trace_count: [],
          log_frequency: ['-1'],
          trace_mode: ['opentelemetry'],
        }),
      ),
    ).toEqual(expected);
  });

  it('refuses bad values with the same kinds and messages on both wires', () => {
    const cases: [Record<string, unknown>, Record<string, string[]>, string, string][] = [
      [
        { trace_file: null },
        { trace_file: [] },
        'UNSUPPORTED',
        'trace file location can not be updated through network protocol',
      ],
      [{ trace_rate: 'x' }, { trace_rate: ['x'] }, 'INVALID_ARG', "Unable to parse 'trace_rate', got: x"],
      [
        { trace_count: '-2' },
        { trace_count: ['-2'] },
        'INVALID_ARG',
        "Unable to parse 'trace_count'. Expecting value >= -1, got:-2",
      ],
      [
        { trace_level: ['OFF', 'TIMESTAMPS'] },
        { trace_level: ['OFF', 'TIMESTAMPS'] },
        'INVALID_ARG',
        "Expect only one trace level 'OFF' is specified",
      ],
    ];
    for (const [json, grpc, kind, message] of cases) {
      expect(refusal(() => traceUpdateFromJson(json))).toEqual({ kind, message });
      expect(refusal(() => traceUpdateFromGrpc(grpcTrace(grpc)))).toEqual({ kind, message });
    }
    // Wire-specific shapes.
    expect(refusal(() => traceUpdateFromJson([])).message).toBe('trace settings must be a JSON object');
    expect(refusal(() => traceUpdateFromGrpc(grpcTrace({ trace_rate: ['1', '2'] }))).message).toBe(
      "expect only 1 value for 'trace_rate'",
    );
  });
});

describe('log settings: settings read before a refusal still apply (Triton applies as it reads)', () => {
  it('HTTP JSON', () => {
    expect(logUpdateFromJson({ log_info: false, log_verbose_level: 2 ** 32 + 3, x: 1 })).toEqual({
      update: { log_info: false, log_verbose_level: 3 },
    });
    const read = logUpdateFromJson({ log_warning: false, log_format: 'xml' });
    expect(read.update).toEqual({ log_warning: false });
    expect(read.error).toMatchObject({
      kind: 'UNAVAILABLE',
      message: 'invalid argument for --log_format, got: xml',
    });
    expect(logUpdateFromJson({ log_file: '/tmp/x', log_info: false }).error).toMatchObject({
      kind: 'UNSUPPORTED',
    });
    const logger = new Logger({}, () => undefined);
    expect(logger.update(read.update)).toMatchObject({ log_warning: false, log_format: 'default' });
  });

  it('gRPC', () => {
    const settings = create(LogSettingsRequestSchema, {
      settings: {
        log_error: { parameterChoice: { case: 'boolParam', value: false } },
        log_verbose_level: { parameterChoice: { case: 'uint32Param', value: 2 ** 32 - 1 } },
        log_format: { parameterChoice: { case: 'stringParam', value: 'xml' } },
      },
    }).settings;
    const read = logUpdateFromGrpc(settings);
    expect(read.update).toEqual({ log_error: false, log_verbose_level: -1 });
    expect(read.error).toMatchObject({
      kind: 'INVALID_ARG',
      message: 'invalid argument for log_format, got: xml',
    });
    const wrongKind = create(LogSettingsRequestSchema, {
      settings: { log_info: { parameterChoice: { case: 'stringParam', value: 'yes' } } },
    }).settings;
    expect(logUpdateFromGrpc(wrongKind)).toMatchObject({
      update: {},
      error: { kind: 'INVALID_ARG', message: "expect boolean for 'log_info'" },
    });
  });
});
