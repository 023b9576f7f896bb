/**
 * Bench helper: the bare HTTP floor. A `node:http` server with no inference server behind it: every
 * POST body is read to the end and joined, and the answer is a fixed binary-data response shaped as
 * the identity model's (FP32 `OUTPUT0` [1,16]: a JSON header plus 64 bytes). No parsing, no model,
 * no scheduler: what a Node HTTP server costs per request on this host. With arguments
 * `<reply-file> <json-header-length>` it answers that file's bytes instead (e.g. a real `simple`
 * response, so the floor sends the same bytes as the server). Prints `{"port":N}` on stdout once
 * listening; exits on SIGTERM. With a third argument `<port>`, every request other than a POST is
 * forwarded to that port (a real server's metadata and config, for a load generator that asks for
 * them first), and `GET /bench/count` answers how many POSTs it has answered (bench/grpc-food-suite.ts).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';

import { applyHeapGrowingPercent } from '@tritonserver-ts/protocol';

// The same V8 heap growth as the server's processes (`applyHeapGrowingPercent`), so the floor is
// measured with the settings the server runs with.
applyHeapGrowingPercent();

const replyFile = process.argv[2];
const identityHeader = Buffer.from(
  JSON.stringify({
    model_name: 'identity',
    model_version: '1',
    outputs: [
      {
        name: 'OUTPUT0',
        datatype: 'FP32',
        shape: [1, 16],
        parameters: { binary_data_size: 64 },
      },
    ],
  }),
);
const reply =
  replyFile === undefined ? Buffer.concat([identityHeader, Buffer.alloc(64)]) : readFileSync(replyFile);
const headerLength =
  replyFile === undefined ? identityHeader.byteLength : Number(process.argv[3] ?? reply.byteLength);

const proxyPort = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
let answered = 0;

/** Forwards a non-POST request to the real server at {@link proxyPort}. */
function forward(req: http.IncomingMessage, res: http.ServerResponse): void {
  const upstream = http.request(
    { host: '127.0.0.1', port: proxyPort, path: req.url, method: req.method, headers: req.headers },
    (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    },
  );
  upstream.on('error', () => res.writeHead(502).end());
  req.pipe(upstream);
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/bench/count') {
    res.end(JSON.stringify({ count: answered }));
    return;
  }
  if (proxyPort !== undefined && req.method !== 'POST') {
    forward(req, res);
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    // Joined as a server would before parsing it.
    Buffer.concat(chunks);
    answered += 1;
    res.writeHead(200, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': reply.byteLength,
      'Inference-Header-Content-Length': headerLength,
    });
    res.end(reply);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' ? address?.port : 0 })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
