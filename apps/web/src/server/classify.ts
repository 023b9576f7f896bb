import 'server-only';
import { performance } from 'node:perf_hooks';
import {
  checkImageSignature,
  decodeImage,
  imagePixels,
  preprocessImage,
  type CheckedImage,
} from '@gourmetgram/image-preprocess';
import { TritonServerError, type TritonClient } from '@tritonserver-ts/client';
import { env } from '../env';
import type { Prediction } from '../lib/types';
import { GatewayError } from './errors';
import { checkImageSize, checkNotFlatRgb, checkNotFlatTensor } from './image-checks';
import { oodApplies, outOfDistribution } from './ood';
import { Semaphore } from './semaphore';
import { inferTensor } from './shared-memory';
import { getModelInfo, modelTarget, resetModelInfo, tritonClient, type ModelInfo } from './triton';
import { verdictOf } from './verdict';

/** Reused input tensors (600 kB each for 3×224×224): less garbage per request. */
const tensorPool: Float32Array[] = [];
const POOL_MAX = 16;

let decodeGate: Semaphore | undefined;
let pixelGate: Semaphore | undefined;

/**
 * Runs a decode within both bounds: at most `DECODE_CONCURRENCY` decodes, and at most
 * `DECODE_PIXEL_BUDGET` pixels being decoded (each upload weighs what its header declares). The one
 * way into the decoder, and the one image-signature check of the request: an upload without the
 * signature of an accepted format (SVG, XML, HTML, gzip, anything else) is refused here, before
 * libvips sees a byte; `decode` gets the checked image, which the decoders do not check again.
 */
async function decodeBounded<T>(
  bytes: Uint8Array,
  decode: (image: CheckedImage) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const image = checkImageSignature(bytes);
  const { decodeConcurrency, decodePixelBudget } = env();
  if (decodeGate?.limit !== decodeConcurrency) decodeGate = new Semaphore(decodeConcurrency);
  if (pixelGate?.limit !== decodePixelBudget) pixelGate = new Semaphore(decodePixelBudget);
  const counted = decodeGate;
  const weighed = pixelGate;
  return counted.run(
    async () => weighed.run(() => decode(image), signal, (await imagePixels(image)) ?? 1),
    signal,
  );
}

/** Numerically stable softmax in float64. */
export function softmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]!);
  const out = new Float64Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    const e = Math.exp(logits[i]! - max);
    out[i] = e;
    sum += e;
  }
  for (let i = 0; i < out.length; i++) out[i]! /= sum;
  return out;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/** Every class with its probability, most likely first. */
function ranked(probabilities: ArrayLike<number>, labels: readonly string[]): Prediction['top'] {
  return Array.from(probabilities, (probability, index) => ({
    index,
    label: labels[index] ?? `class ${index}`,
    probability,
  })).sort((a, b) => b.probability - a.probability);
}

/** The one out-of-distribution score of an answer, when the model's calibration applies. */
function oodOf(res: { asFloat32Array(name: string): Float32Array }, output: string | undefined) {
  if (output === undefined) return null;
  const score = res.asFloat32Array(output)[0];
  if (score === undefined || !Number.isFinite(score)) {
    throw new GatewayError('INFERENCE_FAILED', `The model answered no finite ${output}.`);
  }
  return outOfDistribution(score);
}

/** `INFERENCE_FAILED` unless the model answered one score per class. */
function checkClassCount(values: ArrayLike<number>, model: ModelInfo, what: string): void {
  if (values.length !== model.numClasses) {
    throw new GatewayError(
      'INFERENCE_FAILED',
      `The model answered ${values.length} ${what}; its config declares ${model.numClasses} classes.`,
    );
  }
}

/** Whether the model is still ready (after a failed inference); `true` when that cannot be told. */
async function stillReady(client: TritonClient, name: string, version: string | undefined): Promise<boolean> {
  try {
    return await client.isModelReady(name, version, { timeoutMs: 2000, maxRetries: 0 });
  } catch {
    return true;
  }
}

export interface ClassifyOptions {
  requestId: string;
  /** The incoming request's signal: a closed tab cancels the inference. */
  signal?: AbortSignal;
  /** The model to run (one of FOOD11_MODEL_CHOICES, checked by the caller); default FOOD11_MODEL_NAME. */
  model?: string;
}

/**
 * Upload bytes → prediction. Chooses the path from the model config: the FP32 tensor (binary tensor
 * extension) for tensor models, the base64 text of the image as BYTES [1,1] for Python-backend
 * models with the original contract (a label and a probability; every probability and `OOD_SCORE`
 * when declared), or the image's raw bytes as BYTES [1,1] for models answering logits (the
 * ensemble). Every path refuses tiny and flat images before inference and ends in the same verdict.
 */
