// These tests use an in-process fake HTTP server ONLY for faults that a real server cannot be made to
// produce on demand (hangs, resets, garbage, scripted 503s). Every API call against a real server is
// covered by packages/conformance, which runs the client against the embedded server.
import { afterEach, describe, expect, it } from 'vitest';
import {
  TritonAbortError,
  TritonClient,
  TritonConnectionError,
  TritonProtocolError,
  TritonServerError,
  TritonTimeoutError,
  type Logger,
} from '../src/index.js';
import { hang, reply, reset, startFaultServer, type FaultHandler, type FaultServer } from './fault-server.js';

let server: FaultServer | undefined;
let client: TritonClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

const fastRetries = { retryDelayMs: 1, maxRetryDelayMs: 20 } as const;

describe('timeouts and aborts', () => {
  it('throws TritonTimeoutError when the server hangs past timeoutMs', async () => {
    server = await startFaultServer(hang);
    client = new TritonClient({ url: server.url, timeoutMs: 100, maxRetries: 0 });
    const started = Date.now();
    const error: unknown = await client.getServerMetadata().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TritonTimeoutError);
    expect((error as TritonTimeoutError).code).toBe('TIMEOUT');
    expect((error as TritonTimeoutError).cause).toBeDefined();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('sets no deadline for timeoutMs 0 or Infinity', async () => {
    const slow: FaultHandler = (_req, res) => {
      setTimeout(() => res.end(), 30);
    };
    server = await startFaultServer(slow);
    for (const timeoutMs of [0, Infinity]) {
      client = new TritonClient({ url: server.url, timeoutMs, maxRetries: 0 });
      expect(await client.isServerLive()).toBe(true);
      await client.close();
    }
    client = undefined;
  });

  it('throws TritonAbortError when the caller aborts, and does not retry', async () => {
    server = await startFaultServer(hang);
    client = new TritonClient({ url: server.url, maxRetries: 3, ...fastRetries });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(client.getServerMetadata({ signal: controller.signal })).rejects.toBeInstanceOf(
      TritonAbortError,
    );
    expect(server.requests).toHaveLength(1);
  });

  it('throws TritonAbortError at once for an already aborted signal', async () => {
    server = await startFaultServer(reply(200, '{}'));
    client = new TritonClient({ url: server.url });
    await expect(client.isServerLive({ signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    expect(server.requests).toHaveLength(0);
  });
});

describe('connection errors and retries', () => {
  it('throws TritonConnectionError when the connection is reset, after retrying idempotent calls', async () => {
    server = await startFaultServer(reset);
    client = new TritonClient({ url: server.url, maxRetries: 2, ...fastRetries });
    const error: unknown = await client.getServerMetadata().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TritonConnectionError);
    expect((error as Error).cause).toBeDefined();
    expect(server.requests).toHaveLength(3);
  });

  it('throws TritonConnectionError when nothing listens', async () => {
    server = await startFaultServer(reply(200));
    const url = server.url;
    await server.close();
    server = undefined;
    client = new TritonClient({ url, maxRetries: 0 });
    await expect(client.isServerLive()).rejects.toBeInstanceOf(TritonConnectionError);
  });

  it('retries a 503 honouring Retry-After, then succeeds', async () => {
    server = await startFaultServer(
      reply(503, '{"error":"busy"}', { 'retry-after': '0' }),
      reply(200, '{"name":"triton","version":"2","extensions":[]}'),
    );
    const warnings: string[] = [];
    const logger: Logger = { debug: () => undefined, warn: (m) => warnings.push(m) };
    client = new TritonClient({ url: server.url, maxRetries: 2, logger, ...fastRetries });
    await expect(client.getServerMetadata()).resolves.toEqual({
      name: 'triton',
      version: '2',
      extensions: [],
    });
    expect(server.requests).toHaveLength(2);
    expect(warnings).toEqual(['triton call failed, retrying']);
  });

  it('does not retry infer on 503 unless the caller opts in', async () => {
    const ok = JSON.stringify({ model_name: 'm', model_version: '1', outputs: [] });
    server = await startFaultServer(reply(503, '{"error":"busy"}'), reply(200, ok));
    client = new TritonClient({ url: server.url, maxRetries: 2, ...fastRetries });
    const input = { name: 'X', datatype: 'FP32' as const, shape: [1], data: [1] };
    const error: unknown = await client.infer('m', [input]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TritonServerError);
    expect((error as TritonServerError).status).toBe(503);
    expect((await client.infer('m', [input], { retry: true })).modelName).toBe('m');
  });

  it('does not retry a 400 error', async () => {
    server = await startFaultServer(reply(400, '{"error":"bad"}'));
    client = new TritonClient({ url: server.url, maxRetries: 2, ...fastRetries });
    await expect(client.getModelConfig('m')).rejects.toMatchObject({ status: 400, message: 'bad' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('64-bit counters', () => {
  // A real server cannot be made to report counters beyond 2^53 on demand; a scripted reply can.
  it('returns statistics counters beyond 2^53 as exact bigints and small ones as numbers', async () => {
    const stats =
      '{"model_stats":[{"name":"m","version":"1","last_inference":1700000000000,"inference_count":18446744073709551615,' +
      '"execution_count":3,"inference_stats":{"success":{"count":9007199254740993,"ns":12345678901234567890}}}]}';
    server = await startFaultServer(reply(200, stats));
    client = new TritonClient({ url: server.url });
    const s = (await client.getInferenceStatistics('m')).model_stats[0];
    expect(s?.inference_count).toBe(18446744073709551615n);
    expect(s?.execution_count).toBe(3);
    expect(s?.last_inference).toBe(1700000000000);
    expect(s?.inference_stats.success.count).toBe(9007199254740993n);
    expect(s?.inference_stats.success.ns).toBe(12345678901234567890n);
  });
});

describe('server error bodies and garbage', () => {
  it("reports an empty error body with the Python client's message", async () => {
    server = await startFaultServer(reply(500));
    client = new TritonClient({ url: server.url, maxRetries: 0 });
    await expect(client.getServerMetadata()).rejects.toMatchObject({
      status: 500,
      message: 'client received an empty response from the server.',
    });
  });

  it('keeps a non-JSON error body as the message', async () => {
    server = await startFaultServer(reply(502, '<html>bad gateway</html>'));
    client = new TritonClient({ url: server.url, maxRetries: 0 });
    await expect(client.getServerMetadata()).rejects.toMatchObject({
      status: 502,
      body: '<html>bad gateway</html>',
    });
  });

  it('throws TritonProtocolError for garbage JSON and for a header length past the body', async () => {
    server = await startFaultServer(
      reply(200, '{"name": tri'),
      reply(200, '{"model_name":"m","outputs":[]}', { 'inference-header-content-length': '999' }),
    );
    client = new TritonClient({ url: server.url, maxRetries: 0 });
    await expect(client.getServerMetadata()).rejects.toBeInstanceOf(TritonProtocolError);
    const error: unknown = await client
      .infer('m', [{ name: 'X', datatype: 'FP32', shape: [1], data: [1] }])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TritonProtocolError);
    expect((error as TritonProtocolError).protocolCode).toBe('INVALID_HEADER_LENGTH');
  });
});
