/**
 * `--input-data`: the requests a run sends, prepared once before measuring (typed arrays, never
 * rebuilt per request). perf_analyzer's semantics:
 *
 * - `zero` / `random` (default): one data entry per input, generated once (random data is seeded
 *   by `--seed`, so runs are reproducible); BYTES inputs get `--string-data`, else random strings
 *   of `--string-length`.
 * - JSON files and directories (see `data-sources.ts`); several sources merge: single-stream files
 *   append steps, multi-stream files append streams.
 * - Variable dims take `--shape` (or the JSON entry's `shape`); a dim still unknown is an error.
 * - A batching model gets `-b` consecutive entries per request (wrapping around), the batch
 *   dimension prepended; `-b` beyond `max_batch_size` (or > 1 on a model that does not batch) is an
 *   error.
 * - A model without sequence batching cycles through one stream: several streams are joined.
 * @packageDocumentation
 */
import { stat } from 'node:fs/promises';

import type { InferInput } from '@tritonserver-ts/client';

import { PerfError } from '../errors.js';
import type { PerfOptions } from '../options/perf-options.js';
import type { ExpectedOutput, InputDataset, ModelProfile, PreparedRequest } from '../types.js';
import {
  defaultShape,
  inputTensor,
  readDirectoryData,
  readJsonData,
  type DataAccumulator,
  type DataEntry,
} from './data-sources.js';
import {
  elementsOf,
  generateValues,
  joinTensorData,
  seededRandom,
  shapeText,
  type Batch1Tensor,
} from './tensor-values.js';

/** Largest request (sum of its input bytes) the dataset may hold. */
export const MAX_REQUEST_BYTES = 1024 * 1024 * 1024;
/** Largest dataset (all prepared requests together). */
export const MAX_DATASET_BYTES = 2 * 1024 * 1024 * 1024;

function dataError(message: string): PerfError {
  return new PerfError('INPUT_DATA', message);
}

function tensorBytes(t: Batch1Tensor): number {
  return t.kind === 'fixed' ? t.bytes.byteLength : t.elements.reduce((n, e) => n + e.byteLength + 4, 0);
}

function checkOptions(model: ModelProfile, options: PerfOptions): void {
  if (options.batchSize < 1)
    throw new PerfError('USAGE', `batch size must be >= 1, got ${options.batchSize}`);
  if (model.maxBatchSize === 0 && options.batchSize > 1) {
    throw dataError(
      `can not specify batch size > 1 as the model '${model.name}' does not support batching (max_batch_size 0)`,
    );
  }
  if (model.maxBatchSize > 0 && options.batchSize > model.maxBatchSize) {
    throw dataError(
      `expecting batch size <= ${model.maxBatchSize} for model '${model.name}', got -b ${options.batchSize}`,
    );
  }
  const names = new Set(model.inputs.map((i) => i.name));
  for (const name of options.shapes.keys()) {
    if (!names.has(name)) {
      throw dataError(
        `--shape names '${name}', which is not an input of model '${model.name}' (inputs: ${[...names].join(', ')})`,
      );
    }
  }
}

/** `zero` / `random`: one entry of generated values for every input. */
function generatedEntry(model: ModelProfile, options: PerfOptions, mode: 'zero' | 'random'): DataEntry {
  const random = seededRandom(options.seed);
  const entry = new Map<string, Batch1Tensor>();
  for (const spec of model.inputs) {
    if (spec.isShapeTensor) {
      throw dataError(`can not generate data for shape tensor '${spec.name}', user-provided data is needed.`);
    }
    const shape = defaultShape(spec, options.shapes);
    const count = elementsOf(shape);
    if (count < 0) {
      throw dataError(
        `input ${spec.name} contains dynamic shape ${shapeText(spec.dims)}, provide shapes to send along with the request (--shape ${spec.name}:d1,d2,...)`,
      );
    }
    if (count * 16 > MAX_REQUEST_BYTES) {
      throw dataError(`input ${spec.name} of shape ${shapeText(shape)} is too large to generate`);
    }
    const values = generateValues(spec.datatype, count, mode, random, options);
    entry.set(
      spec.name,
      inputTensor(spec, values, shape, (m) => dataError(m)),
    );
  }
  return entry;
}

async function readSources(model: ModelProfile, options: PerfOptions): Promise<DataAccumulator> {
  const acc: DataAccumulator = { mode: undefined, streams: [], expected: [] };
  const sources = options.inputData.length === 0 ? ['random'] : options.inputData;
  const paths = sources.filter((s) => s !== 'zero' && s !== 'random');
  if (paths.length === 0) {
    const mode = sources.includes('zero') ? 'zero' : 'random';
    acc.streams.push([generatedEntry(model, options, mode)]);
    acc.expected.push([undefined]);
    return acc;
  }
  if (sources.includes('zero')) {
    throw new PerfError('USAGE', '--input-data zero cannot be combined with a data file or directory');
  }
  for (const path of paths) {
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(path)).isDirectory();
    } catch {
      throw dataError(`--input-data '${path}': no such file or directory`);
    }
    if (isDirectory) await readDirectoryData(path, model, options.shapes, acc);
    else await readJsonData(path, model, options.shapes, acc);
  }
  return acc;
}

