/**
 * The gateway over gRPC (TRITON_PROTOCOL=grpc) against the real embedded server, which serves HTTP
 * and gRPC from one core: the same predictions, model info, health and statistics as over HTTP, and
 * the configuration that selects the protocol. Error, fault and cancellation cases run over both
 * protocols in errors.test.ts, faults.test.ts and python-path.test.ts.
 */
import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GET as healthGET } from '../src/app/api/health/route';
import { POST } from '../src/app/api/predict/route';
import { GET as statsGET } from '../src/app/api/stats/route';
import { GET as versionGET } from '../src/app/api/version/route';
import { parseEnv } from '../src/env';
import { EXAMPLES } from '../src/server/gallery';
import type { ApiError, Health, ModelStats, Prediction } from '../src/lib/types';
import { json, photo, serverEnv, startEmbedded, uploadRequest, useEnv, type Protocol } from './helpers';

let server: RunningServer;
beforeAll(async () => {
  server = await startEmbedded();
});
afterAll(() => server?.close());

const base = { FOOD11_MODEL_NAME: 'food_classifier_onnx', FEEDBACK_STORAGE: 'none', GATEWAY_LOG: 'false' };

async function predictOver(protocol: Protocol, code: string): Promise<Prediction> {
  useEnv({ ...base, ...serverEnv(server, protocol) });
  const res = await POST(uploadRequest(photo(code)));
  expect(res.status).toBe(200);
  return json<Prediction>(res);
}

