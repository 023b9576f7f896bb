import 'server-only';
import type { PreprocessConfig } from '@gourmetgram/image-preprocess';
import { preprocessConfigFromParameters } from '@gourmetgram/image-preprocess';
import {
  datatypeFromModelConfig,
  TritonClient,
  type ClassificationEntry,
  type ModelConfig,
  type ModelConfigTensor,
} from '@tritonserver-ts/client';
import { modelBackend } from '@tritonserver-ts/protocol';
import sharp from 'sharp';
import { env } from '../env';
import type { InferencePath } from '../lib/types';
import { GatewayError } from './errors';
import { MEAN_COLOUR, type Fingerprint } from './ood';

export type { InferencePath };

/** What the gateway needs to know about the model; read once from its config and cached. */
export interface ModelInfo {
  name: string;
  version: string;
  backend: string;
  path: InferencePath;
  maxBatchSize: number;
  input: { name: string; datatype: string; shape: number[] };
  /** tensor and ensemble paths: the logits output; python path: the label output. */
  output: { name: string; datatype: string };
  /** python path: the top class's probability output (`PROBABILITY`). */
  probabilityOutput?: string;
  /** python path: every class's probability (`PROBABILITIES`), when the config declares it. */
  probabilitiesOutput?: string;
  /**
   * The FP32 `[1]` out-of-distribution output when the config declares one: `ood_score` (tensor and
   * ensemble paths) or `OOD_SCORE` (python path).
   */
  oodOutput?: string;
  /**
   * What the model answers for the blank input, the labels being read on the way: the all-zero
   * tensor's logits (tensor path, 6 decimals as Triton's classification strings print them) or the
   * mean-colour photo's (encoded-image paths). Tells the calibrated model from another.
   */
  fingerprint?: Fingerprint;
  /** Classes the model answers (0: a python-path model answering only its top class). */
  numClasses: number;
  labels: string[];
  preprocess: PreprocessConfig;
}

/**
 * The name of the demo model's out-of-distribution output (see packages/food-model); the
 * Python-backend model's `OOD_SCORE` passes it on (names are compared without case).
 */
export const OOD_OUTPUT = 'ood_score';

const size = (dims: readonly number[]) => dims.reduce((a, b) => a * b, 1);

let client: { key: string; client: Promise<TritonClient> } | undefined;

/**
 * A client for `url` over `protocol`. The gRPC transport (and @grpc/grpc-js) is imported only when
 * gRPC is selected, so an HTTP gateway never loads it.
 */
async function createClient(
  protocol: 'http' | 'grpc',
  url: string,
  timeoutMs: number,
): Promise<TritonClient> {
  const options = { timeoutMs, maxRetries: 1 };
  if (protocol === 'http') return new TritonClient({ url, ...options });
  const { createGrpcClient } = await import('@tritonserver-ts/client/grpc');
  return createGrpcClient({ url, ...options });
}

/**
 * The one client of this process (keep-alive pool over HTTP, one channel over gRPC), recreated if
 * the configured protocol or URL changes.
 */
export function tritonClient(): Promise<TritonClient> {
  const { tritonProtocol, tritonUrl, inferenceTimeoutMs } = env();
  const key = `${tritonProtocol}|${tritonUrl}|${inferenceTimeoutMs}`;
  if (client?.key !== key) {
    const old = client?.client;
    void old?.then((c) => c.close()).catch(() => undefined);
    const created = createClient(tritonProtocol, tritonUrl, inferenceTimeoutMs);
    client = { key, client: created };
    created.catch(() => {
      if (client?.client === created) client = undefined;
    });
  }
  return client.client;
}

const num = (v: unknown): number => Number(v);

function tensorConfig(t: ModelConfigTensor | undefined, what: string) {
  if (!t) throw new GatewayError('MODEL_CONFIG_INVALID', `The model config has no ${what}.`);
  const datatype = datatypeFromModelConfig(t.data_type) ?? t.data_type.replace(/^TYPE_/, '');
  const dims = Array.isArray(t.dims) ? t.dims.map(num) : [];
  return { name: t.name, datatype, dims };
}

/**
 * Derives the inference path and tensor names from a model config (the client's `ModelConfig`,
 * the same over HTTP and gRPC). Exported for tests; the route uses {@link getModelInfo}.
 */
