/**
 * Test helper: the embedded server in-process, with the generated test models and identity models
 * of known cost (execution delay, batching, instance count) written into a temporary repository.
 * Every perf test that needs a server uses it.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startServer, type RunningServer } from '@tritonserver-ts/server';
import {
  writePythonModels,
  writeTestModelRepository,
  type GeneratedPythonModel,
} from '@tritonserver-ts/server/testing';

/** An identity-backend model (`OUTPUT<n>` = `INPUT<n>`) whose execution time is known. */
export interface IdentityModelSpec {
  readonly name: string;
  /** `execute_delay_ms`: every execution sleeps this long (default 0). */
  readonly delayMs?: number;
  /** `max_batch_size` (default 8; 0 = no batching). */
  readonly maxBatchSize?: number;
  /** `dynamic_batching { … }` (true = with defaults). */
  readonly dynamicBatching?:
    boolean | { readonly preferredBatchSize?: readonly number[]; readonly maxQueueDelayUs?: number };
  /** `instance_group [ { kind: KIND_CPU count: n } ]` (default 1). */
  readonly instances?: number;
  /** Datatype without `TYPE_` (default FP32). */
  readonly datatype?: string;
  /** Dims without the batch dimension (default [-1]). */
  readonly dims?: readonly number[];
  /** Number of INPUT<n>/OUTPUT<n> pairs (default 1). */
  readonly pairs?: number;
}

/** What {@link startEmbedded} starts. */
export interface EmbeddedOptions {
  /** Models of `writeTestModelRepository` to write (default none). */
  readonly testModels?: readonly string[];
  /** Identity models to write. */
  readonly identity?: readonly IdentityModelSpec[];
  /** Python models to write (set TRITONSERVER_TS_PYTHON=/usr/bin/python3 to run them). */
  readonly python?: readonly GeneratedPythonModel[];
  /** Models to load (default: every model written). */
  readonly load?: readonly string[];
  /** `--allow-client-shm` (default true: perf's `--shared-memory system` registers regions). */
  readonly allowClientShm?: boolean;
  /** Start a metrics server (default true). */
  readonly metrics?: boolean;
}

/** A running embedded server. */
export interface Embedded {
  readonly server: RunningServer;
  /** `http://127.0.0.1:port` */
  readonly url: string;
  /** `127.0.0.1:port` */
  readonly grpcUrl: string;
  /** `http://127.0.0.1:port/metrics` ('' without a metrics server). */
  readonly metricsUrl: string;
  /** The temporary model repository. */
  readonly repository: string;
  /** Stops the server and removes the repository. Idempotent. */
  close(): Promise<void>;
}

/** The `config.pbtxt` of an identity model. */
export function identityConfig(spec: IdentityModelSpec): string {
  const datatype = `TYPE_${spec.datatype ?? 'FP32'}`;
  const dims = (spec.dims ?? [-1]).join(', ');
  const pairs = spec.pairs ?? 1;
  const tensors = (kind: 'INPUT' | 'OUTPUT'): string =>
    Array.from(
      { length: pairs },
      (_, i) => `  { name: "${kind}${i}" data_type: ${datatype} dims: [ ${dims} ] }`,
    ).join(',\n');
  let text = `name: "${spec.name}"\nbackend: "identity"\nmax_batch_size: ${spec.maxBatchSize ?? 8}\n`;
  text += `input [\n${tensors('INPUT')}\n]\noutput [\n${tensors('OUTPUT')}\n]\n`;
  text += `instance_group [ { kind: KIND_CPU count: ${spec.instances ?? 1} } ]\n`;
  const db = spec.dynamicBatching;
  if (db === true) text += 'dynamic_batching { }\n';
  else if (db !== undefined && db !== false) {
    const preferred =
      db.preferredBatchSize !== undefined
        ? ` preferred_batch_size: [ ${db.preferredBatchSize.join(', ')} ]`
        : '';
    const delay =
      db.maxQueueDelayUs !== undefined ? ` max_queue_delay_microseconds: ${db.maxQueueDelayUs}` : '';
    text += `dynamic_batching {${preferred}${delay} }\n`;
  }
  if ((spec.delayMs ?? 0) > 0) {
    text += `parameters { key: "execute_delay_ms" value { string_value: "${spec.delayMs}" } }\n`;
  }
  return text;
}

/** Starts the embedded server (HTTP, gRPC and metrics on free ports) with the chosen models. */
export async function startEmbedded(options: EmbeddedOptions = {}): Promise<Embedded> {
  const repository = await mkdtemp(join(tmpdir(), 'perf-'));
  const names: string[] = [];
  if (options.testModels !== undefined && options.testModels.length > 0) {
    await writeTestModelRepository(repository, { only: options.testModels });
    names.push(...options.testModels);
  }
  for (const spec of options.identity ?? []) {
    await mkdir(join(repository, spec.name, '1'), { recursive: true });
    await writeFile(join(repository, spec.name, 'config.pbtxt'), identityConfig(spec));
    await writeFile(join(repository, spec.name, '1', '.keep'), '');
    names.push(spec.name);
  }
  if (options.python !== undefined) {
    await writePythonModels(repository, options.python);
    names.push(...options.python.map((m) => m.name));
  }
  let server: RunningServer;
  try {
    server = await startServer({
      modelRepositories: [repository],
      modelControlMode: 'explicit',
      loadModels: options.load ?? names,
      httpPort: 0,
      grpcPort: 0,
      ...(options.metrics === false ? {} : { metricsPort: 0 }),
      allowClientShm: options.allowClientShm ?? true,
      exitOnError: true,
      logSink: () => undefined,
    });
  } catch (error) {
    await rm(repository, { recursive: true, force: true });
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    server,
    url: server.url,
    grpcUrl: server.grpcUrl,
    metricsUrl: server.metricsUrl ?? '',
    repository,
    close: () => {
      closed ??= (async () => {
        await server.close();
        await rm(repository, { recursive: true, force: true });
      })();
      return closed;
    },
  };
}
