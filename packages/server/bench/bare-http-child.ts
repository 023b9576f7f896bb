/**
 * Bench helper: the bare HTTP floor. A `node:http` server with no inference server behind it: every
 * POST body is read to the end and joined, and the answer is a fixed binary-data response shaped as
 * the identity model's (FP32 `OUTPUT0` [1,16]: a JSON header plus 64 bytes). No parsing, no model,
 * no scheduler: what a Node HTTP server costs per request on this host. With arguments
 * `<reply-file> <json-header-length>` it answers that file's bytes instead (e.g. a real `simple`
 * response, so the floor sends the same bytes as the server). Prints `{"port":N}` on stdout once
 * listening; exits on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';

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

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    // Joined as a server would before parsing it.
    Buffer.concat(chunks);
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
