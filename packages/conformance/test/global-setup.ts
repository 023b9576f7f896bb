/**
 * Starts the embedded server once for the whole suite (explicit model control, every model loaded,
 * HTTP and gRPC each on a free port), unless TRITON_URL or TRITON_GRPC_URL points at a running
 * server, which must then serve the same test model repository (see README).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { externalTarget } from './external-target.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** HTTP endpoint: `http://host:port` (embedded) or TRITON_URL. */
    tritonUrl: string;
    /** gRPC endpoint: `host:port` (embedded) or TRITON_GRPC_URL. */
    tritonGrpcUrl: string;
    embedded: boolean;
    /** Where the suite reads the server's trace file (`--trace-config triton,file=…`). */
    traceFile: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = externalTarget(process.env);
  if (external !== undefined) {
    project.provide('tritonUrl', external.httpUrl);
    project.provide('tritonGrpcUrl', external.grpcUrl);
    project.provide('embedded', false);
    project.provide('traceFile', external.traceFile);
    return () => Promise.resolve();
  }
  const { startServer } = await import('@tritonserver-ts/server');
  const { writeConformanceRepository } = await import('../scripts/repository.js');
  const dir = await mkdtemp(join(tmpdir(), 'conformance-models-'));
  await writeConformanceRepository(dir);
  const traceDir = await mkdtemp(join(tmpdir(), 'conformance-trace-'));
  const traceFile = join(traceDir, 'trace.json');
  const server = await startServer({
    modelRepositories: [dir],
    httpPort: 0,
    // Both front ends over the one core, as `tritonserver-ts --grpc-port=…` serves them.
    grpcPort: 0,
    modelControlMode: 'explicit',
    loadModels: ['*'],
    // The shared-memory cases register regions: like Triton (26.05+), that needs --allow-client-shm.
    allowClientShm: true,
    // As the README's Triton: a trace file, so that the trace cases can turn tracing on.
    trace: { trace_file: traceFile },
    // As the README's Triton: a response cache (`--cache-config=local,size=1048576`), for its cases.
    responseCache: { name: 'local', settings: { size: '1048576' } },
    logSink: () => undefined,
  });
  project.provide('tritonUrl', server.url);
  project.provide('tritonGrpcUrl', server.grpcUrl);
  project.provide('embedded', true);
  project.provide('traceFile', traceFile);
  return async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
    await rm(traceDir, { recursive: true, force: true });
  };
}
