import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs } from '../../src/cli-args.js';
import { get, post, startTestServer, type TestServer } from '../helpers/server.js';

const parse = (...values: string[]) =>
  parseArgs(['--model-repository=/m', ...values.map((v) => `--trace-config=${v}`)]).server.trace;

describe('--trace-config', () => {
  it('parses tritonserver’s example into the initial trace settings', () => {
    const o = parseArgs([
      '--model-repository=/m',
      '--trace-config',
      'triton,file=/tmp/trace.json',
      '--trace-config',
      'triton,log-frequency=50',
      '--trace-config=rate=100',
      '--trace-config=level=TIMESTAMPS',
      '--trace-config=count=100',
    ]);
    expect(o.server.trace).toEqual({
      trace_file: '/tmp/trace.json',
      log_frequency: '50',
      trace_rate: '100',
      trace_level: ['TIMESTAMPS'],
      trace_count: '100',
    });
  });

  it('reads levels as tritonserver does: case-insensitive aliases, OFF wins', () => {
    expect(parse('level=timestamps')).toEqual({ trace_level: ['TIMESTAMPS'] });
    expect(parse('level=on')).toEqual({ trace_level: ['TIMESTAMPS'] });
    expect(parse('level=max')).toEqual({ trace_level: ['TIMESTAMPS'] });
    expect(parse('level=TIMESTAMPS', 'level=off')).toEqual({ trace_level: ['OFF'] });
    // TENSORS is a level of its own, and adds up with TIMESTAMPS (Triton's level flags).
    expect(parse('level=tensors')).toEqual({ trace_level: ['TENSORS'] });
    expect(parse('level=TENSORS', 'level=TIMESTAMPS')).toEqual({ trace_level: ['TIMESTAMPS', 'TENSORS'] });
    expect(parse('level=TENSORS', 'level=OFF')).toEqual({ trace_level: ['OFF'] });
    expect(parse('mode=triton', 'Triton,file=t.json')).toEqual({
      trace_mode: 'triton',
      trace_file: 't.json',
    });
    // std::stoi: digits first, anything after them ignored.
    expect(parse('rate=7x', 'count=-1')).toEqual({ trace_rate: '7', trace_count: '-1' });
  });

  it.each([
    [
      ',level=TIMESTAMPS',
      'Bad option: "--trace-config".\nNo trace mode specified. --trace-config option format is <trace mode>,<setting>=<value> or <setting>=<value>. Got ,level=TIMESTAMPS',
    ],
    [
      'level',
      'Bad option: "--trace-config".\n--trace-config option format is \'<trace mode>,<setting>=<value>\'. Got level',
    ],
    [
      'level=',
      'Bad option: "--trace-config".\n--trace-config option format is \'<trace mode>,<setting>=<value>\'. Got level=',
    ],
    [
      'Foo,file=x',
      'Bad option: "--trace-config".\ninvalid value for trace mode option: foo. Available options are "triton" and "opentelemetry"',
    ],
    ['level=LOUD', 'Bad option: "--trace-config level".\ninvalid value for trace level option: loud'],
    ['rate=abc', 'Bad option: "--trace-config rate".\nInvalid option value. Got abc'],
    [
      'count=99999999999',
      'Bad option: "--trace-config count".\nProvided option value is out of bound. Got 99999999999',
    ],
    [
      'triton,log-frequency=often',
      'Bad option: "--trace-config triton,log-frequency".\nInvalid option value. Got often',
    ],
  ])('refuses %s with tritonserver’s message', (value, message) => {
    expect(() => parse(value)).toThrow(CliUsageError);
    expect(() => parse(value)).toThrow(message);
  });

  it.each([
    [
      'mode=opentelemetry',
      'Bad option: "--trace-config mode".\nthe opentelemetry trace mode is not supported',
    ],
    [
      'opentelemetry,url=localhost:4318',
      'Bad option: "--trace-config".\nthe opentelemetry trace mode is not supported',
    ],
    [
      'file=/tmp/t.json',
      'Bad option: "--trace-config file".\n\'file\' is a setting of the triton trace mode: use --trace-config triton,file=/tmp/t.json',
    ],
    ['triton,rate=5', 'Bad option: "--trace-config triton,rate".\n\'rate\' is a global trace setting'],
    ['colour=red', 'Bad option: "--trace-config colour".\nunknown trace setting \'colour\''],
  ])(
    'refuses %s, which tritonserver-ts cannot honour or tritonserver would silently ignore',
    (value, message) => {
      expect(() => parse(value)).toThrow(message);
    },
  );
});

