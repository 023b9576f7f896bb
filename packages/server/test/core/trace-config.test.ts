import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs } from '../../src/cli-args.js';
import { get, startTestServer, type TestServer } from '../helpers/server.js';

describe('--trace-config', () => {
  it('parses tritonserver’s [<mode>,]<setting>=<value> form into the initial trace settings', () => {
    const o = parseArgs([
      '--model-repository=/m',
      '--trace-config',
      'triton,file=/var/log/trace.json',
      '--trace-config=level=TIMESTAMPS',
      '--trace-config=level=TENSORS',
      '--trace-config=rate=10',
      '--trace-config=count=5',
      '--trace-config=log-frequency=2',
    ]);
    expect(o.server.trace).toEqual({
      trace_file: '/var/log/trace.json',
      trace_level: ['TIMESTAMPS', 'TENSORS'],
      trace_rate: '10',
      trace_count: '5',
      log_frequency: '2',
    });
  });

  it.each([['level=LOUD'], ['rate=-1'], ['nonsense'], ['colour=red']])('refuses %s', (value) => {
    expect(() => parseArgs(['--model-repository=/m', `--trace-config=${value}`])).toThrow(CliUsageError);
  });
});

describe('trace settings served, trace output not claimed', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({
      only: ['simple'],
      trace: { trace_rate: '10', trace_level: ['TIMESTAMPS'] },
    });
  });
  afterAll(async () => {
    await srv.close();
  });

  it('reports the startup settings, and does not list the trace extension', async () => {
    expect((await get(srv.url, '/v2/trace/setting')).json).toMatchObject({
      trace_rate: '10',
      trace_level: ['TIMESTAMPS'],
      trace_file: '',
    });
    const meta = (await get(srv.url, '/v2')).json as { extensions: string[] };
    expect(meta.extensions).not.toContain('trace');
    expect(meta.extensions).toContain('logging');
  });
});
