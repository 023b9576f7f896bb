/**
 * `client.generate` and `client.generateStream` (Triton's generate extension over HTTP) against the
 * real embedded server and its Python backend (`/usr/bin/python3`): a decoupled model's responses
 * as events, a non-decoupled model's one, errors before the first event as `infer` gives them, an
 * in-band error after it, and a stream stopped by the caller (break, abort, timeout) reaching the
 * model's `is_cancelled()`. Retry policy against scripted 503s (the fault server, as for `infer`).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TritonClient } from '../src/client.js';
import {
  TritonAbortError,
  TritonInvalidArgumentError,
  TritonServerError,
  TritonTimeoutError,
} from '../src/errors.js';
import { createGrpcClient } from '../src/grpc/index.js';
import type { GenerateResponse } from '../src/generate.js';
import { reply, startFaultServer } from './fault-server.js';

// Loaded by name so the client package does not depend on the server (the server depends on it).
const serverModule = '@tritonserver-ts/server';
const testingModule = '@tritonserver-ts/server/testing';

interface GeneratedModel {
  readonly name: string;
  readonly files: Record<string, string>;
}

/** A decoupled INT32 IN [1] → INT32 OUT [1] Python model whose `respond(request, sender, n)` is `body`. */
function decoupledModel(name: string, body: string): GeneratedModel {
  return {
    name,
    files: {
      'config.pbtxt': `name: "${name}"
backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`,
      '1/model.py': `import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL


def out(i):
    return pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUT", np.array([i], dtype=np.int32))])


def respond(request, sender, n):
${body}


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            n = int(pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()[0])
            threading.Thread(target=respond, args=(request, request.get_response_sender(), n), daemon=True).start()
        return None
`,
    },
  };
}

/** Sends OUT = 0, then an error (in-band) with the final flag. */
const thenError = decoupledModel(
  'py_then_error',
  `    sender.send(out(0))
    time.sleep(0.05)
    sender.send(pb_utils.InferenceResponse(error=pb_utils.TritonError("broke after one response")), flags=FINAL)`,
);

/**
 * Sends OUT = i every 50 ms up to n, checking is_cancelled() before each; when cancelled it logs
 * how far it got (the server's log is the test's witness) and ends the request.
 */
const cancellable = decoupledModel(
  'py_cancellable',
  `    for i in range(n):
        if sender.is_cancelled():
            pb_utils.Logger.log_info(f"py_cancellable: request '{request.request_id()}' cancelled after {i} responses")
            sender.send(pb_utils.InferenceResponse(error=pb_utils.TritonError("cancelled", pb_utils.TritonError.CANCELLED)), flags=FINAL)
            return
        sender.send(out(i))
        time.sleep(0.05)
    sender.send(flags=FINAL)`,
);

let repo: string;
let server: { readonly url: string; readonly grpcUrl: string; close(): Promise<void> };
let client: TritonClient;
const logs: string[] = [];

beforeAll(async () => {
  const { startServer } = (await import(serverModule)) as {
    startServer: (options: Record<string, unknown>) => Promise<typeof server>;
  };
  const { decoupledPythonModel, addSubPythonModel, writePythonModels } = (await import(testingModule)) as {
    decoupledPythonModel: (name?: string) => GeneratedModel;
    addSubPythonModel: (name?: string) => GeneratedModel;
    writePythonModels: (repository: string, models: readonly GeneratedModel[]) => Promise<void>;
  };
  repo = await mkdtemp(join(tmpdir(), 'client-generate-'));
  await writePythonModels(repo, [decoupledPythonModel(), addSubPythonModel(), thenError, cancellable]);
  server = await startServer({
    modelRepositories: [repo],
    httpPort: 0,
    grpcPort: 0,
    python: { interpreter: '/usr/bin/python3' },
    logSink: (line: string) => logs.push(line),
  });
  client = new TritonClient({ url: server.url });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await server?.close();
  if (repo !== undefined) await rm(repo, { recursive: true, force: true });
});

async function collect(stream: AsyncIterable<GenerateResponse>): Promise<GenerateResponse[]> {
  const out: GenerateResponse[] = [];
  for await (const response of stream) out.push(response);
  return out;
}

