/**
 * Connection failures, deadlines and aborts over real sockets: a closed port, and (an in-process
 * fake, for a hang a real server does not produce on demand) a TCP listener that accepts and never
 * answers.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TritonAbortError, TritonConnectionError, TritonTimeoutError } from '../../src/errors.js';
import { createGrpcClient } from '../../src/grpc/index.js';

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

describe('gRPC transport without a working server', () => {
  let closedPort: number;
  let silent: Server;
  let silentPort: number;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    const probe = createServer();
    closedPort = await listen(probe);
    await new Promise((resolve) => probe.close(resolve));
    // Fake: accepts TCP and never speaks HTTP/2.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    silentPort = await listen(silent);
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('a closed port is a TritonConnectionError, retried like HTTP connection errors', async () => {
    const warnings: string[] = [];
    const client = createGrpcClient({
      url: `127.0.0.1:${closedPort}`,
      maxRetries: 2,
      retryDelayMs: 1,
      logger: { debug: () => undefined, warn: (message) => warnings.push(message) },
    });
    try {
      await expect(client.getServerMetadata()).rejects.toBeInstanceOf(TritonConnectionError);
      expect(warnings).toHaveLength(2);
      // infer is not retried unless asked.
      warnings.length = 0;
      await expect(client.infer('m', [])).rejects.toBeInstanceOf(TritonConnectionError);
      expect(warnings).toHaveLength(0);
    } finally {
      await client.close();
    }
  });

  it("the client's timeout is the call's deadline: TritonTimeoutError", async () => {
    const client = createGrpcClient({ url: `127.0.0.1:${silentPort}`, maxRetries: 0 });
    try {
      const started = performance.now();
      const error = await client.isServerLive({ timeoutMs: 300 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TritonTimeoutError);
      expect((error as TritonTimeoutError).timeoutMs).toBe(300);
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
      expect(performance.now() - started).toBeLessThan(3000);
    } finally {
      await client.close();
    }
  });

  it('an AbortSignal cancels the call: TritonAbortError', async () => {
    const client = createGrpcClient({ url: `127.0.0.1:${silentPort}`, maxRetries: 0, timeoutMs: 0 });
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      await expect(
        client.getModelConfig('m', undefined, { signal: controller.signal }),
      ).rejects.toBeInstanceOf(TritonAbortError);
      const stream = client.transport.openStream({ signal: AbortSignal.timeout(100) });
      await expect(stream.next()).rejects.toBeInstanceOf(TritonAbortError);
    } finally {
      await client.close();
    }
  });
});
