/**
 * Reads a TF.js Keras-layers model (topology JSON + weight manifest + binary weights) and
 * dequantises its weights the way TF.js does (`value = q * scale + min`, rounded to float32).
 */
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { FoodModelError } from '../errors.js';

/** One entry of a TF.js weights manifest. */
export interface TfjsWeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string; min?: number; scale?: number };
}

/** A Keras layer as stored in the topology JSON (`model_config.config.layers[i]`). */
export interface KerasLayerJson {
  name: string;
  class_name: string;
  config: Record<string, unknown>;
  inbound_nodes: unknown[];
}

/** The parts of a TF.js Keras-layers model the converter needs. */
export interface TfjsLayersModelArtifacts {
  /** The whole `modelTopology` object (what `tf.loadLayersModel` reads). */
  modelTopology: Record<string, unknown>;
  /** Layers in the topology's (topological) order. */
  layers: KerasLayerJson[];
  /** Names of the model's output layers. */
  outputLayers: string[];
  /** Weight specs in manifest order (the order of the bytes in {@link weightData}). */
  weightSpecs: TfjsWeightSpec[];
  /** All weight shards concatenated. */
  weightData: Uint8Array;
}

/** A dequantised float32 weight with its TF.js shape. */
export interface DequantizedWeight {
  shape: number[];
  data: Float32Array;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalid(message: string): FoodModelError {
  return new FoodModelError('SOURCE_MODEL_INVALID', message);
}

/**
 * Validates a `{ modelTopology, weightsManifest }` object plus its concatenated shard bytes.
 * @throws FoodModelError `SOURCE_MODEL_INVALID` when the structure is not a Keras-layers model.
 */
export function parseLayersModel(modelJson: unknown, weightData: Uint8Array): TfjsLayersModelArtifacts {
  if (!isRecord(modelJson) || !isRecord(modelJson.modelTopology)) throw invalid('no modelTopology');
  const topology = modelJson.modelTopology;
  const modelConfig = topology.model_config;
  if (!isRecord(modelConfig) || !isRecord(modelConfig.config)) throw invalid('no model_config.config');
  const { layers, output_layers: outputs } = modelConfig.config;
  if (!Array.isArray(layers)) throw invalid('model_config.config.layers is not an array');
  const parsedLayers = layers.map((l: unknown, i): KerasLayerJson => {
    if (
      !isRecord(l) ||
      typeof l.name !== 'string' ||
      typeof l.class_name !== 'string' ||
      !isRecord(l.config) ||
      !Array.isArray(l.inbound_nodes)
    ) {
      throw invalid(`layer #${i} is malformed`);
    }
    return { name: l.name, class_name: l.class_name, config: l.config, inbound_nodes: l.inbound_nodes };
  });
  if (!Array.isArray(outputs)) throw invalid('model_config.config.output_layers is not an array');
  const outputLayers = outputs.map((o: unknown) => {
    if (!Array.isArray(o) || typeof o[0] !== 'string') throw invalid('malformed output_layers entry');
    return o[0];
  });
  const manifest = modelJson.weightsManifest;
  if (!Array.isArray(manifest)) throw invalid('no weightsManifest');
  const weightSpecs: TfjsWeightSpec[] = [];
  for (const group of manifest) {
    if (!isRecord(group) || !Array.isArray(group.weights)) throw invalid('malformed weightsManifest group');
    for (const w of group.weights) {
      if (
        !isRecord(w) ||
        typeof w.name !== 'string' ||
        !Array.isArray(w.shape) ||
        typeof w.dtype !== 'string'
      ) {
        throw invalid('malformed weight spec');
      }
      const spec: TfjsWeightSpec = { name: w.name, shape: w.shape.map(Number), dtype: w.dtype };
      if (isRecord(w.quantization)) {
        const q = w.quantization;
        spec.quantization = { dtype: String(q.dtype) };
        if (typeof q.min === 'number') spec.quantization.min = q.min;
        if (typeof q.scale === 'number') spec.quantization.scale = q.scale;
      }
      weightSpecs.push(spec);
    }
  }
  return { modelTopology: topology, layers: parsedLayers, outputLayers, weightSpecs, weightData };
}

const BYTES_PER_VALUE: Readonly<Record<string, number>> = { float32: 4, uint8: 1, uint16: 2 };

/**
 * Dequantises every weight in manifest order.
 * Supports float32 weights, uint8/uint16 affine quantisation (`q * scale + min`); anything else fails.
 * @throws FoodModelError `SOURCE_MODEL_INVALID` on an unsupported dtype or a short weight buffer.
 */
export function dequantizeWeights(model: TfjsLayersModelArtifacts): Map<string, DequantizedWeight> {
  const out = new Map<string, DequantizedWeight>();
  const view = new DataView(
    model.weightData.buffer,
    model.weightData.byteOffset,
    model.weightData.byteLength,
  );
  let offset = 0;
  for (const spec of model.weightSpecs) {
    if (spec.dtype !== 'float32') throw invalid(`weight ${spec.name}: dtype ${spec.dtype} is not supported`);
    const count = spec.shape.reduce((a, b) => a * b, 1);
    const stored = spec.quantization?.dtype ?? 'float32';
    const bytesPer = BYTES_PER_VALUE[stored];
    if (bytesPer === undefined) throw invalid(`weight ${spec.name}: quantization ${stored} is not supported`);
    if (offset + count * bytesPer > model.weightData.byteLength) {
      throw invalid(`weight ${spec.name} runs past the end of the weight data`);
    }
    const data = new Float32Array(count);
    if (stored === 'float32') {
      for (let i = 0; i < count; i++) data[i] = view.getFloat32(offset + 4 * i, true);
    } else {
      const { min, scale } = spec.quantization ?? {};
      if (min === undefined || scale === undefined) throw invalid(`weight ${spec.name}: no min/scale`);
      for (let i = 0; i < count; i++) {
        const q = stored === 'uint8' ? view.getUint8(offset + i) : view.getUint16(offset + 2 * i, true);
        data[i] = q * scale + min;
      }
    }
    offset += count * bytesPer;
    out.set(spec.name, { shape: spec.shape, data });
  }
  return out;
}

/** Absolute paths of the nsfwjs MobileNetV2 files inside node_modules. */
export interface NsfwjsModelFiles {
  modelFile: string;
  shardFiles: string[];
}

/** Locates nsfwjs' MobileNetV2 (`dist/models/mobilenet_v2/`) through Node's module resolution. */
export function locateNsfwjsMobileNetV2(): NsfwjsModelFiles {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve('nsfwjs');
  } catch (cause) {
    throw new FoodModelError('SOURCE_MODEL_INVALID', 'nsfwjs is not installed (a devDependency)', { cause });
  }
  // entry is <root>/dist/cjs/index.js
  const dir = join(resolve(dirname(entry), '..', '..'), 'dist', 'models', 'mobilenet_v2');
  return { modelFile: join(dir, 'model.min.js'), shardFiles: [join(dir, 'group1-shard1of1.min.js')] };
}

/**
 * Loads nsfwjs' MobileNetV2 from its JS bundles: the model bundle exports `{ modelTopology,
 * weightsManifest }` and each shard bundle exports the shard's bytes as a base64 string.
 */
export function loadNsfwjsMobileNetV2(
  files: NsfwjsModelFiles = locateNsfwjsMobileNetV2(),
): TfjsLayersModelArtifacts {
  const require = createRequire(import.meta.url);
  const modelJson: unknown = require(files.modelFile);
  const shards = files.shardFiles.map((f) => {
    const b64: unknown = require(f);
    if (typeof b64 !== 'string') throw invalid(`${f} does not export a base64 string`);
    return Buffer.from(b64, 'base64');
  });
  return parseLayersModel(modelJson, new Uint8Array(Buffer.concat(shards)));
}
