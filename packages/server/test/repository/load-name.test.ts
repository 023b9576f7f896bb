/**
 * The load API uses a model name exactly as sent (Triton's rule): `simple ` (trailing space) or
 * ` simple` is not `simple`, so loading it fails as Triton fails for a name the repository does not
 * have, on HTTP and gRPC; `simple` itself loads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { GrpcStatus, GrpcTestClient, grpcError, startGrpcTestServer } from '../grpc/helpers.js';
import { get, post, type TestServer } from '../helpers/server.js';

let srv: TestServer & { grpcTarget: string };
let client: GrpcTestClient;

beforeAll(async () => {
  srv = await startGrpcTestServer({ only: ['simple'], modelControlMode: 'explicit' });
  client = new GrpcTestClient(srv.grpcTarget);
});

afterAll(async () => {
  client.close();
  await srv.running.close();
});

const ready = async (): Promise<number> => (await get(srv.url, '/v2/models/simple/ready')).status;

describe('load names are used exactly as sent', () => {
  it.each([
    ['simple ', 'simple%20'],
    [' simple', '%20simple'],
    ['simple\t', 'simple%09'],
  ])('HTTP: %j is not simple (500, Triton’s poll message) and loads nothing', async (name, encoded) => {
    const r = await post(srv.url, `/v2/repository/models/${encoded}/load`, '{}');
    expect(r.status).toBe(500);
    expect((r.json as { error: string }).error).toBe(
      `failed to load '${name}', failed to poll from model repository`,
    );
    expect(await ready()).not.toBe(200);
  });

  it.each([['simple '], [' simple']])(
    'gRPC: %j is not simple (INTERNAL, Triton’s poll message) and loads nothing',
    async (name) => {
      const e = await grpcError(client.call('RepositoryModelLoad', { modelName: name }));
      expect(e.code).toBe(GrpcStatus.INTERNAL);
      expect(e.details).toBe(`failed to load '${name}', failed to poll from model repository`);
      expect(await ready()).not.toBe(200);
    },
  );

  it('the exact name loads, on both wires', async () => {
    expect((await post(srv.url, '/v2/repository/models/simple/load', '{}')).status).toBe(200);
    expect(await ready()).toBe(200);
    expect((await post(srv.url, '/v2/repository/models/simple/unload', '{}')).status).toBe(200);
    await client.call('RepositoryModelLoad', { modelName: 'simple' });
    expect(await ready()).toBe(200);
  });
});
