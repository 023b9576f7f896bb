import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs } from '../../src/cli-args.js';
import { parseRestrictions } from '../../src/http/restricted-api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('--http-restricted-api parsing', () => {
  it('takes groups of categories with a header and value', () => {
    const o = parseArgs([
      '--model-repository=/m',
      '--http-restricted-api=model-repository,shared-memory:admin-key=s3cret',
      '--http-restricted-api=statistics:X-Stats=1',
    ]);
    expect(Object.fromEntries(o.server.httpRestrictedApi ?? [])).toEqual({
      'model-repository': { key: 'admin-key', value: 's3cret' },
      'shared-memory': { key: 'admin-key', value: 's3cret' },
      statistics: { key: 'X-Stats', value: '1' },
    });
  });

  it.each([
    [
      'model-repository',
      "--http-restricted-api option format is '<config name>:<setting>=<value>'. Got model-repository",
    ],
    [
      'model-repository:key',
      "--http-restricted-api option format is '<config name>:<setting>=<value>'. Got model-repository:key",
    ],
    ['everything:k=v', "unknown restricted api 'everything' "],
  ])('refuses %s with tritonserver’s message', (value, message) => {
    expect(() => parseArgs(['--model-repository=/m', `--http-restricted-api=${value}`])).toThrow(
      CliUsageError,
    );
    expect(() => parseArgs(['--model-repository=/m', `--http-restricted-api=${value}`])).toThrow(
      `Bad option: "--http-restricted-api".\n${message}`,
    );
  });

  it('refuses a category in two groups', () => {
    expect(() => parseRestrictions(['health:a=1', 'metadata,health:b=2'])).toThrow(
      "restricted api 'health' can not be specified in multiple config groups",
    );
  });
});

describe('restricted APIs through the real server', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({
      only: ['simple'],
      metricsPort: 0,
      modelControlMode: 'explicit',
      loadModels: ['simple'],
      httpRestrictedApi: parseRestrictions([
        'model-repository,logging:Admin-Key=s3cret',
        'inference:infer-key=abc',
        'health:h=1',
      ]),
    });
  });
  afterAll(async () => {
    await srv.close();
  });

  const call = (path: string, init: RequestInit = {}) => fetch(srv.url + path, init);

  it('refuses each restricted category without its header, with Triton’s 403', async () => {
    const cases: [string, RequestInit, string][] = [
      ['/v2/repository/index', { method: 'POST', body: '{}' }, 'Admin-Key'],
      ['/v2/repository/models/simple/unload', { method: 'POST', body: '{}' }, 'Admin-Key'],
      ['/v2/logging', {}, 'Admin-Key'],
      ['/v2/models/simple/infer', { method: 'POST', body: '{}' }, 'infer-key'],
      ['/v2/health/live', {}, 'h'],
      ['/v2/models/simple/ready', {}, 'h'],
    ];
    for (const [path, init, key] of cases) {
      const r = await call(path, init);
      expect(r.status, path).toBe(403);
      expect(await r.json(), path).toEqual({ error: `This API is restricted, expecting header '${key}'` });
    }
    // A wrong value is no better than none.
    expect((await call('/v2/logging', { headers: { 'admin-key': 'guess' } })).status).toBe(403);
  });

  it('lets a request with the header through (name case-insensitive, value exact)', async () => {
    expect((await call('/v2/logging', { headers: { 'ADMIN-KEY': 's3cret' } })).status).toBe(200);
    expect(
      (await call('/v2/repository/index', { method: 'POST', body: '{}', headers: { 'admin-key': 's3cret' } }))
        .status,
    ).toBe(200);
    expect((await call('/v2/health/ready', { headers: { h: '1' } })).status).toBe(200);
    const infer = await call('/v2/models/simple/infer', {
      method: 'POST',
      headers: { 'infer-key': 'abc' },
      body: JSON.stringify({
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Array(16).fill(1) },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Array(16).fill(1) },
        ],
      }),
    });
    expect(infer.status).toBe(200);
  });

  it('leaves other categories and the metrics port open', async () => {
    expect((await call('/v2')).status).toBe(200);
    expect((await call('/v2/models/simple/config')).status).toBe(200);
    expect((await call('/v2/models/stats')).status).toBe(200);
    expect((await fetch(srv.running.metricsUrl ?? '')).status).toBe(200);
  });
});
