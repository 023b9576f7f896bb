/**
 * Reading `--input-data` files as perf_analyzer does: a JSON file (`data`, optional
 * `validation_data`; entries are one stream of steps, or arrays of steps = several streams) and a
 * directory (one file per input named after it, raw little-endian bytes — BYTES inputs: one
 * string per line — and optional files named after outputs for validation). Entries are batch-1
 * tensors; batching them into requests is `input-data.ts`'s job.
 * @packageDocumentation
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { DATATYPE_BYTE_SIZE, type FixedSizeDatatype } from '@tritonserver-ts/client';

import { PerfError } from '../errors.js';
import type { ModelProfile, TensorSpec } from '../types.js';
import {
  decodeBase64,
  elementsOf,
  fromJsonValues,
  fromRawBytes,
  shapeText,
  valueCount,
  type Batch1Tensor,
  type TensorValuesOnly,
} from './tensor-values.js';

/** One step: the tensors given, by name. */
export type DataEntry = ReadonlyMap<string, Batch1Tensor>;

/** Everything read so far, merged as perf_analyzer merges several `--input-data` sources. */
export interface DataAccumulator {
  /** Whether the sources are one stream of steps (`single`) or arrays of streams (`multi`). */
  mode: 'single' | 'multi' | undefined;
  readonly streams: DataEntry[][];
  /** `validation_data`, aligned with `streams` (undefined where none was given). */
  readonly expected: (DataEntry | undefined)[][];
}

/** Largest JSON data file read (a JavaScript string holds at most ~512 MiB). */
const MAX_JSON_FILE_BYTES = 256 * 1024 * 1024;
/** Largest single file of a data directory. */
const MAX_DATA_FILE_BYTES = 1024 * 1024 * 1024;

function dataError(source: string, message: string): PerfError {
  return new PerfError('INPUT_DATA', `--input-data '${source}': ${message}`);
}

/** The shape used for a tensor without a JSON `shape`: the model's dims, `--shape` where variable. */
export function defaultShape(
  spec: TensorSpec,
  shapes: ReadonlyMap<string, readonly number[]>,
): readonly number[] {
  const given = shapes.get(spec.name);
  return spec.dims.some((d) => d < 0) && given !== undefined ? given : spec.dims;
}

function compatible(shape: readonly number[], dims: readonly number[]): boolean {
  return shape.length === dims.length && shape.every((d, i) => dims[i] === -1 || dims[i] === d);
}

/** Checks and fixes the shape of input values, with perf_analyzer's messages. */
export function inputTensor(
  spec: TensorSpec,
  values: TensorValuesOnly,
  shape: readonly number[],
  fail: (message: string) => PerfError,
): Batch1Tensor {
  if (elementsOf(shape) < 0) {
    throw fail(
      `The variable-sized tensor "${spec.name}" with model shape ${shapeText(spec.dims)} needs to have its shape fully defined. See the --shape option.`,
    );
  }
  if (!compatible(shape, spec.dims)) {
    throw fail(
      `The supplied shape of ${shapeText(shape)} for input "${spec.name}" is incompatible with the model's input shape of ${shapeText(spec.dims)}`,
    );
  }
  const expected = elementsOf(shape);
  const got = valueCount(spec.datatype, values);
  if (expected !== got) {
    if (values.kind === 'fixed') {
      const size = DATATYPE_BYTE_SIZE[spec.datatype as FixedSizeDatatype];
      throw fail(
        `mismatch in the data provided for ${spec.name}. Expected: ${expected * size} bytes, Got: ${values.bytes.byteLength} bytes`,
      );
    }
    throw fail(
      `mismatch in the data provided for ${spec.name}. Expected: ${expected} elements, Got: ${got} elements`,
    );
  }
  return values.kind === 'fixed'
    ? { kind: 'fixed', shape, bytes: values.bytes }
    : { kind: 'bytes', shape, elements: values.elements };
}