describe('trace settings API', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({
      only: ['simple'],
      trace: { trace_rate: '10', trace_count: '3' },
    });
  });
  afterAll(async () => {
    await srv.close();
  });

  it('reports the startup settings in Triton’s keys and lists the trace extension', async () => {
    expect((await get(srv.url, '/v2/trace/setting')).json).toEqual({
      trace_level: ['OFF'],
      trace_rate: '10',
      trace_count: '3',
      log_frequency: '0',
      trace_file: '',
      trace_mode: 'triton',
    });
    const meta = (await get(srv.url, '/v2')).json as { extensions: string[] };
    expect(meta.extensions).toContain('trace');
  });

  it('refuses a setting that cannot trace, with Triton’s message', async () => {
    const r = await post(srv.url, '/v2/trace/setting', JSON.stringify({ trace_level: ['TIMESTAMPS'] }));
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      error: 'Attempting to set invalid trace setting :trace file name is not given',
    });
    const m = await post(
      srv.url,
      '/v2/models/simple/trace/setting',
      JSON.stringify({ trace_level: ['TIMESTAMPS'] }),
    );
    expect(m.status).toBe(400);
    // Turning tracing off, or changing other keys while it is off, is fine.
    expect((await post(srv.url, '/v2/trace/setting', JSON.stringify({ trace_level: ['OFF'] }))).status).toBe(
      200,
    );
  });

  it('parses values as Triton does', async () => {
    const cases: [object, number, string][] = [
      [{ trace_rate: 'fast' }, 400, "Unable to parse 'trace_rate', got: fast"],
      [{ trace_count: '-2' }, 400, "Unable to parse 'trace_count'. Expecting value >= -1, got:-2"],
      [{ trace_count: 'x' }, 400, "Unable to parse 'trace_count', got: x"],
      [
        { log_frequency: '99999999999' },
        400,
        "Unable to parse 'log_frequency', value is out of range [ 0, 4294967295 ], got: 99999999999",
      ],
      [{ trace_level: ['OFF', 'TIMESTAMPS'] }, 400, "Expect only one trace level 'OFF' is specified"],
      [{ trace_file: null }, 501, 'trace file location can not be updated through network protocol'],
    ];
    for (const [body, status, error] of cases) {
      const r = await post(srv.url, '/v2/trace/setting', JSON.stringify(body));
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.json, JSON.stringify(body)).toEqual({ error });
    }
  });

  it('lets a model override keys, follow the global ones for the rest, and fall back with null', async () => {
    const m = await post(srv.url, '/v2/models/simple/trace/setting', JSON.stringify({ trace_rate: '5' }));
    expect(m.json).toMatchObject({ trace_rate: '5', trace_count: '3', log_frequency: '0' });
    // A later global change reaches the keys the model did not set.
    await post(srv.url, '/v2/trace/setting', JSON.stringify({ log_frequency: '4', trace_rate: '20' }));
    expect((await get(srv.url, '/v2/models/simple/trace/setting')).json).toMatchObject({
      trace_rate: '5',
      log_frequency: '4',
    });
    const cleared = await post(
      srv.url,
      '/v2/models/simple/trace/setting',
      JSON.stringify({ trace_rate: null }),
    );
    expect(cleared.json).toMatchObject({ trace_rate: '20', log_frequency: '4' });
    // null on a global key goes back to its startup value (here --trace-config's rate 10).
    const reset = await post(
      srv.url,
      '/v2/trace/setting',
      JSON.stringify({ trace_rate: null, log_frequency: null }),
    );
    expect(reset.json).toMatchObject({ trace_rate: '10', log_frequency: '0' });
  });

  it('answers an unknown model with Triton’s message', async () => {
    const r = await get(srv.url, '/v2/models/nope/trace/setting');
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: 'Request for unknown model : nope' });
  });
});
