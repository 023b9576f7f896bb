// Sequence batching over both transports, runnable against a real Triton (TRITON_URL): the Python
// accumulator `py_sequence_accumulator` keeps a running sum per sequence keyed by its CORRID control
// (Direct strategy, max_batch_size 4), so interleaved sequences must each see their own sum; the
// sequence batcher's refusals with Triton's texts; and `onnx_implicit_state`, whose running sum is
// Triton's implicit state (sequence_batching.state with a zero initial state), whose state output a
// client may not request because the config does not list it. Models: scripts/repository.ts.
import { afterAll, describe, expect, it } from 'vitest';
import type { InferInput } from '@tritonserver-ts/protocol';
import type { TritonClient } from '@tritonserver-ts/client';
import { newClient, transports } from './target.js';
import { expectServerError } from './transport-differences.js';

const input = (value: number, rows = 1): InferInput => ({
  name: 'INPUT',
  datatype: 'INT32',
  shape: [rows, 1],
  data: Int32Array.from({ length: rows }, () => value),
});

/** Fresh sequence ids per run (a real Triton may still hold sequences of an earlier run). */
const base = 1_000_000 + Math.floor(Math.random() * 1_000_000) * 16;

describe.each(transports)('%s: sequence batcher', (transport) => {
  const client: TritonClient = newClient(transport);
  const offset = base + (transport === 'http' ? 0 : 8);
  afterAll(async () => {
    await client.close();
  });

  async function send(model: string, values: readonly number[], id: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < values.length; i++) {
      const r = await client.infer(model, [input(values[i] as number)], {
        sequenceId: id,
        sequenceStart: i === 0,
        sequenceEnd: i === values.length - 1,
      });
      out.push(Number(r.asTypedArray('OUTPUT', 'INT32')[0]));
    }
    return out;
  }

  it.each(['py_sequence_accumulator', 'onnx_implicit_state'])(
    '%s: interleaved sequences each keep their running sum',
    async (model) => {
      const ids = [1, 2, 3].map((k) => offset + k + (model === 'onnx_implicit_state' ? 4 : 0));
      const runs = await Promise.all(ids.map((id, k) => send(model, [k + 1, 10, 100, 1000], id)));
      expect(runs).toEqual([
        [1, 11, 111, 1111],
        [2, 12, 112, 1112],
        [3, 13, 113, 1113],
      ]);
    },
  );

  it("refuses a request without START, without an id, or of two rows (Triton's texts)", async () => {
    const model = 'py_sequence_accumulator';
    const id = offset + 7;
    const noStart = await expectServerError(
      client.infer(model, [input(1)], { sequenceId: id }),
      transport,
      'INVALID_ARG',
    );
    expect(noStart.message).toContain(
      `inference request for sequence ${id} to model '${model}' must specify the START flag on the first request of the sequence`,
    );
    const noId = await expectServerError(client.infer(model, [input(1)]), transport, 'INVALID_ARG');
    expect(noId.message).toContain(
      `inference request to model '${model}' must specify a non-zero or non-empty correlation ID`,
    );
    const rows = await expectServerError(
      client.infer(model, [input(1, 2)], { sequenceId: id, sequenceStart: true, sequenceEnd: true }),
      transport,
      'INVALID_ARG',
    );
    expect(rows.message).toContain(
      `inference request to model '${model}' must specify batch-size 1 due to requirements of sequence batcher`,
    );
  });

  it('implicit state: the state output is not an output a client may request', async () => {
    const error = await expectServerError(
      client.infer('onnx_implicit_state', [input(1)], {
        sequenceId: offset + 8,
        sequenceStart: true,
        sequenceEnd: true,
        outputs: [{ name: 'OUTPUT_STATE' }],
      }),
      transport,
      'INVALID_ARG',
    );
    expect(error.message).toContain(
      "unexpected inference output 'OUTPUT_STATE' for model 'onnx_implicit_state'",
    );
  });
});
