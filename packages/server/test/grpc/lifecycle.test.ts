/**
 * The gRPC listener's life: the CLI banner line and SIGTERM, TLS and mutual TLS (certificates made
 * with openssl for the test), a taken port, and a draining shutdown (calls in flight finish, an open
 * stream is cancelled at the exit timeout).
 */
import { spawn, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  type Client,
  type ServiceError,
} from '@grpc/grpc-js';
import { serviceDefinition, type ServerLiveResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startServer, GrpcStartError } from '../../src/index.js';
import { makeRepository } from '../helpers/server.js';
import { GrpcStatus, GrpcTestClient } from './helpers.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
let repository: string;
let certs: string;

beforeAll(async () => {
  repository = await makeRepository(['simple', 'slow_identity']);
  certs = await mkdtemp(join(tmpdir(), 'grpc-certs-'));
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: certs, stdio: 'ignore' });
  };
  const days = ['-days', '2'];
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    ...days,
    '-subj',
    '/CN=test-ca',
  );
  for (const who of ['server', 'client']) {
    ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${who}.key`,
      '-out',
      `${who}.csr`,
      '-subj',
      `/CN=${who}`,
    );
    const ext =
      who === 'server' ? 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' : 'extendedKeyUsage=clientAuth\n';
    await writeFile(join(certs, `${who}.ext`), ext);
    const sign = ['-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-extfile', `${who}.ext`];
    ssl('x509', '-req', '-in', `${who}.csr`, ...sign, '-out', `${who}.pem`, ...days);
  }
});

afterAll(async () => {
  await rm(repository, { recursive: true, force: true });
  await rm(certs, { recursive: true, force: true });
});

function liveCall(client: Client): Promise<ServerLiveResponse> {
  return new Promise((resolve, reject) => {
    (
      client as unknown as Record<
        string,
        (r: object, m: Metadata, cb: (e: ServiceError | null, r: ServerLiveResponse) => void) => void
      >
    ).ServerLive?.call(client, {}, new Metadata(), (e, r) => (e === null ? resolve(r) : reject(e)));
  });
}

describe('the CLI', () => {
  it('prints tritonserver’s banner line, serves gRPC, and exits 0 on SIGTERM', async () => {
    if (!existsSync(cli)) throw new Error(`build the package first (${cli} is missing)`);
    const child = spawn(
      process.execPath,
      [cli, `--model-repository=${repository}`, '--http-port=0', '--grpc-port=0', '--allow-metrics=false'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner:\n${err}`)), 30_000);
      child.stderr?.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /Started GRPCInferenceService at 0\.0\.0\.0:(\d+)/.exec(err);
        if (m !== null) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
    });
    const client = new GrpcTestClient(`127.0.0.1:${port}`);
    expect((await client.call<ServerLiveResponse>('ServerLive', {})).live).toBe(true);
    client.close();
    // tritonserver prints the gRPC line before the HTTP one.
    expect(err.indexOf('Started GRPCInferenceService')).toBeLessThan(err.indexOf('Started HTTPService'));
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  }, 60_000);
});

