// What the client puts on the wire (paths, base path, query strings, headers, empty bodies) cannot be
// observed on a real server, which does not echo requests; an in-process recording server is used
// for that ONLY. Whether a real server accepts these requests is covered by packages/conformance.
import { afterEach, describe, expect, it } from 'vitest';
import { basicAuthPlugin, TritonClient } from '../src/index.js';
import { reply, startFaultServer, type FaultServer } from './fault-server.js';

let server: FaultServer | undefined;
let client: TritonClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

describe('request shape on the wire', () => {
  it('sends default and per-call headers, repeated query params and the base path', async () => {
    server = await startFaultServer(reply(200));
    client = new TritonClient({
      url: `http://${server.url}/triton/`,
      headers: { 'x-team': 'gg' },
      queryParams: { a: '1' },
    });
    await client.isModelReady('food model', 2, {
      headers: { 'x-call': 'yes' },
      queryParams: { tag: ['x', 'y'] },
    });
    expect(server.requests[0]?.url).toBe('/triton/v2/models/food%20model/versions/2/ready?a=1&tag=x&tag=y');
    expect(server.requests[0]?.headers['x-team']).toBe('gg');
    expect(server.requests[0]?.headers['x-call']).toBe('yes');
  });

  it('runs a registered plugin before each call, e.g. Basic auth', async () => {
    server = await startFaultServer(reply(200));
    client = new TritonClient({ url: server.url });
    client.registerPlugin(basicAuthPlugin('user', 'pa:ss'));
    await client.isServerLive();
    client.unregisterPlugin();
    await client.isServerLive();
    expect(server.requests[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from('user:pa:ss').toString('base64')}`,
    );
    expect(server.requests[1]?.headers.authorization).toBeUndefined();
  });

  it('refuses a caller Transfer-Encoding header', async () => {
    server = await startFaultServer(reply(200));
    client = new TritonClient({ url: server.url });
    await expect(client.isServerLive({ headers: { 'Transfer-Encoding': 'chunked' } })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('sends an empty POST for the repository index and always sends unload_dependents', async () => {
    server = await startFaultServer(reply(200, '[]'), reply(200));
    client = new TritonClient({ url: server.url });
    await client.getModelRepositoryIndex();
    await client.unloadModel('m');
    expect(server.requests[0]?.method).toBe('POST');
    expect(server.requests[0]?.body.length).toBe(0);
    expect(server.requests[1]?.body.toString()).toBe('{"parameters":{"unload_dependents":false}}');
  });
});
