/**
 * Statistics of dynamic batches as Triton's qa/L0_batcher reads them (issue 26): right after the
 * responses arrive, per version — the model name with version "1" and with an empty version — over
 * both wires, for requests sent over each wire. `test_static_batch_preferred` (batches of 2 and 6
 * rows, both preferred sizes, run at once) and `test_multi_batch_different_shape_allow_ragged` (two
 * requests whose ragged input differs in shape form one batch of 2) on the identity backend
 * (Triton's `custom` trial) and on onnxruntime (its `onnx` trial: a model without batch dimension
 * fed the ragged batch as one [-1] tensor, OUTPUT0 scattered back by BATCH_SCATTER_WITH_INPUT_SHAPE).
 * Each case has its own models, so the counters start at zero.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { TritonClient, type InferenceStatistics } from '@tritonserver-ts/client';
import { createGrpcClient } from '@tritonserver-ts/client/grpc';
import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer } from '../helpers/server.js';

/** The batcher's delay: a request that does not reach a preferred size waits this long. */
const QUEUE_DELAY_MS = 5000;
const transports = ['http', 'grpc'] as const;
type Transport = (typeof transports)[number];

function config(name: string, backend: 'identity' | 'onnxruntime', ragged: boolean): string {
  return [
    `name: "${name}"`,
    `backend: "${backend}"`,
    'max_batch_size: 8',
    `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ]${ragged ? ' allow_ragged_batch: true' : ''} } ]`,
    'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
    'instance_group [ { kind: KIND_CPU count: 1 } ]',
    ...(backend === 'onnxruntime'
      ? [
          'batch_output [ { target_name: "OUTPUT0" kind: BATCH_SCATTER_WITH_INPUT_SHAPE source_input: "INPUT0" } ]',
        ]
      : []),
    `dynamic_batching { preferred_batch_size: [ 2, 6 ] max_queue_delay_microseconds: ${QUEUE_DELAY_MS * 1000} }`,
    '',
  ].join('\n');
}

/** Triton's `onnx_nobatch_zero_1_float32`: INPUT0 [-1] → OUTPUT0, no batch dimension. */
function zeroOnnx(): Uint8Array {
  const g = new OnnxGraphBuilder({ name: 'onnx_nobatch_zero_1_float32' });
  g.addInput('INPUT0', 'FLOAT', ['n']);
  g.addNode('Identity', ['INPUT0'], ['OUTPUT0']);
  g.addOutput('OUTPUT0', 'FLOAT', ['n']);
  return g.toBytes();
}

const models = (t: Transport): [string, 'identity' | 'onnxruntime', boolean][] => [
  [`static_identity_${t}`, 'identity', false],
  [`zero_identity_${t}`, 'identity', true],
  [`zero_onnx_${t}`, 'onnxruntime', true],
];

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    fill: async (repository) => {
      for (const t of transports) {
        for (const [name, backend, ragged] of models(t)) {
          await mkdir(join(repository, name, '1'), { recursive: true });
          await writeFile(join(repository, name, 'config.pbtxt'), config(name, backend, ragged));
          if (backend === 'onnxruntime')
            await writeFile(join(repository, name, '1', 'model.onnx'), zeroOnnx());
        }
      }
    },
    grpcPort: 0,
  });
}, 60_000);
afterAll(async () => {
  await srv.close();
});

interface Expected {
  readonly batches: Record<number, number>;
  readonly requests: number;
  readonly inferences: number;
  readonly executions: number;
}

describe.each(transports)('requests over %s', (transport) => {
  let clients: Record<Transport, TritonClient>;
  beforeAll(() => {
    clients = {
      http: new TritonClient({ url: srv.url }),
      grpc: createGrpcClient({ url: srv.running.grpcUrl }),
    };
  });
  afterAll(async () => {
    await Promise.all(Object.values(clients).map((c) => c.close()));
  });

  /** Sends rows of `lengths` (one request each, all at once); checks the outputs and that no request waited. */
  async function send(model: string, requests: readonly { rows: number; length: number }[]): Promise<void> {
    const start = performance.now();
    await Promise.all(
      requests.map(async ({ rows, length }, r) => {
        const data = Float32Array.from({ length: rows * length }, (_, i) => r * 1000 + i);
        const result = await clients[transport].infer(model, [
          { name: 'INPUT0', datatype: 'FP32', shape: [rows, length], data },
        ]);
        expect(result.output('OUTPUT0')?.shape).toEqual([rows, length]);
        expect(Array.from(result.asTypedArray('OUTPUT0', 'FP32'))).toEqual(Array.from(data));
      }),
    );
    // Preferred sizes run at once; a request left alone would wait the 5 s queue delay.
    expect(performance.now() - start).toBeLessThan(QUEUE_DELAY_MS / 2);
  }

  /** Reads the statistics at once over both wires, by version "1" and by the model name alone. */
  async function expectStatistics(model: string, expected: Expected): Promise<void> {
    for (const reader of transports) {
      for (const version of ['1', ''] as const) {
        const stats: InferenceStatistics = await clients[reader].getInferenceStatistics(model, version);
        const where = `${model} read over ${reader} with version '${version}'`;
        expect(stats.model_stats.length, where).toBe(1);
        const s = stats.model_stats[0];
        expect(s?.name, where).toBe(model);
        expect(s?.version, where).toBe('1');
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

  it('test_static_batch_preferred: batches of 2 and 6 rows', async () => {
    const model = `static_identity_${transport}`;
    await send(model, [{ rows: 2, length: 16 }]);
    await send(model, [{ rows: 6, length: 16 }]);
    await expectStatistics(model, { batches: { 2: 1, 6: 1 }, requests: 2, inferences: 8, executions: 2 });
  });

  it.each(['identity', 'onnx'])(
    'test_multi_batch_different_shape_allow_ragged (%s): [1, 16] and [1, 8] form one batch of 2',
    async (kind) => {
      const model = `zero_${kind}_${transport}`;
      await send(model, [
        { rows: 1, length: 16 },
        { rows: 1, length: 8 },
      ]);
      await expectStatistics(model, { batches: { 2: 1 }, requests: 2, inferences: 2, executions: 1 });
    },
  );
});
