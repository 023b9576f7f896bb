/**
 * `--grpc-restricted-protocol`: tritonserver's syntax and startup messages, and at call time the
 * metadata key `triton-grpc-protocol-<key>` with the exact value, else UNAVAILABLE
 * `This protocol is restricted, expecting header 'triton-grpc-protocol-<key>'` — for unary RPCs,
 * the health check and the stream.
 */
import { Metadata } from '@grpc/grpc-js';
import type {
  ModelInferResponse,
  ModelStreamInferResponse,
  RepositoryIndexResponse,
  ServerLiveResponse,
} from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs } from '../../src/cli-args.js';
import { parseRestrictions } from '../../src/http/restricted-api.js';
import type { TestServer } from '../helpers/server.js';
import {
  GrpcStatus,
  GrpcTestClient,
  SIMPLE_A,
  SIMPLE_B,
  grpcError,
  simpleRequest,
  startGrpcTestServer,
} from './helpers.js';

describe('--grpc-restricted-protocol parsing', () => {
  it('takes tritonserver’s groups', () => {
    const o = parseArgs([
      '--model-repository=/m',
      '--grpc-restricted-protocol=model-repository,shared-memory:admin-key=s3cret',
      '--grpc-restricted-protocol=inference:infer-key=1',
    ]);
    expect(Object.fromEntries(o.server.grpc?.restrictions ?? [])).toEqual({
      'model-repository': { key: 'admin-key', value: 's3cret' },
      'shared-memory': { key: 'admin-key', value: 's3cret' },
      inference: { key: 'infer-key', value: '1' },
    });
  });

  it.each([
    ['health', "--grpc-restricted-protocol option format is '<config name>:<setting>=<value>'. Got health"],
    ['everything:k=v', "unknown restricted protocol 'everything' "],
    ['health,health:k=v', "restricted protocol 'health' can not be specified in multiple config groups"],
  ])('refuses %s with tritonserver’s message', (value, message) => {
    expect(() => parseArgs(['--model-repository=/m', `--grpc-restricted-protocol=${value}`])).toThrow(
      CliUsageError,
    );
    expect(() => parseArgs(['--model-repository=/m', `--grpc-restricted-protocol=${value}`])).toThrow(
      `Bad option: "--grpc-restricted-protocol".\n${message}`,
    );
  });

  it('keeps the HTTP and gRPC restrictions apart', () => {
    expect(parseRestrictions(['trace:k=v'], 'grpc-restricted-protocol').get('trace')).toEqual({
      key: 'k',
      value: 'v',
    });
    const o = parseArgs(['--model-repository=/m', '--http-restricted-api=trace:a=1']);
    expect(o.server.grpc?.restrictions).toBeUndefined();
  });
});

describe('restricted calls', () => {
  let server: TestServer & { grpcTarget: string };
  let client: GrpcTestClient;
  const admin = (): Metadata => {
    const m = new Metadata();
    m.set('triton-grpc-protocol-admin-key', 's3cret');
    return m;
  };

  beforeAll(async () => {
    server = await startGrpcTestServer({
      only: ['simple'],
      grpc: {
        restrictions: parseRestrictions(
          ['model-repository,health:admin-key=s3cret', 'inference:infer-key=go'],
          'grpc-restricted-protocol',
        ),
      },
    });
    client = new GrpcTestClient(server.grpcTarget);
  });

  afterAll(async () => {
    client.close();
    await server.close();
  });

  it('refuses a unary call without the metadata, or with the wrong value', async () => {
    const e = await grpcError(client.call('RepositoryIndex', {}));
    expect(e.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(e.details).toBe("This protocol is restricted, expecting header 'triton-grpc-protocol-admin-key'");
    const wrong = new Metadata();
    wrong.set('triton-grpc-protocol-admin-key', 'nope');
    expect((await grpcError(client.call('RepositoryIndex', {}, wrong))).code).toBe(GrpcStatus.UNAVAILABLE);
    // The HTTP form of the key is not the gRPC one.
    const http = new Metadata();
    http.set('admin-key', 's3cret');
    expect((await grpcError(client.call('ServerLive', {}, http))).code).toBe(GrpcStatus.UNAVAILABLE);
  });

  it('lets the call through with the metadata; other categories stay open', async () => {
    const index = await client.call<RepositoryIndexResponse>('RepositoryIndex', {}, admin());
    expect(index.models.map((m) => m.name)).toEqual(['simple']);
    expect((await client.call<ServerLiveResponse>('ServerLive', {}, admin())).live).toBe(true);
    const meta = await client.call<{ name: string }>('ServerMetadata', {});
    expect(meta.name).toBe('triton');
  });

  it('covers grpc.health.v1.Health/Check (health) and ModelInfer (inference)', async () => {
    const h = await grpcError(client.check({}));
    expect(h.details).toBe("This protocol is restricted, expecting header 'triton-grpc-protocol-admin-key'");
    expect((await client.check<{ status: number }>({}, admin())).status).toBe(1);
    const i = await grpcError(client.call('ModelInfer', simpleRequest(SIMPLE_A, SIMPLE_B)));
    expect(i.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(i.details).toBe("This protocol is restricted, expecting header 'triton-grpc-protocol-infer-key'");
    const go = new Metadata();
    go.set('triton-grpc-protocol-infer-key', 'go');
    const r = await client.call<ModelInferResponse>('ModelInfer', simpleRequest(SIMPLE_A, SIMPLE_B), go);
    expect(r.rawOutputContents).toHaveLength(2);
  });

  it('ends ModelStreamInfer at once without the metadata', async () => {
    const stream = client.stream();
    const answers: ModelStreamInferResponse[] = [];
    stream.on('data', (m: ModelStreamInferResponse) => answers.push(m));
    const e = await new Promise<{ code?: number; details?: string }>((resolve) =>
      stream.on('error', resolve),
    );
    expect(e.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(e.details).toBe("This protocol is restricted, expecting header 'triton-grpc-protocol-infer-key'");
    expect(answers).toEqual([]);
  });
});