describe('POST /api/predict over gRPC', () => {
  it('answers every gallery photo exactly as over HTTP: top-1, all 11 probabilities, OOD score', async () => {
    for (const { code } of EXAMPLES) {
      const http = await predictOver('http', code);
      const grpc = await predictOver('grpc', code);
      expect(grpc.label, code).toBe(http.label);
      expect(grpc.top, code).toEqual(http.top);
      expect(grpc.top).toHaveLength(11);
      expect(grpc.outOfDistribution).toEqual(http.outOfDistribution);
      expect(grpc.model).toEqual({
        name: 'food_classifier_onnx',
        version: '1',
        backend: 'onnxruntime',
        path: 'tensor',
      });
    }
  });

  it('really goes over gRPC: a gRPC gateway pointed at the HTTP port gets no answer (503)', async () => {
    useEnv({ ...base, TRITON_PROTOCOL: 'grpc', TRITON_SERVER_URL: server.url.replace(/^http:\/\//, '') });
    const res = await POST(uploadRequest(photo('A001')));
    expect(res.status).toBe(503);
    expect((await json<ApiError>(res)).error.code).toBe('INFERENCE_UNAVAILABLE');
  });

  it('serves concurrent uploads over one channel (same photo, same answer)', async () => {
    useEnv({ ...base, ...serverEnv(server, 'grpc') });
    const results = await Promise.all(
      Array.from({ length: 8 }, () => POST(uploadRequest(photo('P005'))).then((r) => json<Prediction>(r))),
    );
    for (const p of results) expect(p.top).toEqual(results[0]!.top);
  });
});

describe('health, version and stats over gRPC', () => {
  it('health reports server and model ready at the grpc:// address', async () => {
    useEnv({ ...base, ...serverEnv(server, 'grpc') });
    const res = await healthGET();
    expect(res.status).toBe(200);
    const h = await json<Health>(res);
    expect(h).toMatchObject({ ok: true, server: { live: true, ready: true }, model: { ready: true } });
    expect(h.server.url).toBe(`grpc://${server.grpcUrl}`);
  });

  it('version lists the same labels as over HTTP', async () => {
    useEnv({ ...base, ...serverEnv(server, 'http') });
    const http = await json<{ model: unknown }>(await versionGET());
    useEnv({ ...base, ...serverEnv(server, 'grpc') });
    const grpc = await json<{ model: { labels: string[] } }>(await versionGET());
    expect(grpc.model).toEqual(http.model);
    expect(grpc.model.labels).toHaveLength(11);
  });

  it('stats count predictions made over gRPC', async () => {
    useEnv({ ...base, ...serverEnv(server, 'grpc') });
    const req = () => new Request('http://localhost/api/stats');
    const before = await json<ModelStats>(await statsGET(req()));
    for (let i = 0; i < 2; i++) expect((await POST(uploadRequest(photo('A001')))).status).toBe(200);
    const after = await json<ModelStats>(await statsGET(req()));
    expect(after.success.count - before.success.count).toBeGreaterThanOrEqual(2);
    expect(after.computeInfer.ms).toBeGreaterThan(0);
  });

  it('health is 503 with the cause when the gRPC server is down', async () => {
    const s = await startEmbedded();
    await s.close();
    useEnv({ ...base, ...serverEnv(s, 'grpc') });
    const res = await healthGET();
    expect(res.status).toBe(503);
    const h = await json<Health>(res);
    expect(h).toMatchObject({ ok: false, server: { live: false }, model: { ready: false } });
    expect(h.server.error).toMatch(/not reachable/);
  });
});

describe('TRITON_PROTOCOL, TRITON_SERVER_URL and TRITON_GRPC_URL', () => {
  const endpoint = (vars: Record<string, string>) => {
    const e = parseEnv(vars);
    return [e.tritonProtocol, e.tritonUrl];
  };

  it('defaults to HTTP on localhost:8000 and to gRPC on localhost:8001', () => {
    expect(endpoint({})).toEqual(['http', 'http://localhost:8000']);
    expect(endpoint({ TRITON_PROTOCOL: 'grpc' })).toEqual(['grpc', 'grpc://localhost:8001']);
    expect(endpoint({ TRITON_PROTOCOL: 'GRPC' })).toEqual(['grpc', 'grpc://localhost:8001']);
  });

  it('a grpc(s):// TRITON_SERVER_URL selects gRPC; a bare host:port is taken in the chosen protocol', () => {
    expect(endpoint({ TRITON_SERVER_URL: 'grpc://triton:8001' })).toEqual(['grpc', 'grpc://triton:8001']);
    expect(endpoint({ TRITON_SERVER_URL: 'grpcs://triton' })).toEqual(['grpc', 'grpcs://triton:8001']);
    expect(endpoint({ TRITON_SERVER_URL: 'triton:8000' })).toEqual(['http', 'http://triton:8000']);
    expect(endpoint({ TRITON_PROTOCOL: 'grpc', TRITON_SERVER_URL: 'triton:9000' })).toEqual([
      'grpc',
      'grpc://triton:9000',
    ]);
    expect(endpoint({ TRITON_PROTOCOL: 'grpc', TRITON_SERVER_URL: '[::1]:8001' })).toEqual([
      'grpc',
      'grpc://[::1]:8001',
    ]);
  });

  it('TRITON_GRPC_URL is the gRPC address beside an HTTP TRITON_SERVER_URL (the compose files set both)', () => {
    const both = { TRITON_SERVER_URL: 'triton_server:8000', TRITON_GRPC_URL: 'triton_server:8001' };
    expect(endpoint(both)).toEqual(['http', 'http://triton_server:8000']);
    expect(endpoint({ ...both, TRITON_PROTOCOL: 'grpc' })).toEqual(['grpc', 'grpc://triton_server:8001']);
  });

  it('refuses contradictions and bad values, naming the variable', () => {
    expect(() => parseEnv({ TRITON_PROTOCOL: 'http', TRITON_SERVER_URL: 'grpc://t:8001' })).toThrow(
      /TRITON_PROTOCOL: is http but TRITON_SERVER_URL is a gRPC URL/,
    );
    expect(() => parseEnv({ TRITON_PROTOCOL: 'grpc', TRITON_SERVER_URL: 'http://t:8000' })).toThrow(
      /TRITON_GRPC_URL: required when TRITON_PROTOCOL=grpc/,
    );
    expect(() => parseEnv({ TRITON_PROTOCOL: 'quic' })).toThrow(/TRITON_PROTOCOL/);
    expect(() => parseEnv({ TRITON_PROTOCOL: 'grpc', TRITON_GRPC_URL: 'grpc://t:8001/v2' })).toThrow(
      /TRITON_GRPC_URL: not host:port/,
    );
    expect(() => parseEnv({ TRITON_SERVER_URL: 'grpc://t:70000' })).toThrow(/TRITON_SERVER_URL/);
  });
});
