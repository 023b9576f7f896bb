/**
 * Bench helper: an MNIST-sized CNN generated with the project's ONNX writer (never downloaded), the
 * shape of the seed `mnist-sandbox` model: FP32 `input` `[-1,1,28,28]` → `output` `[-1,10]`.
 *
 * Conv 1→8 3x3 (pad 1) + Relu + MaxPool 2x2, Conv 8→16 3x3 (pad 1) + Relu + MaxPool 2x2, Flatten,
 * Gemm 784→10. Weights are seeded pseudo-random (He-scaled), so the same seed gives the same bytes.
 * About 0.29 M multiply-adds per image (a 224x224 food image is ~300 M): per-execution overhead,
 * not compute, dominates at batch 1, which is what the dynamic batching suite measures.
 */
import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';

/** Input name, per-request dims (without the batch dim), output name and width of the model. */
export const MNIST = {
  input: 'input',
  dims: [1, 28, 28] as readonly number[],
  output: 'output',
  classes: 10,
} as const;

/** A small deterministic PRNG (mulberry32) in [0, 1). */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function weights(random: () => number, count: number, fanIn: number): Float32Array {
  const scale = Math.sqrt(2 / fanIn);
  return new Float32Array(count).map(() => (random() * 2 - 1) * scale);
}

/** ONNX bytes of the MNIST-sized CNN (opset 13), weights from `seed`. */
export function buildMnistOnnx(seed = 11): Uint8Array {
  const random = prng(seed);
  const g = new OnnxGraphBuilder({ name: 'mnist_cnn', docString: 'MNIST-sized CNN for the batching bench' });
  g.addInput(MNIST.input, 'FLOAT', ['batch', ...MNIST.dims]);
  const conv = (x: string, from: number, to: number, n: number): string => {
    g.addInitializer(`conv${n}_w`, {
      type: 'FLOAT',
      dims: [to, from, 3, 3],
      data: weights(random, to * from * 9, from * 9),
    });
    g.addInitializer(`conv${n}_b`, { type: 'FLOAT', dims: [to], data: new Float32Array(to) });
    g.addNode('Conv', [x, `conv${n}_w`, `conv${n}_b`], [`conv${n}`], {
      kernel_shape: { kind: 'ints', value: [3, 3] },
      pads: { kind: 'ints', value: [1, 1, 1, 1] },
    });
    g.addNode('Relu', [`conv${n}`], [`relu${n}`]);
    g.addNode('MaxPool', [`relu${n}`], [`pool${n}`], {
      kernel_shape: { kind: 'ints', value: [2, 2] },
      strides: { kind: 'ints', value: [2, 2] },
    });
    return `pool${n}`;
  };
  const features = conv(conv(MNIST.input, 1, 8, 1), 8, 16, 2); // [N,16,7,7]
  g.addNode('Flatten', [features], ['flat'], { axis: { kind: 'int', value: 1 } });
  const flat = 16 * 7 * 7;
  g.addInitializer('fc_w', {
    type: 'FLOAT',
    dims: [flat, MNIST.classes],
    data: weights(random, flat * MNIST.classes, flat),
  });
  g.addInitializer('fc_b', { type: 'FLOAT', dims: [MNIST.classes], data: new Float32Array(MNIST.classes) });
  g.addNode('Gemm', ['flat', 'fc_w', 'fc_b'], [MNIST.output]);
  g.addOutput(MNIST.output, 'FLOAT', ['batch', MNIST.classes]);
  return g.toBytes();
}

/** Options of {@link mnistConfig}. */
export interface MnistConfigOptions {
  readonly name: string;
  readonly maxBatchSize: number;
  readonly instances: number;
  /** `dynamic_batching` settings, or none (each request runs alone). */
  readonly dynamicBatching?: { readonly maxQueueDelayUs: number; readonly preferred?: readonly number[] };
}

/** `config.pbtxt` text for the MNIST model (one intra-op thread per instance, as the server's default). */
export function mnistConfig(o: MnistConfigOptions): string {
  const db = o.dynamicBatching;
  return [
    `name: "${o.name}"`,
    'backend: "onnxruntime"',
    `max_batch_size: ${o.maxBatchSize}`,
    `input [ { name: "${MNIST.input}" data_type: TYPE_FP32 dims: [ ${MNIST.dims.join(', ')} ] } ]`,
    `output [ { name: "${MNIST.output}" data_type: TYPE_FP32 dims: [ ${MNIST.classes} ] } ]`,
    `instance_group [ { count: ${o.instances} kind: KIND_CPU } ]`,
    db === undefined
      ? ''
      : `dynamic_batching { ${
          db.preferred !== undefined && db.preferred.length > 0
            ? `preferred_batch_size: [ ${db.preferred.join(', ')} ] `
            : ''
        }max_queue_delay_microseconds: ${db.maxQueueDelayUs} }`,
    'parameters: { key: "intra_op_thread_count" value: { string_value: "1" } }',
    'parameters: { key: "inter_op_thread_count" value: { string_value: "1" } }',
    '',
  ].join('\n');
}
