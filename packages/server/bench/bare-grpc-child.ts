/**
 * Bench helper: the bare gRPC floor (bench/grpc-food-suite.ts). A grpc-js server with no inference
 * server behind it: `ModelInfer` takes the request message as grpc-js hands it over (reassembled,
 * not decoded) and answers a fixed reply, the bytes of a real `ModelInferResponse` (argv[2]). Every
 * other method of `inference.GRPCInferenceService` (metadata, config, statistics) is forwarded as
 * raw bytes to the real server's gRPC port (argv[3]), for a load generator that asks for them first.
 * The server is built with the same channel options and message join as the embedded server's
 * (`channelOptions` of `src/grpc/server.ts`, `src/grpc/aligned-messages.ts`; with
 * `BENCH_GRPC_WINDOWS=1` the receive windows of `src/grpc/flow-control.ts`), and an HTTP port answers `GET /` with how many
 * `ModelInfer` calls it has answered. Prints `{"port":N,"countPort":M}` once listening; exits on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { Http2Server } from 'node:http2';

import { Client, Server, ServerCredentials, credentials, type ServiceDefinition } from '@grpc/grpc-js';
import { applyHeapGrowingPercent } from '@tritonserver-ts/protocol';
import { serviceDefinition } from '@tritonserver-ts/protocol/grpc';

import { installAlignedMessages } from '../src/grpc/aligned-messages.js';
import { applyFlowControl } from '../src/grpc/flow-control.js';
import { channelOptions } from '../src/grpc/server.js';

// The same V8 heap growth as the server's processes (`applyHeapGrowingPercent`), so the floor is
// measured with the settings the server runs with.
applyHeapGrowingPercent();

const replyFile = process.argv[2];
const upstreamPort = process.argv[3];
if (replyFile === undefined || upstreamPort === undefined) {
  process.stderr.write('usage: bare-grpc-child.ts <reply-file> <upstream-grpc-port>\n');
  process.exit(2);
}
const reply = readFileSync(replyFile);
const upstream = new Client(`127.0.0.1:${upstreamPort}`, credentials.createInsecure(), {
  'grpc.max_receive_message_length': -1,
});
const raw = (b: Buffer): Buffer => b;
let answered = 0;

const definition: Record<string, ServiceDefinition[string]> = {};
const handlers: Record<string, unknown> = {};
for (const [key, method] of Object.entries(
  serviceDefinition as Record<
    string,
    { path: string; requestStream: boolean; responseStream: boolean; originalName?: string }
  >,
)) {
  if (method.requestStream || method.responseStream) continue;
  definition[key] = {
    path: method.path,
    requestStream: false,
    responseStream: false,
    requestSerialize: raw,
    requestDeserialize: raw,
    responseSerialize: raw,
    responseDeserialize: raw,
  };
  handlers[key] = method.path.endsWith('/ModelInfer')
    ? (_call: unknown, callback: (e: null, r: Buffer) => void) => {
        answered += 1;
        callback(null, reply);
      }
    : (call: { request: Buffer }, callback: (e: Error | null, r?: Buffer) => void) => {
        upstream.makeUnaryRequest(method.path, raw, raw, call.request, (error, value) =>
          callback(error, value),
        );
      };
}

// The server's message join too (src/grpc/aligned-messages.ts), so the floor's receive path is the server's.
installAlignedMessages();
const server = new Server(channelOptions({ host: '127.0.0.1', port: 0 }));
server.addService(definition as ServiceDefinition, handlers as never);
const port = await new Promise<number>((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
    error === null ? resolve(bound) : reject(error),
  ),
);
// BENCH_GRPC_WINDOWS=1: the 4 MiB / 16 MiB receive windows the server may be given (src/grpc/flow-control.ts);
// grpc-js keeps its HTTP/2 servers to itself, as src/grpc/server.ts reads them.
if (process.env.BENCH_GRPC_WINDOWS === '1') {
  const http2Servers = (server as unknown as { http2Servers: Map<Http2Server, unknown> }).http2Servers;
  for (const h of http2Servers.keys()) applyFlowControl(h);
}
const counter = http.createServer((_req, res) => res.end(JSON.stringify({ count: answered })));
await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
const countAddress = counter.address();
process.stdout.write(
  `${JSON.stringify({ port, countPort: typeof countAddress === 'object' ? countAddress?.port : 0 })}\n`,
);
process.on('SIGTERM', () => {
  server.forceShutdown();
  counter.close(() => process.exit(0));
});
