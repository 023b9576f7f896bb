import { describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs, usage } from '../../src/cli-args.js';

describe('command-line parsing', () => {
  it('applies tritonserver’s defaults', () => {
    const o = parseArgs(['--model-repository=/models']);
    expect(o.server).toMatchObject({
      modelRepositories: ['/models'],
      modelControlMode: 'none',
      httpPort: 8000,
      httpAddress: '0.0.0.0',
      strictReadiness: true,
      exitTimeoutSecs: 30,
      repositoryPollSecs: 15,
      httpMaxInputSize: 64 * 1024 * 1024,
      allowHttp: true,
      allowClientShm: false,
    });
    expect(o.server).not.toHaveProperty('metricsAddress');
    expect(o.exitOnError).toBe(true);
    expect(o.metricsPort).toBe(8002);
  });

  it('takes the memory limits of this project (body budget, send timeout, per-connection output)', () => {
    const defaults = parseArgs(['--model-repository=/m']);
    expect(defaults.server).not.toHaveProperty('httpMaxInflightBodyBytes');
    expect(defaults.server.httpSendTimeoutSecs).toBe(60);
    expect(defaults.server.httpMaxConnectionOutputBytes).toBe(64 * 1024 * 1024);
    const o = parseArgs([
      '--model-repository=/m',
      '--http-max-input-size=1000',
      '--http-max-inflight-body-bytes=5000',
      '--http-send-timeout-secs=5',
      '--http-max-connection-output-bytes',
      '1048576',
    ]);
    expect(o.server).toMatchObject({
      httpMaxInflightBodyBytes: 5000,
      httpSendTimeoutSecs: 5,
      httpMaxConnectionOutputBytes: 1048576,
    });
    expect(() => parseArgs(['--model-repository=/m', '--http-send-timeout-secs=0'])).toThrow(
      'invalid value for --http-send-timeout-secs: 0',
    );
    expect(() => parseArgs(['--model-repository=/m', '--http-max-connection-output-bytes=0'])).toThrow(
      'invalid value for --http-max-connection-output-bytes: 0',
    );
    expect(() => parseArgs(['--model-repository=/m', '--http-max-connection-output-bytes=1M'])).toThrow(
      "invalid value for --http-max-connection-output-bytes: '1M' (expected an integer)",
    );
    for (const flag of [
      '--http-max-inflight-body-bytes',
      '--http-send-timeout-secs',
      '--http-max-connection-output-bytes',
    ]) {
      expect(usage()).toContain(flag);
    }
    // A budget that cannot hold one body of the largest accepted size is refused.
    expect(() =>
      parseArgs([
        '--model-repository=/m',
        '--http-max-input-size=1000',
        '--http-max-inflight-body-bytes=999',
      ]),
    ).toThrow('invalid value for --http-max-inflight-body-bytes');
  });

  it('takes --allow-client-shm and --metrics-address as tritonserver does', () => {
    const o = parseArgs([
      '--model-repository=/m',
      '--allow-client-shm=true',
      '--http-address=127.0.0.1',
      '--metrics-address=127.0.0.2',
    ]);
    expect(o.server).toMatchObject({
      allowClientShm: true,
      httpAddress: '127.0.0.1',
      metricsAddress: '127.0.0.2',
    });
  });

  it('takes --client-shm-max-regions (default 1024, at least 1)', () => {
    expect(parseArgs(['--model-repository=/m']).server.sharedMemoryMaxRegions).toBe(1024);
    expect(
      parseArgs(['--model-repository=/m', '--client-shm-max-regions=8']).server.sharedMemoryMaxRegions,
    ).toBe(8);
    expect(() => parseArgs(['--model-repository=/m', '--client-shm-max-regions=0'])).toThrow(
      'invalid value for --client-shm-max-regions',
    );
  });

  it('accepts --flag=value and --flag value, repeatable and boolean forms', () => {
    const o = parseArgs([
      '--model-repository',
      '/a',
      '--model-repository=/b',
      '--model-control-mode=EXPLICIT',
      '--load-model=x',
      '--load-model',
      'y',
      '--strict-readiness=false',
      '--log-verbose=1',
      '--allow-metrics',
      'false',
      '--disable-auto-complete-config',
    ]);
    expect(o.server.modelRepositories).toEqual(['/a', '/b']);
    expect(o.server.modelControlMode).toBe('explicit');
    expect(o.server.loadModels).toEqual(['x', 'y']);
    expect(o.server.strictReadiness).toBe(false);
    expect(o.server.log?.log_verbose_level).toBe(1);
    expect(o.metricsPort).toBeUndefined();
    expect(o.server.autoCompleteConfig).toBe(false);
  });

  it.each([
    [['--model-repository=/m', '--bogus'], "unrecognized option '--bogus'"],
    [[], '--model-repository must be specified'],
    [
      ['--model-repository=/m', '--load-model=a'],
      "use of '--load-model' requires setting '--model-control-mode=explicit' as well",
    ],
    [['--model-repository=/m', '--http-port=70000'], 'invalid value for --http-port'],
    [['--model-repository=/m', '--strict-readiness=maybe'], 'invalid value for --strict-readiness'],
    [['--model-repository=/m', '--model-control-mode=auto'], 'invalid value for --model-control-mode'],
    [['--model-repository=/m', '--http-port'], "option '--http-port' requires a value"],
    [
      ['--model-repository=/m', '--http-max-input-size=0'],
      'Error: --http-max-input-size must be greater than 0.',
    ],
    [
      ['--model-repository=/m', '--http-max-input-size=-5'],
      'Error: --http-max-input-size must be greater than 0.',
    ],
  ])('refuses %j', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(CliUsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });

  it('documents every flag in --help', () => {
    const text = usage();
    for (const flag of [
      '--model-repository',
      '--http-port',
      '--model-control-mode',
      '--exit-timeout-secs',
      '--metrics-port',
    ]) {
      expect(text).toContain(flag);
    }
  });
});
