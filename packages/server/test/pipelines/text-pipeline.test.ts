/**
 * The transformer-deploy-style pipeline (test/pipelines/text-pipeline.ts) on the real server: the
 * Python tokenizer in a /usr/bin/python3 stub, the ONNX classifier in onnxruntime, the ensemble
 * between them; every answer checked against values computed in TypeScript.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { get, infer, startTestServer, type TestServer } from '../helpers/server.js';
import { PYTHON } from '../python-backend/helpers.js';
import { CLASSES, SEQUENCE_LENGTH, expectedPipeline, writeTextPipeline } from './text-pipeline.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ fill: writeTextPipeline, python: { interpreter: PYTHON } });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const encode = (texts: (string | Uint8Array)[]): Uint8Array[] =>
  texts.map((t) => (typeof t === 'string' ? new TextEncoder().encode(t) : t));

async function runPipeline(texts: (string | Uint8Array)[]) {
  return infer(
    server.url,
    'text_pipeline',
    [{ name: 'TEXT', datatype: 'BYTES', shape: [texts.length, 1], data: encode(texts) }],
    { outputs: [{ name: 'logits' }, { name: 'input_ids' }] },
  );
}

/** Checks one answer row by row against {@link expectedPipeline}. */
function expectRows(r: Awaited<ReturnType<typeof runPipeline>>, texts: string[]): void {
  expect(r.status, r.error).toBe(200);
  const byName = new Map(r.decoded?.outputs.map((o) => [o.name, o]));
  const logits = byName.get('logits');
  const ids = byName.get('input_ids');
  expect(logits?.shape).toEqual([texts.length, CLASSES]);
  expect(ids?.shape).toEqual([texts.length, SEQUENCE_LENGTH]);
  for (const [row, text] of texts.entries()) {
    const expected = expectedPipeline(text);
    const gotIds = [
      ...(ids?.data as BigInt64Array).subarray(row * SEQUENCE_LENGTH, (row + 1) * SEQUENCE_LENGTH),
    ];
    expect(gotIds.map(Number), text).toEqual(expected.ids);
    const gotLogits = [...(logits?.data as Float32Array).subarray(row * CLASSES, (row + 1) * CLASSES)];
    for (let c = 0; c < CLASSES; c++)
      expect(gotLogits[c], `${text} class ${c}`).toBeCloseTo(expected.logits[c] ?? NaN, 5);
  }
}

interface Stats {
  model_stats: {
    inference_count: number;
    execution_count: number;
    inference_stats: { success: { count: number }; fail: { count: number } };
  }[];
}
const stats = async (model: string): Promise<Stats['model_stats'][number]> =>
  ((await get(server.url, `/v2/models/${model}/stats`)).json as Stats)
    .model_stats[0] as Stats['model_stats'][number];

describe('a Python tokenizer and an ONNX classifier in one ensemble (transformer-deploy style)', () => {
  it('serves all three models', async () => {
    for (const model of ['tokenizer', 'text_classifier', 'text_pipeline']) {
      expect((await get(server.url, `/v2/models/${model}/ready`)).status, server.logs.join('\n')).toBe(200);
    }
    const meta = (await get(server.url, '/v2/models/text_pipeline')).json as { platform: string };
    expect(meta.platform).toBe('ensemble');
  });

  it('tokenizes and classifies one text', async () => {
    expectRows(await runPipeline(['Fresh pizza with cheese']), ['Fresh pizza with cheese']);
  });

  it('answers a batch of several texts row by row (unknown words, case, punctuation, truncation, padding)', async () => {
    const texts = [
      'Pasta with tomato soup!',
      'SUSHI, rice & a fried egg',
      'the quick brown fox', // unknown words → [UNK]
      'salad',
      'a pizza, a pasta, a soup, a salad and the rice', // 11 words: truncated to 8
    ];
    expectRows(await runPipeline(texts), texts);
  });

  it('batches concurrent requests in the tokenizer and answers each its own row', async () => {
    const before = await stats('tokenizer');
    const texts = ['egg', 'fried rice', 'tomato soup', 'cheese pizza', 'fresh salad', 'sushi'];
    const answers = await Promise.all(texts.map((t) => runPipeline([t])));
    answers.forEach((r, i) => expectRows(r, [texts[i] as string]));
    const after = await stats('tokenizer');
    expect(after.inference_count - before.inference_count).toBe(texts.length);
    // The dynamic batcher (20 ms window) handed several requests to one execute().
    expect(after.execution_count - before.execution_count).toBeLessThan(texts.length);
  });

  it("fails a request with a bad row with the tokenizer's error, runs no classifier step, and serves the next", async () => {
    const classifierBefore = await stats('text_classifier');
    const pipelineBefore = await stats('text_pipeline');
    const bad = await runPipeline(['pizza', new Uint8Array([0x70, 0xff, 0xfe])]);
    expect(bad.status).toBe(400);
    expect(bad.error).toBe(
      "in ensemble 'text_pipeline', tokenizer: TEXT row 1 is not valid UTF-8 (invalid start byte at byte 1)",
    );
    const empty = await runPipeline(['... !!!']);
    expect(empty.status).toBe(400);
    expect(empty.error).toBe("in ensemble 'text_pipeline', tokenizer: TEXT row 0 has no words");
    expect((await stats('text_classifier')).inference_count).toBe(classifierBefore.inference_count);
    const pipelineAfter = await stats('text_pipeline');
    expect(pipelineAfter.inference_stats.fail.count - pipelineBefore.inference_stats.fail.count).toBe(2);
    expectRows(await runPipeline(['rice']), ['rice']);
  });
});
