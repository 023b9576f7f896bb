import { describe, expect, it } from 'vitest';

import { allowedMethods, matchRoute } from '../../src/http/router.js';

describe('Triton path shapes', () => {
  it.each([
    ['/v2', { kind: 'server-metadata' }],
    ['/v2/health/live', { kind: 'health', check: 'live' }],
    ['/v2/models/stats', { kind: 'model-stats-all' }],
    ['/v2/models/m', { kind: 'model', name: 'm', version: undefined, action: 'metadata' }],
    ['/v2/models/m/versions/12/infer', { kind: 'model', name: 'm', version: '12', action: 'infer' }],
    ['/v2/models/m/trace/setting', { kind: 'model', name: 'm', version: undefined, action: 'trace' }],
    ['/v2/models/a%20b/ready', { kind: 'model', name: 'a b', version: undefined, action: 'ready' }],
    ['/v2/repository/index', { kind: 'repository-index', repository: undefined }],
    [
      '/v2/repository/r1/models/m/unload',
      { kind: 'repository-model', repository: 'r1', name: 'm', action: 'unload' },
    ],
    [
      '/v2/systemsharedmemory/region/r/register',
      { kind: 'shared-memory', memory: 'system', region: 'r', action: 'register' },
    ],
    [
      '/v2/cudasharedmemory/status',
      { kind: 'shared-memory', memory: 'cuda', region: undefined, action: 'status' },
    ],
    ['/v2/logging', { kind: 'logging' }],
    ['/v2/trace/setting', { kind: 'trace' }],
  ])('matches %s', (path, route) => {
    expect(matchRoute(path)).toEqual(route);
  });

  it.each([
    '/',
    '/v1/models/m',
    '/v2/models/m/versions/one/infer',
    '/v2/models/m/versions/1/trace/setting',
    '/v2/models/m/explain',
    '/v2/health',
    '/v2/repository/models/m',
    '/v2/systemsharedmemory/region/r/delete',
  ])('does not match %s', (path) => {
    expect(matchRoute(path)).toBeUndefined();
  });

  it('allows the methods Triton allows', () => {
    expect(allowedMethods({ kind: 'health', check: 'ready' })).toEqual(['GET']);
    expect(allowedMethods({ kind: 'repository-index', repository: undefined })).toEqual(['POST']);
    expect(allowedMethods({ kind: 'logging' })).toEqual(['GET', 'POST']);
    expect(
      allowedMethods({ kind: 'shared-memory', memory: 'system', region: 'r', action: 'status' }),
    ).toEqual(['GET']);
  });
});