describe('the CLI with the gRPC port taken', () => {
  it('exits 1 with tritonserver’s message', async () => {
    const first = await startServer({
      modelRepositories: [repository],
      allowHttp: false,
      grpcPort: 0,
      grpcAddress: '0.0.0.0',
      logSink: () => undefined,
    });
    try {
      const child = spawn(
        process.execPath,
        [
          cli,
          `--model-repository=${repository}`,
          '--http-port=0',
          `--grpc-port=${first.grpcPort}`,
          '--allow-metrics=false',
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let err = '';
      child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(1);
      expect(err).toContain(
        `failed to start GRPC service: Unavailable - Socket '0.0.0.0:${first.grpcPort}' already in use `,
      );
    } finally {
      await first.close();
    }
  }, 60_000);
});

describe('TLS', () => {
  const Inference = makeGenericClientConstructor(serviceDefinition, 'GRPCInferenceService');

  it('--grpc-use-ssl: a client trusting the CA connects; a plaintext client does not', async () => {
    const running = await startServer({
      modelRepositories: [repository],
      allowHttp: false,
      grpcPort: 0,
      grpc: {
        tls: {
          serverCertFile: join(certs, 'server.pem'),
          serverKeyFile: join(certs, 'server.key'),
          mutual: false,
        },
      },
      logSink: () => undefined,
    });
    try {
      const ca = await readFile(join(certs, 'ca.pem'));
      const tls = new Inference(`localhost:${running.grpcPort}`, credentials.createSsl(ca));
      expect((await liveCall(tls)).live).toBe(true);
      tls.close();
      const plain = new Inference(`127.0.0.1:${running.grpcPort}`, credentials.createInsecure(), {
        'grpc.initial_reconnect_backoff_ms': 100,
      });
      const e = (await liveCall(plain).catch((error: unknown) => error)) as ServiceError;
      expect(e.code).toBe(GrpcStatus.UNAVAILABLE);
      plain.close();
    } finally {
      await running.close();
    }
  });

  it('--grpc-use-ssl-mutual: a client certificate signed by the root is required', async () => {
    const running = await startServer({
      modelRepositories: [repository],
      allowHttp: false,
      grpcPort: 0,
      grpc: {
        tls: {
          serverCertFile: join(certs, 'server.pem'),
          serverKeyFile: join(certs, 'server.key'),
          rootCertFile: join(certs, 'ca.pem'),
          mutual: true,
        },
      },
      logSink: () => undefined,
    });
    try {
      const ca = await readFile(join(certs, 'ca.pem'));
      const key = await readFile(join(certs, 'client.key'));
      const cert = await readFile(join(certs, 'client.pem'));
      const withCert = new Inference(`localhost:${running.grpcPort}`, credentials.createSsl(ca, key, cert));
      expect((await liveCall(withCert)).live).toBe(true);
      withCert.close();
      const without = new Inference(`localhost:${running.grpcPort}`, credentials.createSsl(ca));
      const e = (await liveCall(without).catch((error: unknown) => error)) as ServiceError;
      expect(e.code).toBe(GrpcStatus.UNAVAILABLE);
      without.close();
    } finally {
      await running.close();
    }
  });

  it('an unreadable certificate file is a startup error naming the flag', async () => {
    await expect(
      startServer({
        modelRepositories: [repository],
        allowHttp: false,
        grpcPort: 0,
        grpc: {
          tls: {
            serverCertFile: join(certs, 'missing.pem'),
            serverKeyFile: join(certs, 'server.key'),
            mutual: false,
          },
        },
        logSink: () => undefined,
      }),
    ).rejects.toThrow(/^unable to read --grpc-server-cert '.*missing\.pem'/);
  });
});

describe('readiness', () => {
  it('a model that failed to load: ServerReady false and Health/Check NOT_SERVING, ServerLive true', async () => {
    const broken = await makeRepository(['simple', 'broken_config']);
    const running = await startServer({
      modelRepositories: [broken],
      allowHttp: false,
      grpcPort: 0,
      logSink: () => undefined,
    });
    const client = new GrpcTestClient(running.grpcUrl);
    try {
      expect((await client.call<{ live: boolean }>('ServerLive', {})).live).toBe(true);
      expect((await client.call<{ ready: boolean }>('ServerReady', {})).ready).toBe(false);
      // NOT_SERVING = 2.
      expect((await client.check<{ status: number }>({})).status).toBe(2);
    } finally {
      client.close();
      await running.close();
      await rm(broken, { recursive: true, force: true });
    }
  });
});

describe('listening and shutdown', () => {
  it('a taken port: tritonserver’s words', async () => {
    const first = await startServer({
      modelRepositories: [repository],
      allowHttp: false,
      grpcPort: 0,
      logSink: () => undefined,
    });
    try {
      const error = await startServer({
        modelRepositories: [repository],
        allowHttp: false,
        grpcPort: Number(first.grpcPort),
        grpcAddress: '127.0.0.1',
        logSink: () => undefined,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GrpcStartError);
      expect((error as Error).message).toBe(`Socket '127.0.0.1:${first.grpcPort}' already in use `);
    } finally {
      await first.close();
    }
  });

  it('drains: a call in flight finishes, an idle open stream ends with OK at once (issue 23 item 8)', async () => {
    const running = await startServer({
      modelRepositories: [repository],
      allowHttp: false,
      grpcPort: 0,
      exitTimeoutSecs: 1,
      logSink: () => undefined,
    });
    const client = new GrpcTestClient(running.grpcUrl);
    const stream = client.stream();
    const streamEnded = new Promise<number | undefined>((resolve) => {
      stream.on('error', (e: ServiceError) => resolve(e.code));
      stream.on('end', () => resolve(undefined));
    });
    stream.on('data', () => undefined);
    // A slow request (50 ms per execution) in flight when the shutdown starts.
    const inFlight = client.call<{ rawOutputContents: Uint8Array[] }>('ModelInfer', {
      modelName: 'slow_identity',
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [1n, 4n], contents: { fp32Contents: [1, 2, 3, 4] } },
      ],
    });
    // Close once the request is inside the server (a fixed pause lost that race on a loaded machine).
    const scheduler = running.server.models.resolve('slow_identity').scheduler;
    const deadline = Date.now() + 10_000;
    while (scheduler.pendingCount < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    expect(scheduler.pendingCount).toBeGreaterThanOrEqual(1);
    const started = Date.now();
    const finished = await running.close();
    const r = await inFlight;
    expect(Array.from(new Float32Array(new Uint8Array(r.rawOutputContents[0] as Uint8Array).buffer))).toEqual(
      [1, 2, 3, 4],
    );
    // The idle stream no longer holds the shutdown for the whole exit timeout: it is drained (no
    // more requests read, nothing in flight) and ends with OK.
    expect(finished).toBe(true);
    expect(Date.now() - started).toBeLessThan(900);
    expect(await streamEnded).toBeUndefined();
    client.close();
  });
});
