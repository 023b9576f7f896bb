/**
 * The response sender in non-decoupled models, a decoupled model that never sends its final flag
 * (unload stays bounded), cancellation reaching `is_cancelled()`, and a request the stub cannot
 * build (the batch fails, the stub lives on).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CoreStreamResponse } from '../../src/common/types.js';
import type { GeneratedPythonModel } from '../../src/testing/index.js';
import { inferJson, outputData, startPythonServer, type PythonTestServer } from './helpers.js';

function pyModel(name: string, config: string, py: string): GeneratedPythonModel {
  return {
    name,
    files: {
      'config.pbtxt': `name: "${name}"\nbackend: "python"\nmax_batch_size: 0\n${config}instance_group [ { kind: KIND_CPU count: 1 } ]\n`,
      '1/model.py': py,
    },
  };
}

const HEADER = `import os
import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils

F = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
`;

/**
 * Non-decoupled, answered through the response sender. MODE 0: one response with the final flag;
 * 1: a response, then the final flag alone (from a thread, after execute returned); 2: two
 * responses (the second refused); 3: the final flag without a response (refused); 4: execute returns a list
 * with None for a request the sender answered.
 */
const sender = pyModel(
  'py_sender',
  `input [ { name: "MODE" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
`,
  `${HEADER}
def out(v):
    return pb_utils.InferenceResponse([pb_utils.Tensor("OUT", np.array([v], dtype=np.int32))])


def later(s):
    time.sleep(0.05)
    s.send(flags=F)


class TritonPythonModel:
    def execute(self, requests):
        request = requests[0]
        mode = int(pb_utils.get_input_tensor_by_name(request, "MODE").as_numpy()[0])
        s = request.get_response_sender()
        if mode == 0:
            s.send(out(10), flags=F)
        elif mode == 1:
            s.send(out(11))
            threading.Thread(target=later, args=(s,)).start()
        elif mode == 2:
            s.send(out(12))
            s.send(out(13))
        elif mode == 3:
            s.send(flags=F)
        elif mode == 4:
            s.send(out(14), flags=F)
            return [None]
        return None
`,
);

/** Decoupled: one response, then execute returns and the final flag never comes. */
const neverFinal = pyModel(
  'py_never_final',
  `model_transaction_policy { decoupled: true }
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
`,
  `${HEADER}
class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            request.get_response_sender().send(
                pb_utils.InferenceResponse([pb_utils.Tensor("OUT", np.array([1], dtype=np.int32))])
            )
        return None
`,
);

/** Waits up to 10 s for its request to be cancelled; logs what it saw; OUT = 1 if cancelled. */
const cancellable = pyModel(
  'py_cancellable',
  `input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
`,
  `${HEADER}
class TritonPythonModel:
    def execute(self, requests):
        request = requests[0]
        deadline = time.monotonic() + 10
        while not request.is_cancelled() and time.monotonic() < deadline:
            time.sleep(0.02)
        seen = request.is_cancelled()
        pb_utils.Logger.log_info(f"py_cancellable: cancelled={seen} sender={request.get_response_sender().is_cancelled()}")
        return [pb_utils.InferenceResponse([pb_utils.Tensor("OUT", np.array([int(seen)], dtype=np.int32))])]
`,
);

/** A BF16 input (no numpy equivalent, so the stub cannot build the request) or INT32 X → PID. */
const bf16 = pyModel(
  'py_bf16',
  `input [ { name: "B" data_type: TYPE_BF16 dims: [ 1 ] optional: true }, { name: "X" data_type: TYPE_INT32 dims: [ 1 ] optional: true } ]
output [ { name: "PID" data_type: TYPE_INT32 dims: [ 1 ] } ]
`,
  `${HEADER}
class TritonPythonModel:
    def execute(self, requests):
        return [pb_utils.InferenceResponse([pb_utils.Tensor("PID", np.array([os.getpid()], dtype=np.int32))]) for _ in requests]
`,
);

const mode = (m: number) => ({ inputs: [{ name: 'MODE', datatype: 'INT32', shape: [1], data: [m] }] });

