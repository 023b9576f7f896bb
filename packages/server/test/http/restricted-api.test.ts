import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs } from '../../src/cli-args.js';
import {
  GRPC_METHOD_CATEGORIES,
  RESTRICTED_API_CATEGORIES,
  parseRestrictions,
  type RestrictedApiCategory,
} from '../../src/http/restricted-api.js';
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
    // Twice in one group is the same mistake for tritonserver.
    expect(() =>
      parseArgs(['--model-repository=/m', '--http-restricted-api=inference,inference:k=v']),
    ).toThrow(
      `Bad option: "--http-restricted-api".\nrestricted api 'inference' can not be specified in multiple config groups`,
    );
  });

  it.each([[':k=v'], ['health:=v'], ['health:k='], ['health=k:v']])(
    'refuses %s (an empty part) with the format message',
    (value) => {
      expect(() => parseRestrictions([value])).toThrow(
        `--http-restricted-api option format is '<config name>:<setting>=<value>'. Got ${value}`,
      );
    },
  );

  it('splits at the first colon and the next equals sign, as tritonserver does', () => {
    expect(Object.fromEntries(parseRestrictions(['logging:x-key=a:b=c']))).toEqual({
      logging: { key: 'x-key', value: 'a:b=c' },
    });
    expect(() => parseRestrictions(['logging,trace:k:v=1'])).not.toThrow();
    expect(parseRestrictions(['logging,trace:k:v=1']).get('trace')).toEqual({ key: 'k:v', value: '1' });
  });

  it('maps the gRPC methods to the same categories (used by the gRPC front end)', () => {
    expect(GRPC_METHOD_CATEGORIES.ModelReady).toBe('health');
    expect(GRPC_METHOD_CATEGORIES.ModelStreamInfer).toBe('inference');
    expect(new Set(Object.values(GRPC_METHOD_CATEGORIES))).toEqual(new Set(RESTRICTED_API_CATEGORIES));
  });
});

describe('every category through the real server', () => {
  let srv: TestServer;
  const keyOf = (c: string) => `k-${c}`;
  beforeAll(async () => {
    srv = await startTestServer({
      only: ['simple'],
      metricsPort: 0,
      modelControlMode: 'explicit',
      loadModels: ['simple'],
      httpRestrictedApi: parseRestrictions(RESTRICTED_API_CATEGORIES.map((c) => `${c}:${keyOf(c)}=v-${c}`)),
    });
  });
  afterAll(async () => {
    await srv.close();
  });

  const simpleBody = JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Array(16).fill(1) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Array(16).fill(1) },
    ],
  });
  const endpoints: [RestrictedApiCategory, string, string, string?][] = [
    ['health', 'GET', '/v2/health/live'],
    ['health', 'GET', '/v2/health/ready'],
    ['health', 'GET', '/v2/models/simple/ready'],
    ['metadata', 'GET', '/v2'],
    ['metadata', 'GET', '/v2/models/simple'],
    ['inference', 'POST', '/v2/models/simple/infer', simpleBody],
    ['inference', 'POST', '/v2/models/simple/versions/1/infer', simpleBody],
    ['inference', 'POST', '/v2/models/simple/generate', '{}'],
    ['inference', 'POST', '/v2/models/simple/versions/1/generate_stream', '{}'],
    ['shared-memory', 'GET', '/v2/systemsharedmemory/status'],
    ['shared-memory', 'POST', '/v2/systemsharedmemory/region/r/unregister'],
    ['shared-memory', 'GET', '/v2/cudasharedmemory/status'],
    ['model-config', 'GET', '/v2/models/simple/config'],
    ['model-repository', 'POST', '/v2/repository/index', '{}'],
    ['model-repository', 'POST', '/v2/repository/models/simple/load', '{}'],
    ['model-repository', 'POST', '/v2/repository/models/nope/unload', '{}'],
    ['statistics', 'GET', '/v2/models/stats'],
    ['statistics', 'GET', '/v2/models/simple/stats'],
    ['trace', 'GET', '/v2/trace/setting'],
    ['trace', 'GET', '/v2/models/simple/trace/setting'],
    ['logging', 'GET', '/v2/logging'],
  ];

  it('refuses each endpoint without its header, or with another category’s, with Triton’s 403', async () => {
    for (const [category, method, path, body] of endpoints) {
      const other = category === 'health' ? 'metadata' : 'health';
      for (const headers of [{}, { [keyOf(other)]: `v-${other}` }, { [keyOf(category)]: 'wrong' }]) {
        const r = await fetch(srv.url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
        expect(r.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(403);
        expect(await r.json()).toEqual({
          error: `This API is restricted, expecting header '${keyOf(category)}'`,
        });
      }
    }
  });

  it('lets each endpoint through with its header (any case of the name)', async () => {
    for (const [category, method, path, body] of endpoints) {
      const r = await fetch(srv.url + path, {
        method,
        headers: { [keyOf(category).toUpperCase()]: `v-${category}` },
        ...(body !== undefined ? { body } : {}),
      });
      expect(r.status, `${method} ${path}`).not.toBe(403);
      if (path.endsWith('/infer') || method === 'GET') expect(r.status, `${method} ${path}`).toBe(200);
    }
  });

  it('checks the restriction before the method, as Triton’s handlers do', async () => {
    expect((await fetch(srv.url + '/v2/logging', { method: 'PUT' })).status).toBe(403);
    expect(
      (await fetch(srv.url + '/v2/logging', { method: 'PUT', headers: { 'k-logging': 'v-logging' } })).status,
    ).toBe(405);
  });

  it('does not cover the metrics port', async () => {
    expect((await fetch(srv.running.metricsUrl ?? '')).status).toBe(200);
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