export function modelInfoFromConfig(cfg: ModelConfig, version: string): Omit<ModelInfo, 'labels'> {
  const name = cfg.name;
  // `onnxruntime_onnx` → `onnxruntime`, … (Triton's names; an ensemble names no backend).
  const backend = modelBackend(cfg) ?? '';
  const maxBatchSize = num(cfg.max_batch_size ?? 0);
  const input = tensorConfig(cfg.input?.[0], 'input');
  const outputs = (cfg.output ?? []).map((o, i) => tensorConfig(o, `output ${i}`));
  const batch = maxBatchSize > 0 ? [1] : [];
  const preprocess = preprocessConfigFromParameters(cfg.parameters);
  if (backend === 'python' || input.datatype === 'BYTES') {
    // An encoded photo in. A BYTES label out is the original GourmetGram contract (base64 text in,
    // FOOD_LABEL and PROBABILITY out, optionally PROBABILITIES and OOD_SCORE); FP32 logits out is a
    // server-side pipeline such as food_classifier_ensemble (the raw bytes in).
    const shape = [...batch, ...input.dims.map((d) => (d < 0 ? 1 : d))];
    const common = {
      name,
      version,
      backend: backend || (cfg.platform === 'ensemble' ? 'ensemble' : 'python'),
      maxBatchSize,
      input: { name: input.name, datatype: 'BYTES', shape: shape.length ? shape : [1] },
      preprocess,
    };
    const fp32 = outputs.filter((o) => o.datatype === 'FP32');
    const ood = fp32.find((o) => o.name.toLowerCase() === OOD_OUTPUT && size(o.dims) === 1);
    const label = outputs.find((o) => o.datatype === 'BYTES');
    const classes = (o: { dims: number[] }) => o.dims[o.dims.length - 1] ?? 0;
    if (label) {
      const prob = fp32.find((o) => o !== ood && size(o.dims) === 1);
      if (!prob) {
        throw new GatewayError(
          'MODEL_CONFIG_INVALID',
          `Model "${name}" takes BYTES but does not answer a BYTES label and an FP32 probability.`,
        );
      }
      const every = fp32.find((o) => o !== ood && o !== prob && classes(o) > 1);
      return {
        ...common,
        path: 'python',
        output: { name: label.name, datatype: 'BYTES' },
        probabilityOutput: prob.name,
        ...(every ? { probabilitiesOutput: every.name } : {}),
        ...(ood ? { oodOutput: ood.name } : {}),
        numClasses: every ? classes(every) : 0,
      };
    }
    const logits = fp32.find((o) => o !== ood && classes(o) > 1);
    if (!logits) {
      throw new GatewayError(
        'MODEL_CONFIG_INVALID',
        `Model "${name}" takes BYTES but answers neither a BYTES label and an FP32 probability nor FP32 logits.`,
      );
    }
    return {
      ...common,
      path: 'ensemble',
      output: { name: logits.name, datatype: 'FP32' },
      ...(ood ? { oodOutput: ood.name } : {}),
      numClasses: classes(logits),
    };
  }
  const out = outputs[0];
  if (!out) throw new GatewayError('MODEL_CONFIG_INVALID', `Model "${name}" declares no output.`);
  if (input.datatype !== 'FP32') {
    throw new GatewayError(
      'MODEL_CONFIG_INVALID',
      `Model "${name}" takes ${input.datatype}; the gateway sends FP32 images.`,
    );
  }
  // Image dims come from the preprocessing parameters when present, else from the input dims.
  const chw = preprocess.layout === 'CHW';
  const dims =
    input.dims.length === 3
      ? input.dims
      : chw
        ? [3, preprocess.height, preprocess.width]
        : [preprocess.height, preprocess.width, 3];
  const fixed = dims.every((d) => d > 0);
  if (fixed) {
    const [h, w] = chw ? [dims[1]!, dims[2]!] : [dims[0]!, dims[1]!];
    if (cfg.parameters?.preprocess_size === undefined) {
      preprocess.height = h;
      preprocess.width = w;
    }
  }
  const shape = [
    ...batch,
    ...(chw ? [3, preprocess.height, preprocess.width] : [preprocess.height, preprocess.width, 3]),
  ];
  const numClasses = out.dims.length ? Math.max(1, out.dims[out.dims.length - 1] ?? 1) : 1;
  const ood = outputs.find(
    (o, i) => i > 0 && o.name === OOD_OUTPUT && o.datatype === 'FP32' && size(o.dims) === 1,
  );
  return {
    ...(ood ? { oodOutput: ood.name } : {}),
    name,
    version,
    backend: backend || 'onnxruntime',
    path: 'tensor',
    maxBatchSize,
    input: { name: input.name, datatype: 'FP32', shape },
    output: { name: out.name, datatype: out.datatype },
    numClasses,
    preprocess,
  };
}

/**
 * Labels and values by class index from classification entries (parsed by the client's
 * `InferResult.classifications`); `NaN` and `class i` for an index not listed, entries outside
 * `[0, numClasses)` ignored.
 */
export function classesByIndex(
  entries: readonly ClassificationEntry[],
  numClasses: number,
): { labels: string[]; values: number[] } {
  const labels = Array.from({ length: numClasses }, (_, i) => `class ${i}`);
  const values = Array.from({ length: numClasses }, () => NaN);
  for (const { value, index, label } of entries) {
    if (index >= numClasses) continue;
    values[index] = value;
    if (label !== undefined) labels[index] = label;
  }
  return { labels, values };
}

/**
 * The model a request runs and the version it pins: `name` (one of `FOOD11_MODEL_CHOICES`, checked
 * by the caller) or `FOOD11_MODEL_NAME`; FOOD11_MODEL_VERSION pins the default model only, the other
 * choices run the version the server picks ('').
 */