/** Waits (up to 5 s) for the server log line saying `id` was cancelled; returns it. */
async function cancelledLine(id: string): Promise<string | undefined> {
  const find = () => logs.find((l) => l.includes(`py_cancellable: request '${id}' cancelled after`));
  const deadline = Date.now() + 5_000;
  while (find() === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return find();
}

const responsesBefore = (line: string | undefined): number =>
  Number(/after (\d+) responses/.exec(line ?? '')?.[1]);

describe('client.generateStream against the embedded server', () => {
  it('a decoupled model: one event per response, single-element outputs as scalars, the id echoed', async () => {
    const events = await collect(client.generateStream('py_decoupled', { IN: 3 }, { requestId: 'three' }));
    expect(events).toEqual(
      [0, 1, 2].map((i) => ({
        modelName: 'py_decoupled',
        modelVersion: '1',
        id: 'three',
        values: { OUT: i },
      })),
    );
  });

  it('zero responses (the final flag alone) is an empty stream', async () => {
    expect(await collect(client.generateStream('py_decoupled', { IN: 0 }))).toEqual([]);
  });

  it('a model that is not decoupled: its one response as the only event', async () => {
    const events = await collect(
      client.generateStream(
        'py_add',
        { INPUT0: [1, 2, 3, 4], INPUT1: [10, 20, 30, 40] },
        { modelVersion: 1 },
      ),
    );
    expect(events).toHaveLength(1);
    expect(events[0]?.values).toMatchObject({ OUTPUT0: [11, 22, 33, 44], OUTPUT1: [-9, -18, -27, -36] });
  });

  it('an error before the first event is the error infer gives (status, message)', async () => {
    const inferError = await client
      .infer('no_such_model', [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(1) }])
      .catch((e: unknown) => e);
    const streamError = await collect(client.generateStream('no_such_model', { IN: 1 })).catch(
      (e: unknown) => e,
    );
    expect(streamError).toBeInstanceOf(TritonServerError);
    expect(inferError).toBeInstanceOf(TritonServerError);
    const s = streamError as TritonServerError;
    const i = inferError as TritonServerError;
    expect([s.status, s.reason, s.message, s.transport]).toEqual([i.status, i.reason, i.message, 'http']);
  });

  it('an in-band {"error": …} after the first event is thrown from the iterator as TritonServerError', async () => {
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const response of client.generateStream('py_then_error', { IN: 1 }))
        seen.push(response.values.OUT);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([0]);
    expect(error).toBeInstanceOf(TritonServerError);
    expect((error as TritonServerError).message).toBe('broke after one response');
    expect((error as TritonServerError).reason).toBe('UNKNOWN');
  });

  it('break out of for await: the request is cancelled and the model sees is_cancelled()', async () => {
    const started = Date.now();
    const seen: unknown[] = [];
    for await (const response of client.generateStream(
      'py_cancellable',
      { IN: 200 },
      { requestId: 'break' },
    )) {
      seen.push(response.values.OUT);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual([0, 1]);
    const line = await cancelledLine('break');
    expect(line, logs.slice(-10).join('\n')).toBeDefined();
    // Cancelled within a few responses of the break (200 would take 10 s).
    expect(responsesBefore(line)).toBeLessThan(10);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('aborting the signal mid-stream throws TritonAbortError and cancels the model’s request', async () => {
    const controller = new AbortController();
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const response of client.generateStream(
        'py_cancellable',
        { IN: 200 },
        { requestId: 'abort', signal: controller.signal },
      )) {
        seen.push(response.values.OUT);
        if (seen.length === 3) controller.abort();
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TritonAbortError);
    expect(seen).toEqual([0, 1, 2]);
    expect(responsesBefore(await cancelledLine('abort'))).toBeLessThan(10);
  });

  it('timeoutMs bounds the whole stream: TritonTimeoutError, and the model’s request is cancelled', async () => {
    const started = performance.now();
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const response of client.generateStream(
        'py_cancellable',
        { IN: 200 },
        { requestId: 'timeout', timeoutMs: 400 },
      )) {
        seen.push(response.values.OUT);
      }
    })().catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(TritonTimeoutError);
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(3_000);
    expect(seen.length).toBeGreaterThan(0);
    expect(responsesBefore(await cancelledLine('timeout'))).toBeLessThan(20);
  });

  it('an already aborted signal sends nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      collect(client.generateStream('py_decoupled', { IN: 1 }, { signal: controller.signal })),
    ).rejects.toBeInstanceOf(TritonAbortError);
  });
});

