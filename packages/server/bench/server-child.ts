/**
 * Bench helper: runs the embedded server in its own process (so its RSS is measured alone) on the
 * model repository given as argv[2]. Prints `{"port":N}` on stdout once listening; exits on SIGTERM.
 */
import { applyHeapGrowingPercent } from '@tritonserver-ts/protocol';

import { DEFAULT_GRPC_FLOW_CONTROL } from '../src/grpc/flow-control.js';
import { createInstances } from '../src/runtime/backends.js';
import { builtinBackends, createWorkerInstances } from '../src/runtime/index.js';
import { startServer } from '../src/start.js';

// As the `tritonserver-ts` command does (TRITONSERVER_TS_HEAP_GROWING_PERCENT=0: V8's own heuristics).
applyHeapGrowingPercent();

const repository = process.argv[2];
// `main`: sessions on the main thread (runtime createInstances); `worker`: the core's default (one
// worker thread per onnxruntime instance, tiny executions inline); `worker-only`: every execution in
// the worker (no inline executions, as before issue 11's inline policy).
const hosting = process.argv[3] ?? 'worker';
if (repository === undefined) {
  process.stderr.write('usage: server-child.ts <model-repository>\n');
  process.exit(2);
}
const running = await startServer({
  modelRepositories: [repository],
  httpPort: 0,
  httpAddress: '127.0.0.1',
  // For bench/grpc-food-suite.ts: the gRPC front end too, on a free port.
  ...(process.env.BENCH_GRPC === '1' ? { grpcPort: 0, grpcAddress: '127.0.0.1' } : {}),
  // BENCH_GRPC_WINDOWS=1: the gRPC front end with the 4 MiB / 16 MiB HTTP/2 receive windows (src/grpc/flow-control.ts).
  ...(process.env.BENCH_GRPC_WINDOWS === '1' ? { grpc: { flowControl: DEFAULT_GRPC_FLOW_CONTROL } } : {}),
  exitOnError: true,
  log: { log_info: false, log_warning: false },
  logSink: (line) => process.stderr.write(`${line}\n`),
  // For bench/cache-suite.ts: a response cache (`--cache-config local,size=$BENCH_CACHE_SIZE`).
  ...(process.env.BENCH_CACHE_SIZE !== undefined
    ? { responseCache: { name: 'local', settings: { size: process.env.BENCH_CACHE_SIZE } } }
    : {}),
  // For bench/profile.ts --trace: every request traced (Triton's TIMESTAMPS level) into this file.
  ...(process.env.BENCH_TRACE_FILE !== undefined
    ? { trace: { trace_file: process.env.BENCH_TRACE_FILE, trace_level: ['TIMESTAMPS'], trace_rate: '1' } }
    : {}),
  ...(hosting === 'main'
    ? {
        services: {
          createInstances: (...args: Parameters<typeof createInstances>) =>
            createInstances(args[0], args[1], { ...args[2], backends: builtinBackends }),
        },
      }
    : {}),
  ...(hosting === 'worker-only'
    ? {
        services: {
          createInstances: (...args: Parameters<typeof createInstances>) =>
            createWorkerInstances(args[0], args[1], args[2], { inline: false }),
        },
      }
    : {}),
});
process.stdout.write(
  `${JSON.stringify({ port: running.httpPort, ...(running.grpcPort !== undefined ? { grpcPort: running.grpcPort } : {}) })}\n`,
);
if (process.env.BENCH_MEMORY_USAGE === '1') {
  // For bench/profile.ts: where the memory is (MiB), once a second on stderr.
  setInterval(() => {
    const m = process.memoryUsage();
    const mb = (n: number): string => (n / 1048576).toFixed(1);
    process.stderr.write(
      `memoryUsage rss ${mb(m.rss)} heapTotal ${mb(m.heapTotal)} heapUsed ${mb(m.heapUsed)} external ${mb(m.external)} arrayBuffers ${mb(m.arrayBuffers)}\n`,
    );
  }, 1000).unref();
}
process.on('SIGTERM', () => {
  void running.close().then(() => process.exit(0));
});