function prepareInputs(model: ModelProfile, entries: readonly DataEntry[], location: string): InferInput[] {
  const batched = model.maxBatchSize > 0;
  const inputs: InferInput[] = [];
  for (const spec of model.inputs) {
    const parts = entries.map((e) => e.get(spec.name));
    const given = parts.filter((p): p is Batch1Tensor => p !== undefined);
    if (given.length === 0) continue; // an optional input left out of these entries
    if (given.length !== parts.length) {
      throw dataError(
        `optional input '${spec.name}' is given in some but not all of the ${parts.length} entries batched together ${location}`,
      );
    }
    const first = given[0] as Batch1Tensor;
    for (const p of given) {
      if (shapeText(p.shape) !== shapeText(first.shape)) {
        throw dataError(
          `can not batch tensors with different shapes together (input '${spec.name}' expected shape ${shapeText(first.shape)} and received ${shapeText(p.shape)}) ${location}`,
        );
      }
    }
    // Shape tensors are sent once per request (the first entry), without a batch dimension.
    const used = spec.isShapeTensor ? [first] : given;
    inputs.push({
      name: spec.name,
      datatype: spec.datatype,
      shape: batched && !spec.isShapeTensor ? [used.length, ...first.shape] : [...first.shape],
      data: joinTensorData(spec.datatype, used),
    });
  }
  return inputs;
}

function prepareExpected(
  model: ModelProfile,
  entries: readonly (DataEntry | undefined)[],
): ReadonlyMap<string, ExpectedOutput> | undefined {
  if (entries.some((e) => e === undefined)) return undefined;
  const batched = model.maxBatchSize > 0;
  const out = new Map<string, ExpectedOutput>();
  for (const spec of model.outputs) {
    const parts = (entries as DataEntry[]).map((e) => e.get(spec.name));
    if (parts.some((p) => p === undefined)) continue;
    const given = parts as Batch1Tensor[];
    const first = given[0] as Batch1Tensor;
    if (given.some((p) => shapeText(p.shape) !== shapeText(first.shape))) continue;
    const used = spec.isShapeTensor ? [first] : given;
    out.set(spec.name, {
      datatype: spec.datatype,
      shape: batched && !spec.isShapeTensor ? [used.length, ...first.shape] : [...first.shape],
      data: joinTensorData(spec.datatype, used),
    });
  }
  return out.size > 0 ? out : undefined;
}

function requestBytes(inputs: readonly InferInput[]): number {
  let total = 0;
  for (const input of inputs) {
    const data = input.data;
    if (Array.isArray(data)) total += data.reduce((n: number, e: Uint8Array) => n + e.byteLength + 4, 0);
    else if (data !== undefined && ArrayBuffer.isView(data)) total += data.byteLength;
  }
  return total;
}

/**
 * Builds the dataset for `model` from `options` (`--input-data`, `--shape`, `-b`,
 * `--string-length`, `--string-data`, `--seed`).
 *
 * ```ts
 * const dataset = await buildInputDataset(profile, options);
 * dataset.streams[0][0].inputs; // InferInput[] with typed arrays, batch dimension included
 * ```
 * @throws PerfError `INPUT_DATA` (with perf_analyzer's message) for data that does not fit the
 *   model, a variable dim without a shape, `-b` beyond `max_batch_size`, or a request larger than
 *   {@link MAX_REQUEST_BYTES}.
 */
export async function buildInputDataset(model: ModelProfile, options: PerfOptions): Promise<InputDataset> {
  checkOptions(model, options);
  const acc = await readSources(model, options);
  let streams = acc.streams;
  let expected = acc.expected;
  if (!model.sequenceBatching && streams.length > 1) {
    streams = [streams.flat()];
    expected = [expected.flat()];
  }
  const b = options.batchSize;
  let total = 0;
  const prepared: PreparedRequest[][] = streams.map((steps, s) => {
    const stream = expected[s] ?? [];
    return steps.map((_, k) => {
      const window = Array.from({ length: b }, (_unused, i) => (k + i) % steps.length);
      const location = `( Location stream id: ${s}, step id: ${k})`;
      for (const i of window) {
        const size = [...(steps[i] as DataEntry).values()].reduce((n, t) => n + tensorBytes(t), 0);
        if (size * b > MAX_REQUEST_BYTES) {
          throw dataError(
            `a request would carry about ${size * b} bytes of input ${location}, more than the ${MAX_REQUEST_BYTES} bytes allowed`,
          );
        }
      }
      const inputs = prepareInputs(
        model,
        window.map((i) => steps[i] as DataEntry),
        location,
      );
      total += requestBytes(inputs);
      if (total > MAX_DATASET_BYTES) {
        throw dataError(
          `the input data would take more than ${MAX_DATASET_BYTES} bytes once batched (-b ${b}); use fewer entries or a smaller batch`,
        );
      }
      const expectedOutputs = prepareExpected(
        model,
        window.map((i) => stream[i]),
      );
      return expectedOutputs === undefined ? { inputs } : { inputs, expectedOutputs };
    });
  });
  return { streams: prepared };
}
