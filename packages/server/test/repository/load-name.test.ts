/**
 * The load API uses a model name exactly as sent (Triton's rule): `simple ` (trailing space) or
 * ` simple` is not `simple`, so loading it fails as Triton fails for a name the repository does not
 * have, on HTTP and gRPC; `simple` itself loads. Dots are ordinary name characters (Triton 2.73):
 * only `..` or a name holding `/` (or NUL) is refused as traversal.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';

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

/** A POST with the path exactly as given (fetch would resolve `..` and `%2E%2E` segments). */
function rawPost(path: string): Promise<{ status: number; error: string }> {
  const { hostname, port } = new URL(srv.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'POST' }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, error: (JSON.parse(text) as { error: string }).error }),
      );
    });
    req.on('error', reject);
    req.end('{}');
  });
}

describe('dots in load names (Triton 2.73)', () => {
  const traversal = (name: string): string =>
    `invalid model name '${name}', model name must not contain path traversal characters`;

  it.each([['...'], ['..my_model'], ['model..1'], ['model....1']])(
    '%j is a valid name: not in the repository, it fails as Triton’s poll does, on HTTP and gRPC',
    async (name) => {
      const http = await rawPost(`/v2/repository/models/${encodeURIComponent(name)}/load`);
      expect(http.status).toBe(500);
      expect(http.error).toBe(`failed to load '${name}', failed to poll from model repository`);
      const e = await grpcError(client.call('RepositoryModelLoad', { modelName: name }));
      expect(e.code).toBe(GrpcStatus.INTERNAL);
      expect(e.details).toBe(`failed to load '${name}', failed to poll from model repository`);
    },
  );

  it.each([['model..1'], ['model....1']])(
    '%j in the repository loads and serves, on HTTP and gRPC',
    async (name) => {
      const dir = join(srv.repository, name);
      await cp(join(srv.repository, 'simple'), dir, { recursive: true });
      const config = join(dir, 'config.pbtxt');
      await writeFile(config, (await readFile(config, 'utf8')).replace('name: "simple"', `name: "${name}"`));
      const path = `/v2/repository/models/${encodeURIComponent(name)}`;
      expect((await post(srv.url, `${path}/load`, '{}')).status).toBe(200);
      expect((await get(srv.url, `/v2/models/${encodeURIComponent(name)}/ready`)).status).toBe(200);
      expect((await post(srv.url, `${path}/unload`, '{}')).status).toBe(200);
      await client.call('RepositoryModelLoad', { modelName: name });
      expect((await get(srv.url, `/v2/models/${encodeURIComponent(name)}/ready`)).status).toBe(200);
    },
  );

  it.each([
    ['..', '..'],
    ['a/b', 'a%2Fb'],
    ['../simple', '..%2Fsimple'],
    ['a\0b', 'a%00b'],
  ])('%j is refused as traversal (400 / INVALID_ARGUMENT, Triton’s message)', async (name, encoded) => {
    const http = await rawPost(`/v2/repository/models/${encoded}/load`);
    expect(http.status).toBe(400);
    expect(http.error).toBe(traversal(name));
    const e = await grpcError(client.call('RepositoryModelLoad', { modelName: name }));
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(e.details).toBe(traversal(name));
  });
});
