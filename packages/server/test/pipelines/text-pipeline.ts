/**
 * A transformer-deploy-style pipeline, generated here: a Python tokenizer model and an ONNX text
 * classifier (built with `@tritonserver-ts/onnx-builder`) in one ensemble, as transformer-deploy
 * serves a Hugging Face tokenizer in front of an exported transformer.
 *
 * - `tokenizer` (Python backend, `max_batch_size` 8, dynamic batching): `TEXT` BYTES [1] (UTF-8) →
 *   `input_ids` INT64 [8] and `attention_mask` INT64 [8]. Lower-cases, splits into runs of `a-z0-9`,
 *   maps each word through `vocab.txt` (line n = id n; unknown words → `[UNK]` = 1), truncates to 8
 *   tokens and pads with `[PAD]` = 0 (mask 0). A row that is not UTF-8 or has no word fails its
 *   request: `tokenizer: TEXT row <i> …` (INVALID_ARG).
 * - `text_classifier` (onnxruntime): `input_ids`, `attention_mask` INT64 [8] → `logits` FP32 [3]:
 *   Gather of the embedding table, mean over the unmasked tokens (ReduceMean of the masked embeddings
 *   divided by ReduceMean of the mask), MatMul by `W` plus `B`.
 * - `text_pipeline` (ensemble): `TEXT` → tokenizer → text_classifier → `logits`; the token ids are
 *   an ensemble output too (`input_ids`).
 *
 * {@link expectedPipeline} computes the same numbers in TypeScript, independently of both models.
 * @packageDocumentation
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';

/** The tokenizer's vocabulary: line n of vocab.txt is token id n. */
export const VOCAB = [
  '[PAD]',
  '[UNK]',
  'pizza',
  'pasta',
  'with',
  'cheese',
  'tomato',
  'soup',
  'rice',
  'fried',
  'egg',
  'sushi',
  'fresh',
  'salad',
  'the',
  'a',
] as const;
/** Tokens per row (truncated or padded to it). */
export const SEQUENCE_LENGTH = 8;
/** Embedding width and number of classes of `text_classifier`. */
export const EMBEDDING = 4;
export const CLASSES = 3;

/** The deterministic weights: embedding E[v][d], classifier W[d][c] and bias B[c]. */
export const embedding = (v: number, d: number): number => (((v * 7 + d * 3) % 11) - 5) / 4;
export const weight = (d: number, c: number): number => (((d * 5 + c * 2) % 7) - 3) / 3;
export const bias = (c: number): number => c / 10;

function table(rows: number, cols: number, f: (r: number, c: number) => number): Float32Array {
  return Float32Array.from({ length: rows * cols }, (_, i) => f(Math.floor(i / cols), i % cols));
}

/** The ONNX text classifier (see the module comment). */
export function buildTextClassifier(): Uint8Array {
  const g = new OnnxGraphBuilder({ name: 'text_classifier' });
  g.addInput('input_ids', 'INT64', ['batch', SEQUENCE_LENGTH]);
  g.addInput('attention_mask', 'INT64', ['batch', SEQUENCE_LENGTH]);
  g.addInitializer('E', {
    type: 'FLOAT',
    dims: [VOCAB.length, EMBEDDING],
    data: table(VOCAB.length, EMBEDDING, embedding),
  });
  g.addInitializer('W', {
    type: 'FLOAT',
    dims: [EMBEDDING, CLASSES],
    data: table(EMBEDDING, CLASSES, weight),
  });
  g.addInitializer('B', {
    type: 'FLOAT',
    dims: [CLASSES],
    data: Float32Array.from({ length: CLASSES }, (_, c) => bias(c)),
  });
  g.addInitializer('last_axis', { type: 'INT64', dims: [1], data: BigInt64Array.from([2n]) });
  g.addNode('Gather', ['E', 'input_ids'], ['embedded'], { axis: { kind: 'int', value: 0 } }); // [b, L, D]
  g.addNode('Cast', ['attention_mask'], ['mask'], { to: { kind: 'int', value: 1 } }); // FLOAT [b, L]
  g.addNode('Unsqueeze', ['mask', 'last_axis'], ['mask3']); // [b, L, 1]
  g.addNode('Mul', ['embedded', 'mask3'], ['masked']);
  const mean = (input: string, output: string, keepdims: number): void => {
    g.addNode('ReduceMean', [input], [output], {
      axes: { kind: 'ints', value: [1] },
      keepdims: { kind: 'int', value: keepdims },
    });
  };
  mean('masked', 'masked_mean', 0); // [b, D]
  mean('mask', 'mask_mean', 1); // [b, 1]
  g.addNode('Div', ['masked_mean', 'mask_mean'], ['pooled']); // the mean of the real tokens
  g.addNode('MatMul', ['pooled', 'W'], ['scores']);
  g.addNode('Add', ['scores', 'B'], ['logits']);
  g.addOutput('logits', 'FLOAT', ['batch', CLASSES]);
  return g.toBytes();
}

