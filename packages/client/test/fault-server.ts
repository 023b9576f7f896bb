/**
 * An in-process `node:http` server used ONLY to provoke faults a real Triton (or the embedded
 * server) cannot be made to produce on demand: hangs, connection resets, garbage bodies, scripted
 * 503s. Every functional behaviour is tested against the real embedded server in
 * packages/conformance.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted reply; called with the request and its full body. */
export type FaultHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

/** A running fault server. */
export interface FaultServer {
  readonly url: string;
  /** Requests seen so far (method + url + headers). */
  readonly requests: { method: string; url: string; headers: IncomingMessage['headers']; body: Buffer }[];
  close(): Promise<void>;
}

/** Starts a fault server on 127.0.0.1, port 0; `handlers[i]` answers request i (the last repeats). */
export async function startFaultServer(...handlers: FaultHandler[]): Promise<FaultServer> {
  const requests: FaultServer['requests'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const handler = handlers[Math.min(requests.length - 1, handlers.length - 1)];
      handler?.(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Replies with a status and a body. */
export function reply(status: number, body = '', headers: Record<string, string> = {}): FaultHandler {
  return (_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };
}

/** Never replies. */
export const hang: FaultHandler = () => undefined;

/** Destroys the connection without a response. */
export const reset: FaultHandler = (req) => {
  req.socket.destroy();
};
