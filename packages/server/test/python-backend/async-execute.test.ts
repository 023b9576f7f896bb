/**
 * `async def execute` on the stub's event loop, as Triton runs it: a decoupled model's coroutines
 * run in the background, so requests in flight are served concurrently (and a short one overtakes a
 * long one); an exception of such a coroutine is logged with its traceback, and its requests still
 * open fail instead of waiting forever; the loop keeps running between calls (tasks a model started
 * go on); a non-decoupled coroutine's responses are returned, several requests per call.
 */
import type { ModelStreamInferResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { GeneratedPythonModel } from '../../src/testing/index.js';
import { asyncExecutePythonModel } from '../../src/testing/index.js';
import { GrpcTestClient } from '../grpc/helpers.js';
import { inferJson, outputData, startPythonServer, type PythonTestServer } from './helpers.js';

/** Counts ticks of an asyncio task started by its first execute; OUT = ticks so far. */
const ticker: GeneratedPythonModel = {
  name: 'py_ticker',
  files: {
    'config.pbtxt': `name: "py_ticker"\nbackend: "python"\nmax_batch_size: 0\ninput [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]\noutput [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]\ninstance_group [ { kind: KIND_CPU count: 1 } ]\n`,
    '1/model.py': `import asyncio

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.ticks = 0
        self.task = None

    async def tick(self):
        while True:
            await asyncio.sleep(0.02)
            self.ticks += 1

    async def execute(self, requests):
        if self.task is None:
            self.task = asyncio.create_task(self.tick())
        return [pb_utils.InferenceResponse([pb_utils.Tensor("OUT", np.array([self.ticks], dtype=np.int32))]) for _ in requests]
`,
  },
};

let server: PythonTestServer;
let client: GrpcTestClient;

beforeAll(async () => {
  server = await startPythonServer(
    [
      asyncExecutePythonModel('py_async'),
      asyncExecutePythonModel('py_async_plain', { decoupled: false }),
      ticker,
    ],
    { grpcPort: 0 },
  );
  client = new GrpcTestClient(server.running.grpcUrl);
}, 60_000);

afterAll(async () => {
  client.close();
  await server.close();
});

function waitRequest(model: string, seconds: number, id: string, rows = 1): object {
  return {
    modelName: model,
    id,
    inputs: [{ name: 'WAIT_SECONDS', datatype: 'FP32', shape: [BigInt(rows), 1n] }],
    rawInputContents: [new Uint8Array(new Float32Array(rows).fill(seconds).buffer)],
  };
}

/** Opens a stream; `arrivals` records each answer's request id and time since `t0`. */
function timedStream(t0: number) {
  const { stream, answers, done } = client.collectingStream();
  const arrivals: { id: string; ms: number; error: string }[] = [];
  stream.on('data', (m: ModelStreamInferResponse) =>
    arrivals.push({ id: m.inferResponse?.id ?? '', ms: Date.now() - t0, error: m.errorMessage }),
  );
  return { stream, answers, done, arrivals };
}

describe('decoupled async execute', () => {
  it('serves four requests in flight concurrently (one second each, all answered well within four)', async () => {
    const t0 = Date.now();
    const { stream, answers, done, arrivals } = timedStream(t0);
    // Eight rows each (max_batch_size 8): no two share an execute call, so only concurrent calls
    // answer them together.
    for (let i = 0; i < 4; i++) stream.write(waitRequest('py_async', 1, `c${i}`, 8));
    stream.end();
    await done;
    const took = Date.now() - t0;
    expect(answers.map((a) => a.errorMessage)).toEqual(['', '', '', '']);
    expect(arrivals.map((a) => a.id).sort()).toEqual(['c0', 'c1', 'c2', 'c3']);
    // Sequential execution needs at least 4 s.
    expect(took).toBeLessThan(2500);
  });

  it('a batch of four rows in one request: one response with four rows', async () => {
    const { stream, answers, done } = client.collectingStream();
    stream.write(waitRequest('py_async', 0.2, 'b', 4));
    stream.end();
    await done;
    expect(answers[0]?.inferResponse?.outputs[0]?.shape).toEqual([4n, 1n]);
  });

  it('a short request sent after a long one is answered first', async () => {
    const t0 = Date.now();
    const { stream, done, arrivals } = timedStream(t0);
    stream.write(waitRequest('py_async', 2, 'long'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    stream.write(waitRequest('py_async', 0.3, 'short'));
    stream.end();
    await done;
    expect(arrivals.map((a) => a.id)).toEqual(['short', 'long']);
    expect(arrivals[0]?.ms).toBeLessThan(1500);
  });

  it('an exception after the final flags is logged with its traceback', async () => {
    const { stream, answers, done } = client.collectingStream();
    stream.write(waitRequest('py_async', -1, 'neg'));
    stream.end();
    await done;
    expect(answers).toEqual([]);
    let line: string | undefined;
    for (let i = 0; i < 100 && line === undefined; i++) {
      line = server.logs.find((l) => l.includes('ValueError: wait seconds must not be negative'));
      if (line === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(line).toMatch(/^E.*Traceback \(most recent call last\):\n/);
    expect(line).toMatch(/model\.py", line \d+, in execute\n/);
  });

  it('an exception before any final flag fails the open requests instead of leaving them waiting', async () => {
    const { stream, answers, done } = client.collectingStream();
    stream.write(waitRequest('py_async', -2, 'neg2'));
    stream.end();
    const t0 = Date.now();
    await done;
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(answers).toHaveLength(1);
    expect(answers[0]?.inferResponse?.id).toBe('neg2');
    expect(answers[0]?.errorMessage).toMatch(
      /^Failed to process the request\(s\) for model instance 'py_async_0_0', message: ValueError: wait seconds must not be negative\n/,
    );
  });
});

describe('non-decoupled async execute', () => {
  it('answers several HTTP requests in flight, each with its own rows', async () => {
    const t0 = Date.now();
    const answers = await Promise.all(
      [1, 2, 3, 4].map((rows) =>
        inferJson(server.url, 'py_async_plain', {
          inputs: [
            { name: 'WAIT_SECONDS', datatype: 'FP32', shape: [rows, 1], data: new Array(rows).fill(0.5) },
          ],
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((a) => outputData(a.body, 'DUMMY_OUT'))).toEqual([
      [0],
      [0, 0],
      [0, 0, 0],
      [0, 0, 0, 0],
    ]);
    // One call (the 300 ms queue delay gathers them) sleeping 0.5 s for all four: about 0.8 s; a
    // call per request, one after the other, takes at least 2 s.
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('over gRPC ModelInfer', async () => {
    const r = await client.call<{ outputs: { shape: bigint[] }[] }>(
      'ModelInfer',
      waitRequest('py_async_plain', 0.1, 'g', 3),
    );
    expect(r.outputs[0]?.shape).toEqual([3n, 1n]);
  });

  it('keeps the event loop running between calls: a task started by one call goes on', async () => {
    const one = { inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [0] }] };
    await inferJson(server.url, 'py_ticker', one);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const r = await inferJson(server.url, 'py_ticker', one);
    // 500 ms of 20 ms ticks: about 25 on an idle machine; the task would be frozen (0 ticks) if
    // the loop only ran during execute.
    expect((outputData(r.body, 'OUT') as number[])[0]).toBeGreaterThanOrEqual(5);
  });
});
