/**
 * The trace and log settings are defined once, in `@tritonserver-ts/protocol`: the server's
 * `TraceSettings`, `LogSettings` and `LogSettingsUpdate` are those messages, and what the server
 * reports is what the client's received shapes promise.
 */
import type * as Client from '@tritonserver-ts/client';
import type * as Protocol from '@tritonserver-ts/protocol';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { DEFAULT_LOG_SETTINGS, type LogSettings, type LogSettingsUpdate } from '../../src/core/logging.js';
import { DEFAULT_TRACE_SETTINGS, type TraceSettings } from '../../src/core/trace.js';

describe('the shared trace and log settings', () => {
  it('the server uses the protocol’s messages', () => {
    expectTypeOf<TraceSettings>().toEqualTypeOf<Protocol.TraceSettings>();
    expectTypeOf<LogSettings>().toEqualTypeOf<Protocol.LogSettings>();
    expectTypeOf<LogSettingsUpdate>().toEqualTypeOf<Protocol.LogSettingsUpdate>();
    expectTypeOf<Client.TraceSettings>().toEqualTypeOf<Protocol.ReceivedTraceSettings>();
    expectTypeOf<Client.LogSettings>().toEqualTypeOf<Protocol.ReceivedLogSettings>();
  });

  it('what the server reports fits what the client receives', () => {
    const trace: Client.TraceSettings = JSON.parse(JSON.stringify(DEFAULT_TRACE_SETTINGS)) as TraceSettings;
    const log: Client.LogSettings = JSON.parse(JSON.stringify(DEFAULT_LOG_SETTINGS)) as LogSettings;
    expect(trace.trace_level).toEqual(['OFF']);
    expect(trace.trace_rate).toBe('1000');
    expect(log.log_verbose_level).toBe(0);
    expect(log.log_format).toBe('default');
  });
});
