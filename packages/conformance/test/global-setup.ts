/**
 * Starts the embedded server once for the whole suite (explicit model control, every model loaded,
 * port 0), unless TRITON_URL points at a running server, which must then serve the same test model
 * repository (see README).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    tritonUrl: string;
    embedded: boolean;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.TRITON_URL;
  if (external !== undefined && external !== '') {
    project.provide('tritonUrl', external);
    project.provide('embedded', false);
    return () => Promise.resolve();
  }
  const { startServer } = await import('@tritonserver-ts/server');
  const { writeTestModelRepository } = await import('@tritonserver-ts/server/testing');
  const dir = await mkdtemp(join(tmpdir(), 'conformance-models-'));
  await writeTestModelRepository(dir);
  const server = await startServer({
    modelRepositories: [dir],
    httpPort: 0,
    modelControlMode: 'explicit',
    loadModels: ['*'],
    // The shared-memory cases register regions: like Triton (26.05+), that needs --allow-client-shm.
    allowClientShm: true,
    logSink: () => undefined,
  });
  project.provide('tritonUrl', server.url);
  project.provide('embedded', true);
  return async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  };
}