const TOKENIZER_PY = `"""A tiny deterministic word tokenizer: TEXT (UTF-8 bytes) -> input_ids, attention_mask."""

import json
import os
import re

import numpy as np
import triton_python_backend_utils as pb_utils

WORD = re.compile(r"[a-z0-9]+")


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.length = int(config["parameters"]["sequence_length"]["string_value"])
        with open(os.path.join(args["model_repository"], "vocab.txt"), encoding="utf-8") as handle:
            words = [line.rstrip("\\n") for line in handle]
        self.ids = {word: i for i, word in enumerate(words)}
        self.unknown = self.ids["[UNK]"]
        self.pad = self.ids["[PAD]"]

    def _tokenize(self, row, element):
        try:
            text = bytes(element).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"row {row} is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
        words = WORD.findall(text.lower())
        if not words:
            raise ValueError(f"row {row} has no words")
        ids = [self.ids.get(word, self.unknown) for word in words][: self.length]
        mask = [1] * len(ids) + [0] * (self.length - len(ids))
        return ids + [self.pad] * (self.length - len(ids)), mask

    def execute(self, requests):
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "TEXT").as_numpy()
            try:
                rows = [self._tokenize(i, element) for i, element in enumerate(text.reshape(-1))]
            except ValueError as exc:
                error = pb_utils.TritonError(f"tokenizer: TEXT {exc}", pb_utils.TritonError.INVALID_ARG)
                responses.append(pb_utils.InferenceResponse(output_tensors=[], error=error))
                continue
            shape = list(text.shape[:-1]) + [self.length]
            ids = np.array([r[0] for r in rows], dtype=np.int64).reshape(shape)
            mask = np.array([r[1] for r in rows], dtype=np.int64).reshape(shape)
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[pb_utils.Tensor("input_ids", ids), pb_utils.Tensor("attention_mask", mask)]
                )
            )
        return responses
`;

const TOKENIZER_CONFIG = `name: "tokenizer"
backend: "python"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [
  { name: "input_ids" data_type: TYPE_INT64 dims: [ ${SEQUENCE_LENGTH} ] },
  { name: "attention_mask" data_type: TYPE_INT64 dims: [ ${SEQUENCE_LENGTH} ] }
]
instance_group [ { kind: KIND_CPU count: 1 } ]
dynamic_batching { max_queue_delay_microseconds: 20000 }
parameters { key: "sequence_length" value: { string_value: "${SEQUENCE_LENGTH}" } }
`;

const CLASSIFIER_CONFIG = `name: "text_classifier"
backend: "onnxruntime"
max_batch_size: 8
input [
  { name: "input_ids" data_type: TYPE_INT64 dims: [ ${SEQUENCE_LENGTH} ] },
  { name: "attention_mask" data_type: TYPE_INT64 dims: [ ${SEQUENCE_LENGTH} ] }
]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ ${CLASSES} ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;

const PIPELINE_CONFIG = `name: "text_pipeline"
platform: "ensemble"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [
  { name: "logits" data_type: TYPE_FP32 dims: [ ${CLASSES} ] },
  { name: "input_ids" data_type: TYPE_INT64 dims: [ ${SEQUENCE_LENGTH} ] }
]
ensemble_scheduling {
  step [
    {
      model_name: "tokenizer"
      model_version: -1
      input_map { key: "TEXT" value: "TEXT" }
      output_map { key: "input_ids" value: "input_ids" }
      output_map { key: "attention_mask" value: "attention_mask" }
    },
    {
      model_name: "text_classifier"
      model_version: -1
      input_map { key: "input_ids" value: "input_ids" }
      input_map { key: "attention_mask" value: "attention_mask" }
      output_map { key: "logits" value: "logits" }
    }
  ]
}
`;

/** Writes `tokenizer`, `text_classifier` and `text_pipeline` under `repository`. */
export async function writeTextPipeline(repository: string): Promise<void> {
  const files: Record<string, string | Uint8Array> = {
    'tokenizer/config.pbtxt': TOKENIZER_CONFIG,
    'tokenizer/vocab.txt': `${VOCAB.join('\n')}\n`,
    'tokenizer/1/model.py': TOKENIZER_PY,
    'text_classifier/config.pbtxt': CLASSIFIER_CONFIG,
    'text_classifier/1/model.onnx': buildTextClassifier(),
    'text_pipeline/config.pbtxt': PIPELINE_CONFIG,
    'text_pipeline/1/.keep': '',
  };
  for (const [path, content] of Object.entries(files)) {
    const file = join(repository, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

/** What the pipeline must answer for `text`, computed here in float64 (independent of both models). */
export function expectedPipeline(text: string): { ids: number[]; logits: number[] } {
  const words = text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const known = new Map<string, number>(VOCAB.map((w, i) => [w, i]));
  const tokens = words.map((w) => known.get(w) ?? 1).slice(0, SEQUENCE_LENGTH);
  const ids = [...tokens, ...Array<number>(SEQUENCE_LENGTH - tokens.length).fill(0)];
  const pooled = Array.from(
    { length: EMBEDDING },
    (_, d) => tokens.reduce((sum, v) => sum + embedding(v, d), 0) / tokens.length,
  );
  const logits = Array.from(
    { length: CLASSES },
    (_, c) => pooled.reduce((sum, p, d) => sum + p * weight(d, c), 0) + bias(c),
  );
  return { ids, logits };
}