/** Expected output values: the given shape, else the model's dims (one variable dim is inferred). */
function outputTensor(
  spec: TensorSpec,
  values: TensorValuesOnly,
  shape: readonly number[] | undefined,
  fail: (message: string) => PerfError,
): Batch1Tensor {
  const count = valueCount(spec.datatype, values);
  let resolved = shape ?? spec.dims;
  if (shape === undefined) {
    const variable = spec.dims.filter((d) => d < 0).length;
    if (variable === 1) {
      const fixed = spec.dims.reduce((n, d) => (d < 0 ? n : n * d), 1);
      resolved = spec.dims.map((d) => (d < 0 ? (fixed === 0 ? 0 : count / fixed) : d));
    } else if (variable > 1) {
      throw fail(
        `validation data for output "${spec.name}" needs a "shape": the model shape is ${shapeText(spec.dims)}`,
      );
    }
  }
  if (
    !compatible(resolved, spec.dims) ||
    elementsOf(resolved) !== count ||
    !resolved.every(Number.isInteger)
  ) {
    throw fail(
      `validation data for output "${spec.name}" has ${count} elements, which do not fit the shape ${shapeText(resolved)} (model shape ${shapeText(spec.dims)})`,
    );
  }
  return values.kind === 'fixed'
    ? { kind: 'fixed', shape: resolved, bytes: values.bytes }
    : { kind: 'bytes', shape: resolved, elements: values.elements };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One step's tensors (`data` entry for inputs, `validation_data` entry for outputs). */
function readStep(
  step: unknown,
  tensors: readonly TensorSpec[],
  isInput: boolean,
  location: string,
  shapes: ReadonlyMap<string, readonly number[]>,
  fail: (message: string) => PerfError,
): DataEntry {
  if (!isObject(step)) throw fail(`Input data file is malformed. ${location}`);
  const entry = new Map<string, Batch1Tensor>();
  for (const spec of tensors) {
    const raw = step[spec.name];
    if (raw === undefined) {
      if (isInput && !spec.optional) throw fail(`missing tensor ${spec.name} ${location}`);
      continue;
    }
    if (!Array.isArray(raw) && !isObject(raw)) throw fail('Input data file is malformed.');
    let content: unknown = raw;
    let shape: number[] | undefined;
    if (isObject(raw)) {
      if (raw.shape !== undefined) {
        if (!Array.isArray(raw.shape) || !raw.shape.every((d) => Number.isInteger(d))) {
          throw fail('shape values must be integers.');
        }
        shape = raw.shape as number[];
      }
      if (raw.b64 === undefined) {
        if (raw.content === undefined) throw fail(`missing content field. ${location}`);
        content = raw.content;
      }
    }
    const where = `${isInput ? 'input' : 'output'} '${spec.name}' ${location}`;
    let values: TensorValuesOnly;
    if (Array.isArray(content)) {
      values = fromJsonValues(spec.datatype, content, where);
    } else if (isObject(content) && content.b64 !== undefined) {
      if (typeof content.b64 !== 'string') {
        throw fail(`the value of b64 field should be of type string ${location}`);
      }
      values = fromRawBytes(spec.datatype, decodeBase64(content.b64, where), where);
    } else {
      throw fail(`The tensor values are not supported. Expected an array or b64 string ${location}`);
    }
    entry.set(
      spec.name,
      isInput
        ? inputTensor(spec, values, shape ?? defaultShape(spec, shapes), fail)
        : outputTensor(spec, values, shape, fail),
    );
  }
  const known = new Set([...tensors.map((t) => t.name), 'model']);
  for (const key of Object.keys(step)) {
    if (!known.has(key)) throw fail(`The input or output '${key}' is not found in the model configuration`);
  }
  return entry;
}

const INCONSISTENT =
  'Inconsistency in input-data provided. Can not have a combination of objects and arrays inside of the Data array';

function setMode(acc: DataAccumulator, mode: 'single' | 'multi', fail: (m: string) => PerfError): void {
  if (acc.mode !== undefined && acc.mode !== mode) throw fail(INCONSISTENT);
  acc.mode = mode;
}

/** Reads one JSON data file into `acc` (steps appended to stream 0, or streams appended). */
export async function readJsonData(
  path: string,
  model: ModelProfile,
  shapes: ReadonlyMap<string, readonly number[]>,
  acc: DataAccumulator,
): Promise<void> {
  const fail = (message: string): PerfError => dataError(path, message);
  const size = (await stat(path)).size;
  if (size > MAX_JSON_FILE_BYTES) {
    throw fail(
      `the file is ${size} bytes, more than the ${MAX_JSON_FILE_BYTES} bytes accepted for a JSON data file`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw fail(
      `failed to parse the specified json file for reading provided data: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!isObject(json) || json.data === undefined) throw fail("The json file doesn't contain data field");
  const streams = json.data;
  if (!Array.isArray(streams)) throw fail('the data field must be an array');
  const validation = json.validation_data;
  if (validation !== undefined && (!Array.isArray(validation) || validation.length !== streams.length)) {
    throw fail("The 'validation_data' field doesn't align with 'data' field in the json file");
  }
  const outputSteps = validation as unknown[] | undefined;
  if (streams.length === 0) throw fail('the data field is empty');
  const multi = Array.isArray(streams[0]);
  if (streams.some((s) => Array.isArray(s) !== multi)) throw fail(INCONSISTENT);
  setMode(acc, multi ? 'multi' : 'single', fail);

  if (!multi) {
    if (acc.streams.length === 0) {
      acc.streams.push([]);
      acc.expected.push([]);
    }
    const stream = acc.streams[0] as DataEntry[];
    const expected = acc.expected[0] as (DataEntry | undefined)[];
    streams.forEach((step, k) => {
      const location = `( Location stream id: 0, step id: ${stream.length})`;
      stream.push(readStep(step, model.inputs, true, location, shapes, fail));
      expected.push(
        outputSteps === undefined
          ? undefined
          : readStep(outputSteps[k], model.outputs, false, location, shapes, fail),
      );
    });
    return;
  }
  streams.forEach((steps, s) => {
    const id = acc.streams.length;
    const outSteps = outputSteps?.[s];
    if (
      outputSteps !== undefined &&
      (!Array.isArray(outSteps) || outSteps.length !== (steps as unknown[]).length)
    ) {
      throw fail("The 'validation_data' field doesn't align with 'data' field in the json file");
    }
    if ((steps as unknown[]).length === 0) throw fail(`stream ${s} of the data field is empty`);
    acc.streams.push(
      (steps as unknown[]).map((step, k) =>
        readStep(step, model.inputs, true, `( Location stream id: ${id}, step id: ${k})`, shapes, fail),
      ),
    );
    acc.expected.push(
      (steps as unknown[]).map((_, k) =>
        outSteps === undefined
          ? undefined
          : readStep(
              (outSteps as unknown[])[k],
              model.outputs,
              false,
              `( Location stream id: ${id}, step id: ${k})`,
              shapes,
              fail,
            ),
      ),
    );
  });
}

async function readDataFile(path: string, fail: (m: string) => PerfError): Promise<Uint8Array | undefined> {
  let size: number;
  try {
    const s = await stat(path);
    if (!s.isFile()) return undefined;
    size = s.size;
  } catch {
    return undefined;
  }
  if (size > MAX_DATA_FILE_BYTES) {
    throw fail(`file '${path}' is ${size} bytes, more than the ${MAX_DATA_FILE_BYTES} bytes accepted`);
  }
  const buffer = await readFile(path);
  if (buffer.byteLength === 0) throw fail(`file '${path}' is empty`);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function textLines(bytes: Uint8Array): Uint8Array[] {
  const text = new TextDecoder().decode(bytes);
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const encoder = new TextEncoder();
  return lines.map((line) => encoder.encode(line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** Reads a data directory as one step of stream 0 (perf_analyzer: one stream, one step). */
export async function readDirectoryData(
  path: string,
  model: ModelProfile,
  shapes: ReadonlyMap<string, readonly number[]>,
  acc: DataAccumulator,
): Promise<void> {
  const fail = (message: string): PerfError => dataError(path, message);
  const names = new Set([...model.inputs, ...model.outputs].map((t) => t.name));
  for (const file of await readdir(path)) {
    if (!names.has(file)) {
      throw fail(`Provided data file '${file}' does not correspond to a valid model input or output.`);
    }
  }
  const entry = new Map<string, Batch1Tensor>();
  for (const spec of model.inputs) {
    const bytes = await readDataFile(join(path, spec.name), fail);
    if (bytes === undefined) {
      if (spec.optional) continue;
      throw fail(`failed to open file '${join(path, spec.name)}'`);
    }
    const shape = defaultShape(spec, shapes);
    const count = elementsOf(shape);
    if (count < 0) {
      throw fail(`input ${spec.name} contains dynamic shape, provide shapes to send along with the request`);
    }
    if (spec.datatype === 'BYTES') {
      const elements = textLines(bytes);
      if (elements.length !== count) {
        throw fail(`provided data for input ${spec.name} has ${elements.length} elements, expect ${count}`);
      }
      entry.set(spec.name, inputTensor(spec, { kind: 'bytes', elements }, shape, fail));
    } else {
      const expected = count * DATATYPE_BYTE_SIZE[spec.datatype];
      if (bytes.byteLength !== expected) {
        throw fail(
          `provided data for input ${spec.name} has byte size ${bytes.byteLength}, expect ${expected}`,
        );
      }
      entry.set(spec.name, inputTensor(spec, { kind: 'fixed', bytes }, shape, fail));
    }
  }
  const outputs = new Map<string, Batch1Tensor>();
  for (const spec of model.outputs) {
    const bytes = await readDataFile(join(path, spec.name), fail);
    if (bytes === undefined) continue;
    const values: TensorValuesOnly =
      spec.datatype === 'BYTES'
        ? { kind: 'bytes', elements: textLines(bytes) }
        : fromRawBytes(spec.datatype, bytes, `output '${spec.name}'`);
    outputs.set(spec.name, outputTensor(spec, values, undefined, fail));
  }
  setMode(acc, 'single', fail);
  if (acc.streams.length === 0) {
    acc.streams.push([]);
    acc.expected.push([]);
  }
  (acc.streams[0] as DataEntry[]).push(entry);
  (acc.expected[0] as (DataEntry | undefined)[]).push(outputs.size > 0 ? outputs : undefined);
}
