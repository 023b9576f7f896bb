/**
 * Starts the real server (real onnxruntime, generated test models) on 127.0.0.1 port 0.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  decodeInferResponse,
  encodeInferRequest,
  type DecodedInferResponse,
  type InferRequestOptions,
} from '@tritonserver-ts/protocol/http';
import { type InferInput } from '@tritonserver-ts/protocol';

import { startServer, type RunningServer, type StartServerOptions } from '../../src/index.js';
import { writeTestModelRepository } from '../../src/testing/index.js';

export interface TestServer {
  readonly running: RunningServer;
  readonly url: string;
  readonly repository: string;
  readonly logs: string[];
  close(): Promise<void>;
}

/** Writes the generated test models (optionally only some) into a fresh temp directory. */
export async function makeRepository(only?: readonly string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-test-'));
  await writeTestModelRepository(dir, only === undefined ? {} : { only });
  return dir;
}

/** Options of {@link startTestServer} beyond the server's own. */
export interface TestServerOptions extends Partial<StartServerOptions> {
  /** Only these generated test models (default: all of them); ignored when `fill` is given. */
  readonly only?: readonly string[];
  /** Fills the fresh repository directory instead of writing the generated test models. */
  readonly fill?: (repository: string) => Promise<void>;
}

/** Starts a server on a free port over a fresh test repository (removed again by `close`). */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const { only, fill, ...rest } = options;
  let repository: string;
  if (fill === undefined) repository = await makeRepository(only);
  else {
    repository = await mkdtemp(join(tmpdir(), 'tritonserver-ts-test-'));
    await fill(repository);
  }
  const logs: string[] = [];
  const running = await startServer({
    modelRepositories: [repository],
    httpPort: 0,
    logSink: (line) => logs.push(line),
    ...rest,
  });
  return {
    running,
    url: running.url,
    repository,
    logs,
    async close() {
      await running.close();
      await rm(repository, { recursive: true, force: true });
    },
  };
}

/** POSTs an inference request encoded by the shared codec and decodes the response. */
export async function infer(
  url: string,
  model: string,
  inputs: readonly InferInput[],
  options: InferRequestOptions & { version?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; response: Response; decoded?: DecodedInferResponse; error?: string }> {
  const encoded = encodeInferRequest(inputs, options);
  const headers: Record<string, string> = { ...options.headers };
  if (encoded.headerLength !== undefined)
    headers['Inference-Header-Content-Length'] = String(encoded.headerLength);
  const path =
    options.version === undefined
      ? `/v2/models/${model}/infer`
      : `/v2/models/${model}/versions/${options.version}/infer`;
  const response = await fetch(url + path, { method: 'POST', headers, body: encoded.body });
  const body = new Uint8Array(await response.arrayBuffer());
  if (response.status !== 200) {
    return {
      status: response.status,
      response,
      error: (JSON.parse(Buffer.from(body).toString()) as { error: string }).error,
    };
  }
  const decoded = decodeInferResponse(body, response.headers.get('inference-header-content-length'));
  return { status: response.status, response, decoded };
}

/** Sends raw bytes and returns status + parsed JSON error (if any). */
export async function post(
  url: string,
  path: string,
  body: Uint8Array | string | undefined,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const response = await fetch(url + path, {
    method: 'POST',
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** GETs a path. */
export async function get(
  url: string,
  path: string,
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const response = await fetch(url + path);
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}
