/**
 * HTTP/2 receive windows of the gRPC front end (`src/grpc/flow-control.ts`, issue 31): absent, a
 * connection gets HTTP/2's 65,535-byte windows (grpc-js's); with `flowControl`, the server's
 * SETTINGS carry the stream window and the connection window is opened to the asked size, and
 * image-sized calls go through.
 */
import { connect, type ClientHttp2Session } from 'node:http2';

import { afterEach, describe, expect, it } from 'vitest';

import { DEFAULT_GRPC_FLOW_CONTROL } from '../../src/grpc/flow-control.js';
import { GrpcTestClient, startGrpcTestServer } from './helpers.js';

type Server = Awaited<ReturnType<typeof startGrpcTestServer>>;
const servers: Server[] = [];
const sessions: ClientHttp2Session[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The server's settings and window as a fresh HTTP/2 client sees them once they have arrived. */
async function windowsOf(server: Server): Promise<{ stream: number; connection: number }> {
  const session = connect(`http://${server.grpcTarget}`);
  sessions.push(session);
  await new Promise<void>((resolve) => session.once('remoteSettings', () => resolve()));
  // The connection's WINDOW_UPDATE follows the SETTINGS frames; a ping's answer comes after it.
  await new Promise<void>((resolve) => session.ping(() => resolve()));
  return {
    stream: session.remoteSettings.initialWindowSize ?? NaN,
    connection: session.state.remoteWindowSize ?? NaN,
  };
}

describe('gRPC HTTP/2 receive windows', () => {
  it('are HTTP/2’s 64 KiB unless asked for', async () => {
    const server = await startGrpcTestServer({ only: ['identity_fp32'] });
    servers.push(server);
    expect(await windowsOf(server)).toEqual({ stream: 65_535, connection: 65_535 });
  });

  it('are the asked sizes with flowControl, and image-sized calls go through', async () => {
    const server = await startGrpcTestServer({
      only: ['identity_fp32'],
      grpc: { flowControl: DEFAULT_GRPC_FLOW_CONTROL },
    });
    servers.push(server);
    expect(await windowsOf(server)).toEqual({
      stream: DEFAULT_GRPC_FLOW_CONTROL.streamWindowBytes,
      connection: DEFAULT_GRPC_FLOW_CONTROL.connectionWindowBytes,
    });
    const client = new GrpcTestClient(server.grpcTarget);
    try {
      const n = 150_528;
      const values = Float32Array.from({ length: n }, (_, i) => i);
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          client.call<{ rawOutputContents: Uint8Array[] }>('ModelInfer', {
            modelName: 'identity_fp32',
            inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, BigInt(n)] }],
            rawInputContents: [new Uint8Array(values.buffer)],
          }),
        ),
      );
      for (const a of answers) {
        expect(
          Buffer.compare(Buffer.from(a.rawOutputContents[0] as Uint8Array), Buffer.from(values.buffer)),
        ).toBe(0);
      }
    } finally {
      client.close();
    }
  });
});
