/**
 * `model_warmup`: runs each warmup sample `count` times (at least once) on every instance before the
 * model is reported READY, as Triton does during load. Inputs are built from the sample:
 * `zero_data` (zeros; BYTES: empty elements), `random_data` (uniform values; BYTES: 8 random
 * letters per element) or `input_data_file` (raw row-major bytes read from the model directory's
 * `warmup/` folder; BYTES as 4-byte little-endian length-prefixed elements). With
 * `max_batch_size > 0` every input gets a leading batch dim of `batch_size` (0 counts as 1).
 *
 * Any failure rejects with an INVALID_ARG (bad sample) or INTERNAL (execution failed) `ServerError`
 * naming the sample; the core then reports the load as failed.
 * @packageDocumentation
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import {
  BytesList,
  DATATYPE_BYTE_SIZE,
  datatypeFromModelConfig,
  elementCount,
  tensorDataFromBytes,
  type Datatype,
  type FixedSizeDatatype,
  type PackedTensor,
  type TensorData,
} from '@tritonserver-ts/protocol';

import { ServerError } from '../common/errors.js';
import { resolveInside } from '../repository/contained-path.js';
import type { ModelConfig, ModelWarmup, WarmupInput } from '../repository/model-config.js';
import type { ModelInstance } from '../runtime/types.js';

/** Options of {@link runWarmup}. */
export interface WarmupOptions {
  /** The model directory (its `warmup/` folder holds `input_data_file`s). Required for file inputs. */
  readonly modelDirectory?: string;
  /** Upper bound on executions per sample and instance (guards against huge `count`s). Default 1000. */
  readonly maxCount?: number;
}

/** What warmup did, for logs. */
export interface WarmupReport {
  readonly samples: number;
  readonly executions: number;
}

/** A zero-copy typed-array view of `buffer` (offset 0, so always aligned) for `datatype`. */
function fixedView(datatype: FixedSizeDatatype, buffer: ArrayBuffer): Exclude<TensorData, Uint8Array[]> {
  return tensorDataFromBytes(datatype, new Uint8Array(buffer));
}

function sampleError(config: ModelConfig, sample: ModelWarmup, detail: string, cause?: unknown): ServerError {
  return new ServerError('INVALID_ARG', `model '${config.name}' warmup sample '${sample.name}': ${detail}`, {
    cause,
  });
}

function randomFixed(datatype: FixedSizeDatatype, buffer: ArrayBuffer): void {
  const view = fixedView(datatype, buffer);
  const n = view.length;
  if (view instanceof BigInt64Array || view instanceof BigUint64Array) {
    for (let i = 0; i < n; i++) view[i] = BigInt(Math.floor(Math.random() * 100));
  } else if (view instanceof Float32Array || view instanceof Float64Array) {
    for (let i = 0; i < n; i++) view[i] = Math.random();
  } else if (datatype === 'BOOL') {
    for (let i = 0; i < n; i++) view[i] = Math.random() < 0.5 ? 0 : 1;
  } else if (datatype === 'FP16') {
    // Half floats in [1, 2): exponent 15, random mantissa.
    for (let i = 0; i < n; i++) view[i] = 0x3c00 | Math.floor(Math.random() * 0x400);
  } else if (datatype === 'BF16') {
    for (let i = 0; i < n; i++) view[i] = 0x3f80 | Math.floor(Math.random() * 0x80);
  } else {
    for (let i = 0; i < n; i++) view[i] = Math.floor(Math.random() * 100);
  }
}

function parseBytesElements(raw: Uint8Array, count: number): Uint8Array[] | undefined {
  const out: Uint8Array[] = [];
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 4 > raw.byteLength) return undefined;
    const len = dv.getUint32(at, true);
    at += 4;
    if (at + len > raw.byteLength) return undefined;
    out.push(raw.subarray(at, at + len));
    at += len;
  }
  return out;
}