export function modelTarget(name?: string): { modelName: string; modelVersion: string } {
  const { modelName, modelVersion } = env();
  return name === undefined || name === modelName
    ? { modelName, modelVersion }
    : { modelName: name, modelVersion: '' };
}

const cache = new Map<string, Promise<ModelInfo>>();

let meanColour: Promise<Buffer> | undefined;
/** The fingerprint photo of the encoded-image paths: a 64×64 PNG of {@link MEAN_COLOUR}. */
export function meanColourPhoto(): Promise<Buffer> {
  const [r, g, b] = MEAN_COLOUR;
  meanColour ??= sharp({ create: { width: 64, height: 64, channels: 3, background: { r, g, b } } })
    .png()
    .toBuffer();
  return meanColour;
}

async function loadModelInfo(name?: string): Promise<ModelInfo> {
  const { inferenceTimeoutMs } = env();
  const { modelName, modelVersion } = modelTarget(name);
  const c = await tritonClient();
  // Shared by concurrent requests: bounded by the timeout, not by one caller's signal.
  const opts = { timeoutMs: inferenceTimeoutMs };
  const ready = await c.isModelReady(modelName, modelVersion || undefined, opts);
  if (!ready) {
    throw new GatewayError(
      'MODEL_UNAVAILABLE',
      `The model "${modelName}" is not ready on the inference server.`,
    );
  }
  const [config, metadata] = await Promise.all([
    c.getModelConfig(modelName, modelVersion || undefined, opts),
    c.getModelMetadata(modelName, modelVersion || undefined, opts),
  ]);
  const versions = metadata.versions ?? [];
  const version =
    modelVersion ||
    versions
      .map(Number)
      .sort((a, b) => b - a)[0]
      ?.toString() ||
    '';
  const base = modelInfoFromConfig(config, version);
  const inferOpts = { ...opts, ...(modelVersion ? { modelVersion } : {}) };
  if (base.path === 'tensor') {
    // Learn the class names through Triton's classification extension (it reads label_filename),
    // one warm-up inference on a blank image. Works the same on real Triton.
    const res = await c.infer(
      modelName,
      [
        {
          name: base.input.name,
          datatype: 'FP32',
          shape: base.input.shape,
          data: new Float32Array(size(base.input.shape)),
        },
      ],
      { ...inferOpts, outputs: [{ name: base.output.name, classCount: base.numClasses }] },
    );
    const { labels, values } = classesByIndex(res.classifications(base.output.name), base.numClasses);
    return { ...base, labels, fingerprint: { input: 'zero-tensor', logits: values } };
  }
  // Encoded-image paths: the same through the mean-colour photo, in two calls (the classification
  // strings for the labels, then the binary values, as probabilities near 1e-6 need more than the
  // strings' 6 decimals).
  const classOutput = base.path === 'python' ? base.probabilitiesOutput : base.output.name;
  if (classOutput === undefined) return { ...base, labels: [] };
  const photo = await meanColourPhoto();
  const data = base.path === 'python' ? new TextEncoder().encode(photo.toString('base64')) : photo;
  const input = [
    { name: base.input.name, datatype: 'BYTES' as const, shape: base.input.shape, data: [data] },
  ];
  const named = await c.infer(modelName, input, {
    ...inferOpts,
    outputs: [{ name: classOutput, classCount: base.numClasses }],
  });
  const { labels } = classesByIndex(named.classifications(classOutput), base.numClasses);
  const raw = await c.infer(modelName, input, {
    ...inferOpts,
    outputs: [{ name: classOutput, binaryData: true }],
  });
  const values = Array.from(raw.asFloat32Array(classOutput));
  const logits = base.path === 'python' ? values.map((p) => Math.log(p)) : values;
  return { ...base, labels, fingerprint: { input: 'mean-colour-photo', logits } };
}

/**
 * The info of model `name` (default FOOD11_MODEL_NAME), read once per (server, model, version) and
 * cached; a failed read is retried next time. `signal` only stops this caller's wait, never the
 * shared read.
 */
export function getModelInfo(signal?: AbortSignal, name?: string): Promise<ModelInfo> {
  const { tritonProtocol, tritonUrl } = env();
  const { modelName, modelVersion } = modelTarget(name);
  const key = `${tritonProtocol}|${tritonUrl}|${modelName}|${modelVersion}`;
  let shared = cache.get(key);
  if (!shared) {
    const info = loadModelInfo(modelName);
    shared = info;
    cache.set(key, info);
    info.catch(() => {
      if (cache.get(key) === info) cache.delete(key);
    });
  }
  if (!signal) return shared;
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise<ModelInfo>((resolve, reject) => {
    const onAbort = () => reject(abortError());
    signal.addEventListener('abort', onAbort, { once: true });
    shared.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function abortError(): Error {
  return new GatewayError('CLIENT_CLOSED_REQUEST', 'The request was cancelled by the client.');
}

/** Forget the cached model info (after a model changed, or between tests). */
export function resetModelInfo(): void {
  cache.clear();
}