describe('client.generate against the embedded server', () => {
  it('returns the one response object', async () => {
    const answer = await client.generate(
      'py_add',
      { INPUT0: [1, 2, 3, 4], INPUT1: [1, 1, 1, 1] },
      { requestId: 'g' },
    );
    expect(answer).toMatchObject({ modelName: 'py_add', modelVersion: '1', id: 'g' });
    expect(answer.values).toMatchObject({ OUTPUT0: [2, 3, 4, 5], OUTPUT1: [0, 1, 2, 3] });
  });

  it('a decoupled model with exactly one response answers it; with several, Triton’s error', async () => {
    expect((await client.generate('py_decoupled', { IN: 1 })).values).toEqual({ OUT: 0 });
    const error = await client.generate('py_decoupled', { IN: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TritonServerError);
    expect((error as TritonServerError).message).toBe(
      'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses',
    );
  });

  it('an input named like a member of the request itself is refused before sending', async () => {
    await expect(client.generate('py_add', { parameters: 1 })).rejects.toBeInstanceOf(
      TritonInvalidArgumentError,
    );
  });

  it('over gRPC there is no generate extension: a TritonInvalidArgumentError that says so', async () => {
    const grpc = createGrpcClient({ url: server.grpcUrl });
    try {
      await expect(grpc.generate('py_decoupled', { IN: 1 })).rejects.toThrow(
        /generate extension is HTTP only/,
      );
      await expect(collect(grpc.generateStream('py_decoupled', { IN: 1 }))).rejects.toBeInstanceOf(
        TritonInvalidArgumentError,
      );
    } finally {
      await grpc.close();
    }
  });
});

describe('the README example', () => {
  it('examples/decoupled-both.ts consumes the same decoupled model over HTTP and gRPC alike', async () => {
    const example = fileURLToPath(new URL('../examples/decoupled-both.ts', import.meta.url));
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', example, server.url, server.grpcUrl, 'py_decoupled'],
        { cwd: fileURLToPath(new URL('..', import.meta.url)), timeout: 30_000 },
        (error, stdout, stderr) =>
          error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)),
      );
    });
    expect(out.trim().split('\n')).toEqual(['http 0 1 2', 'grpc 0 1 2']);
  });
});

describe('generate retry policy (scripted 503s)', () => {
  const sse = 'data: {"model_name":"m","model_version":"1","OUT":7}\n\n';
  const ok = (_req: unknown, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    res.end(sse);
  };
  const fast = { retryDelayMs: 1, maxRetryDelayMs: 20 } as const;

  it('generate and generateStream are not retried on 503 unless retry: true', async () => {
    const fault = await startFaultServer(reply(503, '{"error":"busy"}'), ok);
    const c = new TritonClient({ url: fault.url, ...fast });
    try {
      await expect(collect(c.generateStream('m', { IN: 1 }))).rejects.toMatchObject({
        status: 503,
        message: 'busy',
      });
      expect(fault.requests).toHaveLength(1);
      expect(await collect(c.generateStream('m', { IN: 1 }))).toEqual([
        { modelName: 'm', modelVersion: '1', values: { OUT: 7 } },
      ]);
    } finally {
      await c.close();
      await fault.close();
    }
  });

  it('retry: true retries a 503 before the first event', async () => {
    const fault = await startFaultServer(reply(503, '{"error":"busy"}', { 'retry-after': '0' }), ok);
    const c = new TritonClient({ url: fault.url, ...fast });
    try {
      const events = await collect(c.generateStream('m', { IN: 1 }, { retry: true }));
      expect(events.map((e) => e.values.OUT)).toEqual([7]);
      expect(fault.requests).toHaveLength(2);
      expect(fault.requests[1]?.url).toBe('/v2/models/m/generate_stream');
      expect(JSON.parse(fault.requests[1]?.body.toString() ?? '')).toEqual({ IN: 1 });
    } finally {
      await c.close();
      await fault.close();
    }
  });
});
