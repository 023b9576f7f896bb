/**
 * TLS (server-authenticated and mutual) and headers as metadata, against the real embedded server's
 * gRPC front end. Certificates are made with openssl for the test.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TritonConnectionError, TritonServerError } from '../../src/errors.js';
import { createGrpcClient } from '../../src/grpc/index.js';

const serverModule = '@tritonserver-ts/server';
const testingModule = '@tritonserver-ts/server/testing';

interface RunningServer {
  readonly grpcUrl: string;
  readonly grpcPort: number | undefined;
  close(): Promise<void>;
}

let dir: string;
let cert: Buffer;
let key: Buffer;

async function start(grpc: Record<string, unknown>): Promise<RunningServer> {
  const { startServer } = (await import(serverModule)) as {
    startServer: (options: Record<string, unknown>) => Promise<RunningServer>;
  };
  return startServer({
    modelRepositories: [join(dir, 'models')],
    httpPort: 0,
    grpcPort: 0,
    grpc,
    logSink: () => undefined,
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'client-grpc-tls-'));
  const { writeTestModelRepository } = (await import(testingModule)) as {
    writeTestModelRepository: (dir: string, options: { only: readonly string[] }) => Promise<unknown>;
  };
  await writeTestModelRepository(join(dir, 'models'), { only: ['simple'] });
  // A self-signed certificate for localhost, used as the server's and (for mutual TLS) the client's.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'pipe' },
  );
  cert = await readFile(join(dir, 'cert.pem'));
  key = await readFile(join(dir, 'key.pem'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('TLS', () => {
  it('server-authenticated TLS with the CA given as rootCertificates; plaintext and untrusted clients fail', async () => {
    const server = await start({
      tls: { serverCertFile: join(dir, 'cert.pem'), serverKeyFile: join(dir, 'key.pem'), mutual: false },
    });
    const url = `localhost:${server.grpcPort}`;
    const trusted = createGrpcClient({ url, tls: { rootCertificates: cert }, maxRetries: 0 });
    const plain = createGrpcClient({ url, maxRetries: 0, timeoutMs: 5000 });
    const untrusted = createGrpcClient({ url: `grpcs://${url}`, maxRetries: 0, timeoutMs: 5000 });
    try {
      expect(await trusted.getServerMetadata()).toMatchObject({ name: 'triton' });
      await expect(plain.getServerMetadata()).rejects.toBeInstanceOf(TritonConnectionError);
      await expect(untrusted.getServerMetadata()).rejects.toBeInstanceOf(TritonConnectionError);
    } finally {
      await Promise.all([trusted.close(), plain.close(), untrusted.close()]);
      await server.close();
    }
  });

  it('mutual TLS: the client key and certificate are presented', async () => {
    const server = await start({
      tls: {
        serverCertFile: join(dir, 'cert.pem'),
        serverKeyFile: join(dir, 'key.pem'),
        rootCertFile: join(dir, 'cert.pem'),
        mutual: true,
      },
    });
    const url = `localhost:${server.grpcPort}`;
    const withCert = createGrpcClient({
      url,
      tls: { rootCertificates: cert, privateKey: key, certificateChain: cert },
      maxRetries: 0,
    });
    const withoutCert = createGrpcClient({
      url,
      tls: { rootCertificates: cert },
      maxRetries: 0,
      timeoutMs: 5000,
    });
    try {
      expect(await withCert.isServerReady()).toBe(true);
      await expect(withoutCert.getServerMetadata()).rejects.toBeInstanceOf(TritonConnectionError);
    } finally {
      await Promise.all([withCert.close(), withoutCert.close()]);
      await server.close();
    }
  });
});

describe('headers as metadata', () => {
  // tritonserver expects the restricted protocol's header as triton-grpc-protocol-<key>.
  it('a restricted API answers only with its header, sent from the client headers (any case)', async () => {
    const server = await start({
      restrictions: new Map([['metadata', { key: 'admin-key', value: 's3cret' }]]),
    });
    const without = createGrpcClient({ url: server.grpcUrl, maxRetries: 0 });
    const withHeader = createGrpcClient({
      url: server.grpcUrl,
      headers: { 'Triton-Grpc-Protocol-Admin-Key': 's3cret' },
    });
    try {
      const error = await without.getServerMetadata().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TritonServerError);
      expect((error as Error).message).toContain("expecting header 'triton-grpc-protocol-admin-key'");
      expect(await withHeader.getServerMetadata()).toMatchObject({ name: 'triton' });
      // Per-call headers too.
      expect(
        await without.getServerMetadata({ headers: { 'triton-grpc-protocol-admin-key': 's3cret' } }),
      ).toMatchObject({
        name: 'triton',
      });
    } finally {
      await Promise.all([without.close(), withHeader.close()]);
      await server.close();
    }
  });
});
