import 'server-only';
import { performance } from 'node:perf_hooks';
import { decodeImage, imagePixels, preprocessImage } from '@gourmetgram/image-preprocess';
import { TritonServerError, type TritonClient } from '@tritonserver-ts/client';
import { env } from '../env';
import type { Prediction } from '../lib/types';
import { GatewayError } from './errors';
import { checkImageSignature } from './image-signature';
import { oodApplies, outOfDistribution } from './ood';
import { Semaphore } from './semaphore';
import { inferTensor } from './shared-memory';
import { getModelInfo, modelTarget, resetModelInfo, tritonClient } from './triton';

/** Reused input tensors (600 kB each for 3×224×224): less garbage per request. */
const tensorPool: Float32Array[] = [];
const POOL_MAX = 16;

let decodeGate: Semaphore | undefined;
let pixelGate: Semaphore | undefined;

/**
 * Runs a decode within both bounds: at most `DECODE_CONCURRENCY` decodes, and at most
 * `DECODE_PIXEL_BUDGET` pixels being decoded (each upload weighs what its header declares). The one
 * way into the decoder: an upload without the signature of an accepted format (SVG, XML, HTML, gzip,
 * anything else) is refused here, before libvips sees a byte.
 */
async function decodeBounded<T>(bytes: Uint8Array, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  checkImageSignature(bytes);
  const { decodeConcurrency, decodePixelBudget } = env();
  if (decodeGate?.limit !== decodeConcurrency) decodeGate = new Semaphore(decodeConcurrency);
  if (pixelGate?.limit !== decodePixelBudget) pixelGate = new Semaphore(decodePixelBudget);
  const counted = decodeGate;
  const weighed = pixelGate;
  return counted.run(async () => weighed.run(fn, signal, (await imagePixels(bytes)) ?? 1), signal);
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
 * extension) for tensor models, or the base64 text of the image as BYTES [1,1] for Python-backend
 * models answering a label and a probability.
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
  let ood: Prediction['outOfDistribution'] = null;
  let t3: number; // end of inference
  try {
    if (model.path === 'tensor') {
      const size = model.input.shape.reduce((a, b) => a * b, 1);
      let buf = tensorPool.pop();
      if (buf?.length !== size) buf = new Float32Array(size);
      const pre = await decodeBounded(
        bytes,
        () => preprocessImage(bytes, model.preprocess, limits, buf),
        opts.signal,
      );
      decodeMs = pre.timings.decodeMs;
      preprocessMs = pre.timings.preprocessMs;
      image = { format: pre.image.format, width: pre.image.width, height: pre.image.height };
      const t1 = performance.now();
      // The out-of-distribution score rides along only when its calibration applies to this model.
      const oodOutput = oodApplies(model) ? model.oodOutput : undefined;
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
      if (logits.length !== model.numClasses) {
        throw new GatewayError(
          'INFERENCE_FAILED',
          `The model answered ${logits.length} scores; its config declares ${model.numClasses} classes.`,
        );
      }
      if (oodOutput) {
        const score = res.asFloat32Array(oodOutput)[0];
        if (score === undefined || !Number.isFinite(score)) {
          throw new GatewayError('INFERENCE_FAILED', `The model answered no finite ${oodOutput}.`);
        }
        ood = outOfDistribution(score);
      }
      const p = softmax(logits);
      top = Array.from(p, (probability, index) => ({
        index,
        label: model.labels[index] ?? `class ${index}`,
        probability,
      })).sort((a, b) => b.probability - a.probability);
    } else {
      // Validate like the tensor path (same 400/415 errors), then send the file's own bytes.
      const d0 = performance.now();
      const decoded = await decodeBounded(bytes, () => decodeImage(bytes, limits), opts.signal);
      image = { format: decoded.format, width: decoded.width, height: decoded.height };
      const d1 = performance.now();
      decodeMs = d1 - d0;
      const b64 = new TextEncoder().encode(
        Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
      );
      const t1 = performance.now();
      preprocessMs = t1 - d1;
      const res = await client.infer(
        model.name,
        [{ name: model.input.name, datatype: 'BYTES', shape: model.input.shape, data: [b64] }],
        {
          ...common,
          outputs: [
            { name: model.output.name, binaryData: true },
            { name: model.probabilityOutput ?? 'PROBABILITY', binaryData: true },
          ],
        },
      );
      const t2 = performance.now();
      inferMs = t2 - t1;
      t3 = t2;
      const label = res.asStrings(model.output.name)[0] ?? '';
      const probA = res.asFloat32Array(model.probabilityOutput ?? 'PROBABILITY');
      const probability = probA[0];
      if (!label || probability === undefined || !Number.isFinite(probability)) {
        throw new GatewayError('INFERENCE_FAILED', 'The model answered without a label or a probability.');
      }
      top = [{ index: -1, label, probability }];
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