export async function classify(bytes: Uint8Array, opts: ClassifyOptions): Promise<Prediction> {
  const t0 = performance.now();
  const { maxImagePixels, inferenceTimeoutMs } = env();
  const { modelVersion } = modelTarget(opts.model);
  const model = await getModelInfo(opts.signal, opts.model);
  const limits = { maxPixels: maxImagePixels };
  const signalOpt = opts.signal ? { signal: opts.signal } : {};
  const common = {
    ...signalOpt,
    requestId: opts.requestId,
    timeoutMs: inferenceTimeoutMs,
    ...(modelVersion ? { modelVersion } : {}),
  };
  const client = await tritonClient();
  let decodeMs: number;
  let preprocessMs: number;
  let inferMs: number;
  let top: Prediction['top'];
  let image: Prediction['image'];
  let ood: Prediction['outOfDistribution'];
  let t3: number; // end of inference
  try {
    // The out-of-distribution score rides along only when its calibration applies to this model.
    const oodOutput = oodApplies(model) ? model.oodOutput : undefined;
    if (model.path === 'tensor') {
      const size = model.input.shape.reduce((a, b) => a * b, 1);
      let buf = tensorPool.pop();
      if (buf?.length !== size) buf = new Float32Array(size);
      const pre = await decodeBounded(
        bytes,
        (checked) => preprocessImage(checked, model.preprocess, limits, buf),
        opts.signal,
      );
      decodeMs = pre.timings.decodeMs;
      preprocessMs = pre.timings.preprocessMs;
      image = { format: pre.image.format, width: pre.image.width, height: pre.image.height };
      try {
        checkImageSize(image.width, image.height);
        checkNotFlatTensor(pre.tensor, model.preprocess);
      } catch (err) {
        if (tensorPool.length < POOL_MAX) tensorPool.push(pre.tensor);
        throw err;
      }
      const t1 = performance.now();
      // In the request body, or through a shared-memory region (TRITON_SHARED_MEMORY).
      const res = await inferTensor(
        client,
        model.name,
        { name: model.input.name, shape: model.input.shape, data: pre.tensor },
        {
          ...common,
          outputs: [
            { name: model.output.name, binaryData: true },
            ...(oodOutput ? [{ name: oodOutput, binaryData: true }] : []),
          ],
        },
      ).finally(() => {
        // The request body has been built and sent (or abandoned): the tensor can be reused.
        if (tensorPool.length < POOL_MAX) tensorPool.push(pre.tensor);
      });
      const t2 = performance.now();
      inferMs = t2 - t1;
      t3 = t2;
      const logits = res.asFloat32Array(model.output.name);
      checkClassCount(logits, model, 'scores');
      ood = oodOf(res, oodOutput);
      top = ranked(softmax(logits), model.labels);
    } else {
      // Validate like the tensor path (same 400/415/422 errors), then send the file's own bytes:
      // base64 text on the python path (the original contract), raw on the ensemble path.
      const d0 = performance.now();
      const decoded = await decodeBounded(bytes, (checked) => decodeImage(checked, limits), opts.signal);
      image = { format: decoded.format, width: decoded.width, height: decoded.height };
      checkImageSize(image.width, image.height);
      checkNotFlatRgb(decoded.data);
      const d1 = performance.now();
      decodeMs = d1 - d0;
      const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const data = model.path === 'python' ? new TextEncoder().encode(view.toString('base64')) : bytes;
      const t1 = performance.now();
      preprocessMs = t1 - d1;
      const wanted =
        model.path === 'python'
          ? [model.output.name, model.probabilityOutput ?? 'PROBABILITY', model.probabilitiesOutput]
          : [model.output.name];
      const res = await client.infer(
        model.name,
        [{ name: model.input.name, datatype: 'BYTES', shape: model.input.shape, data: [data] }],
        {
          ...common,
          outputs: [...wanted, oodOutput]
            .filter((n): n is string => n !== undefined)
            .map((name) => ({ name, binaryData: true })),
        },
      );
      const t2 = performance.now();
      inferMs = t2 - t1;
      t3 = t2;
      ood = oodOf(res, oodOutput);
      if (model.path === 'ensemble') {
        const logits = res.asFloat32Array(model.output.name);
        checkClassCount(logits, model, 'scores');
        top = ranked(softmax(logits), model.labels);
      } else if (model.probabilitiesOutput !== undefined) {
        const probabilities = res.asFloat32Array(model.probabilitiesOutput);
        checkClassCount(probabilities, model, 'probabilities');
        if (!Array.from(probabilities).every((p) => Number.isFinite(p) && p >= 0 && p <= 1)) {
          throw new GatewayError('INFERENCE_FAILED', 'The model answered probabilities outside [0, 1].');
        }
        top = ranked(Float64Array.from(probabilities), model.labels);
      } else {
        // The original contract alone: the top class only.
        const label = res.asStrings(model.output.name)[0] ?? '';
        const probability = res.asFloat32Array(model.probabilityOutput ?? 'PROBABILITY')[0];
        if (!label || probability === undefined || !Number.isFinite(probability)) {
          throw new GatewayError('INFERENCE_FAILED', 'The model answered without a label or a probability.');
        }
        top = [{ index: -1, label, probability }];
      }
    }
  } catch (err) {
    if (err instanceof TritonServerError) {
      // The model may have been reloaded with another config; read it again next time.
      resetModelInfo();
      // Triton calls a model it no longer knows an invalid argument: ask whether it is still ready
      // rather than read the message.
      if (err.reason !== 'UNAVAILABLE' && !(await stillReady(client, model.name, common.modelVersion))) {
        throw new GatewayError('MODEL_UNAVAILABLE', `The model is not available: ${err.message}`, {
          cause: err,
        });
      }
    }
    throw err;
  }
  const best = top[0]!;
  const t4 = performance.now();
  return {
    requestId: opts.requestId,
    label: best.label,
    probability: best.probability,
    top,
    verdict: verdictOf(top, ood),
    model: { name: model.name, version: model.version, backend: model.backend, path: model.path },
    image,
    timings: {
      decode: round(decodeMs),
      preprocess: round(preprocessMs),
      infer: round(inferMs),
      postprocess: round(t4 - t3),
      total: round(t4 - t0),
    },
    outOfDistribution: ood,
    createdAt: new Date().toISOString(),
  };
}