async function buildInput(
  config: ModelConfig,
  sample: ModelWarmup,
  name: string,
  input: WarmupInput,
  options: WarmupOptions,
): Promise<PackedTensor> {
  const datatype: Datatype | undefined = datatypeFromModelConfig(input.data_type);
  if (datatype === undefined)
    throw sampleError(config, sample, `input '${name}' has invalid data_type ${input.data_type}`);
  if (input.dims.some((d) => !Number.isInteger(d) || d < 0)) {
    throw sampleError(
      config,
      sample,
      `input '${name}' dims must be non-negative (got [${input.dims.join(',')}])`,
    );
  }
  const shape = config.max_batch_size > 0 ? [Math.max(1, sample.batch_size), ...input.dims] : [...input.dims];
  const count = elementCount(shape);
  const chosen = [
    input.zero_data === true,
    input.random_data === true,
    input.input_data_file !== undefined,
  ].filter(Boolean).length;
  if (chosen !== 1) {
    throw sampleError(
      config,
      sample,
      `input '${name}' must set exactly one of zero_data, random_data, input_data_file`,
    );
  }
  let fileBytes: Uint8Array | undefined;
  if (input.input_data_file !== undefined) {
    if (options.modelDirectory === undefined) {
      throw sampleError(config, sample, `input '${name}' reads a file but no model directory was given`);
    }
    const warmupDir = path.join(options.modelDirectory, 'warmup');
    let file: string;
    try {
      // The config may come from a load request: the file must stay inside warmup/, links included.
      file = await resolveInside(warmupDir, input.input_data_file, 'input_data_file', 'warmup/');
    } catch (error) {
      throw sampleError(config, sample, error instanceof Error ? error.message : String(error), error);
    }
    try {
      fileBytes = new Uint8Array(await readFile(file));
    } catch (error) {
      throw sampleError(config, sample, `cannot read warmup/${input.input_data_file}`, error);
    }
  }
  if (datatype === 'BYTES') {
    let data: Uint8Array[];
    if (fileBytes !== undefined) {
      const parsed = parseBytesElements(fileBytes, count);
      if (parsed === undefined) {
        throw sampleError(
          config,
          sample,
          `warmup/${input.input_data_file} holds fewer than ${count} BYTES elements`,
        );
      }
      data = parsed;
    } else if (input.random_data === true) {
      data = Array.from({ length: count }, () =>
        Uint8Array.from({ length: 8 }, () => 97 + Math.floor(Math.random() * 26)),
      );
    } else {
      data = Array.from({ length: count }, () => new Uint8Array(0));
    }
    return { name, datatype, shape, data: BytesList.from(data) };
  }
  const byteSize = count * DATATYPE_BYTE_SIZE[datatype];
  const buffer = new ArrayBuffer(byteSize);
  if (fileBytes !== undefined) {
    if (fileBytes.byteLength < byteSize) {
      throw sampleError(
        config,
        sample,
        `input '${name}' expects ${byteSize} bytes, but warmup/${input.input_data_file} only has ${fileBytes.byteLength} bytes`,
      );
    }
    new Uint8Array(buffer).set(fileBytes.subarray(0, byteSize));
  } else if (input.random_data === true) {
    randomFixed(datatype, buffer);
  }
  return { name, datatype, shape, data: fixedView(datatype, buffer) };
}

/**
 * Runs every `model_warmup` sample of `config` on every instance; resolves when all ran.
 * @throws ServerError INVALID_ARG for a malformed sample, INTERNAL when an execution fails.
 */
export async function runWarmup(
  config: ModelConfig,
  instances: readonly ModelInstance[],
  options: WarmupOptions = {},
): Promise<WarmupReport> {
  const maxCount = options.maxCount ?? 1000;
  let executions = 0;
  for (const sample of config.model_warmup) {
    const count = Math.max(1, sample.count);
    if (count > maxCount)
      throw sampleError(config, sample, `count ${count} exceeds the limit of ${maxCount}`);
    if (config.max_batch_size > 0 && sample.batch_size > config.max_batch_size) {
      throw sampleError(
        config,
        sample,
        `batch_size ${sample.batch_size} exceeds max_batch_size ${config.max_batch_size}`,
      );
    }
    const inputs = new Map<string, PackedTensor>();
    for (const [name, input] of Object.entries(sample.inputs)) {
      inputs.set(name, await buildInput(config, sample, name, input, options));
    }
    for (const instance of instances) {
      for (let i = 0; i < count; i++) {
        try {
          await instance.execute(inputs);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          throw new ServerError(
            'INTERNAL',
            `model '${config.name}' warmup sample '${sample.name}' failed on instance '${instance.name}': ${message}`,
            { cause: error },
          );
        }
        executions += 1;
      }
    }
  }
  return { samples: config.model_warmup.length, executions };
}