describe('python backend: response senders, unload bounds, cancellation, bad requests', () => {
  let server: PythonTestServer;
  beforeAll(async () => {
    server = await startPythonServer([sender, neverFinal, cancellable, bf16], {
      modelControlMode: 'explicit',
      loadModels: ['*'],
      python: { stubTimeoutSeconds: 5 },
    });
  }, 30_000);
  afterAll(async () => {
    await server.close();
  });

  it('lets a non-decoupled model answer through its response sender, exactly once', async () => {
    const one = await inferJson(server.url, 'py_sender', mode(0));
    expect(one.status).toBe(200);
    expect(outputData(one.body, 'OUT')).toEqual([10]);
    const thenFinal = await inferJson(server.url, 'py_sender', mode(1));
    expect(thenFinal.status).toBe(200);
    expect(outputData(thenFinal.body, 'OUT')).toEqual([11]);
    const noneInList = await inferJson(server.url, 'py_sender', mode(4));
    expect(outputData(noneInList.body, 'OUT')).toEqual([14]);

    // A second send raises in the model; the request keeps the response it already had (as on
    // Triton, whose front end has it and discards what follows), and the error is logged.
    const two = await inferJson(server.url, 'py_sender', mode(2));
    expect(two.status).toBe(200);
    expect(outputData(two.body, 'OUT')).toEqual([12]);
    expect(
      server.logs.some((l) =>
        l.includes('Unable to send response. Non-decoupled model cannot send more than one response.'),
      ),
    ).toBe(true);
    const finalOnly = await inferJson(server.url, 'py_sender', mode(3));
    expect(finalOnly.status).toBe(500);
    expect(String(finalOnly.body.error)).toContain(
      'Unable to send response. Non-decoupled model cannot send complete final before sending a response.',
    );
  });

  it('fails a request the stub cannot build, and the stub lives on', async () => {
    const before = await inferJson(server.url, 'py_bf16', {
      inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: [1] }],
    });
    expect(before.status).toBe(200);
    const pid = (outputData(before.body, 'PID') as number[])[0];
    const bad = await server.running.server
      .infer({
        modelName: 'py_bf16',
        inputs: [{ name: 'B', datatype: 'BF16', shape: [1], data: Uint16Array.from([0x3f80]) }],
      })
      .then(
        () => undefined,
        (error: unknown) => error as Error,
      );
    expect(bad?.message).toContain("datatype 'BF16' has no numpy equivalent");
    const after = await inferJson(server.url, 'py_bf16', {
      inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: [1] }],
    });
    expect(outputData(after.body, 'PID')).toEqual([pid]);
  });

  it('tells the model when the client cancels its request (is_cancelled)', async () => {
    const controller = new AbortController();
    const t0 = Date.now();
    const pending = server.running.server
      .infer({
        modelName: 'py_cancellable',
        inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.from([0]) }],
        signal: controller.signal,
      })
      .catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await pending;
    for (let i = 0; i < 100 && !server.logs.some((l) => l.includes('py_cancellable: cancelled=')); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(server.logs.find((l) => l.includes('py_cancellable: cancelled='))).toContain(
      'py_cancellable: cancelled=True sender=True',
    );
    expect(Date.now() - t0).toBeLessThan(8000);
  });

  it('tells the model when an HTTP client aborts its request', async () => {
    const before = server.logs.filter((l) => l.includes('py_cancellable: cancelled=True')).length;
    const controller = new AbortController();
    const pending = fetch(`${server.url}/v2/models/py_cancellable/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [0] }] }),
      signal: controller.signal,
    }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const t0 = Date.now();
    controller.abort();
    await pending;
    const count = (): number =>
      server.logs.filter((l) => l.includes('py_cancellable: cancelled=True')).length;
    for (let i = 0; i < 100 && count() === before; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(count()).toBe(before + 1);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('answers a decoupled request that never gets its final flag with an error when the model unloads', async () => {
    const seen: CoreStreamResponse[] = [];
    const done = server.running.server.infer({
      modelName: 'py_never_final',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.from([0]) }],
      onResponse: (r) => seen.push(r),
    });
    for (let i = 0; i < 100 && seen.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen.map((r) => r.final)).toEqual([false]);
    const t0 = Date.now();
    const unload = await fetch(`${server.url}/v2/repository/models/py_never_final/unload`, {
      method: 'POST',
    });
    expect(unload.status).toBe(200);
    await done;
    const took = Date.now() - t0;
    // Bounded by stub-timeout-seconds (5 s here).
    expect(took).toBeGreaterThanOrEqual(4500);
    expect(took).toBeLessThan(9000);
    expect(seen.map((r) => r.final)).toEqual([false, true]);
    expect(seen[1]?.error?.message).toContain(
      "model instance 'py_never_final_0_0' is being unloaded and the request did not receive its final response within 5 s (stub-timeout-seconds)",
    );
  }, 20_000);
});

describe('python backend: shutdown with a decoupled request never finalized', () => {
  it('closes the server within stub-timeout-seconds and answers the request with an error', async () => {
    const server = await startPythonServer([neverFinal], { python: { stubTimeoutSeconds: 3 } });
    const seen: CoreStreamResponse[] = [];
    const done = server.running.server.infer({
      modelName: 'py_never_final',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.from([0]) }],
      onResponse: (r) => seen.push(r),
    });
    for (let i = 0; i < 100 && seen.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const t0 = Date.now();
    await server.close();
    await done;
    expect(Date.now() - t0).toBeLessThan(7000);
    expect(seen.map((r) => r.final)).toEqual([false, true]);
    expect(seen[1]?.error?.message).toContain('did not receive its final response within 3 s');
  }, 20_000);
});
