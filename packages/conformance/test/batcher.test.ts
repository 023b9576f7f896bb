// Statistics of dynamic batches as Triton 2.73's qa/L0_batcher reads them: right after the
// responses arrive, for version "1" and for the model name alone, over both transports, on
// identity models (Triton's `custom` trial) loaded through load overrides with preferred batch
// sizes 2 and 6. test_static_batch_preferred: a request of 2 rows and one of 6 run at once and
// count {2: 1, 6: 1}, 2 requests, 8 inferences, 2 executions. test_multi_batch_different_shape_allow_ragged:
// two requests whose ragged INPUT0 differs in shape ([1, 16], [1, 8]) form one batch of 2.
import { afterAll, describe, expect, it } from 'vitest';
import type { LoadModelOptions, TritonClient } from '@tritonserver-ts/client';
import { newClient, transports, type TransportName } from './target.js';

/** The batcher's delay: a request that does not reach a preferred size waits this long. */
const QUEUE_DELAY_MS = 5000;

function batcherModel(name: string, ragged: boolean): LoadModelOptions {
  return {
    config: {
      name,
      backend: 'identity',
      max_batch_size: 8,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1], allow_ragged_batch: ragged }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
      dynamic_batching: { preferred_batch_size: [2, 6], max_queue_delay_microseconds: QUEUE_DELAY_MS * 1000 },
    },
    files: { 'file:1/README.txt': new TextEncoder().encode('identity backend: no model file') },
  };
}

describe.each(transports)('%s: dynamic batch statistics', (transport) => {
  const clients: Record<TransportName, TritonClient> = {
    http: newClient('http'),
    grpc: newClient('grpc'),
  };
  const loaded: string[] = [];
  afterAll(async () => {
    for (const name of loaded) await clients[transport].unloadModel(name).catch(() => undefined);
    await Promise.all(Object.values(clients).map((c) => c.close()));
  });

  async function load(kind: string, ragged: boolean): Promise<string> {
    const name = `conformance_${kind}_${transport}`;
    await clients[transport].loadModel(name, batcherModel(name, ragged));
    loaded.push(name);
    return name;
  }

  /** Sends the requests at once over this transport; checks the outputs and that none waited. */
  async function send(model: string, requests: readonly { rows: number; length: number }[]): Promise<void> {
    const start = performance.now();
    await Promise.all(
      requests.map(async ({ rows, length }, r) => {
        const data = Float32Array.from({ length: rows * length }, (_, i) => r * 1000 + i);
        const result = await clients[transport].infer(model, [
          { name: 'INPUT0', datatype: 'FP32', shape: [rows, length], data },
        ]);
        expect(Array.from(result.asTypedArray('OUTPUT0', 'FP32'))).toEqual(Array.from(data));
      }),
    );
    expect(performance.now() - start).toBeLessThan(QUEUE_DELAY_MS / 2);
  }

  async function expectStatistics(
    model: string,
    expected: { batches: Record<number, number>; requests: number; inferences: number; executions: number },
  ): Promise<void> {
    for (const reader of transports) {
      for (const version of ['1', ''] as const) {
        const stats = await clients[reader].getInferenceStatistics(model, version);
        const where = `read over ${reader} with version '${version}'`;
        expect(stats.model_stats.length, where).toBe(1);
        const s = stats.model_stats[0];
        expect([s?.name, s?.version], where).toEqual([model, '1']);
        expect(
          Object.fromEntries(
            (s?.batch_stats ?? []).map((b) => [Number(b.batch_size), Number(b.compute_infer.count)]),
          ),
          where,
        ).toEqual(expected.batches);
        expect(Number(s?.inference_stats.success.count), where).toBe(expected.requests);
        expect(Number(s?.inference_count), where).toBe(expected.inferences);
        expect(Number(s?.execution_count), where).toBe(expected.executions);
      }
    }
  }

  it('test_static_batch_preferred: batches of 2 and 6 rows run at once', async () => {
    const model = await load('static_batch', false);
    await send(model, [{ rows: 2, length: 16 }]);
    await send(model, [{ rows: 6, length: 16 }]);
    await expectStatistics(model, { batches: { 2: 1, 6: 1 }, requests: 2, inferences: 8, executions: 2 });
  });

  it('test_multi_batch_different_shape_allow_ragged: [1, 16] and [1, 8] form one batch of 2', async () => {
    const model = await load('ragged_batch', true);
    await send(model, [
      { rows: 1, length: 16 },
      { rows: 1, length: 8 },
    ]);
    await expectStatistics(model, { batches: { 2: 1 }, requests: 2, inferences: 2, executions: 1 });
  });
});
