/**
 * Converts a TF.js Keras-layers model (channels_last) into ONNX nodes (NCHW) on an
 * {@link OnnxGraphBuilder}. Supported layers: InputLayer, ZeroPadding2D, Conv2D, DepthwiseConv2D,
 * BatchNormalization (folded into the preceding convolution when possible), ReLU, Add,
 * AveragePooling2D, GlobalAveragePooling2D, Flatten, Dense and Dropout (identity at inference).
 * Anything else fails with `UNSUPPORTED_LAYER`.
 */
import type { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';
import { FoodModelError } from '../errors.js';
import type { DequantizedWeight, KerasLayerJson, TfjsLayersModelArtifacts } from './tfjs-artifacts.js';
import { dequantizeWeights } from './tfjs-artifacts.js';

/** Shape of a converted tensor without the batch dimension: `[C, H, W]` (NCHW) or `[features]`. */
export type ConvertedShape = readonly [number, number, number] | readonly [number];

/** A Keras layer's output in the ONNX graph. */
export interface ConvertedTensor {
  /** ONNX tensor name. */
  name: string;
  /** Shape without the batch dimension, in ONNX layout. */
  shape: ConvertedShape;
}

/** Options for {@link convertLayersModel}. */
export interface ConvertOptions {
  /** Name of an existing NCHW float tensor in the graph that feeds the model's InputLayer. */
  inputTensor: string;
  /** Layers whose outputs are needed; only their ancestors are converted. Default: the model outputs. */
  outputLayers?: readonly string[];
  /** Prefix for every ONNX name the converter creates (avoids clashes). Default `''`. */
  namePrefix?: string;
  /** Fold BatchNormalization into the preceding convolution (default true). */
  foldBatchNorm?: boolean;
}

interface Ctx {
  g: OnnxGraphBuilder;
  weights: Map<string, DequantizedWeight>;
  tensors: Map<string, ConvertedTensor>;
  consumers: Map<string, KerasLayerJson[]>;
  prefix: string;
  foldBatchNorm: boolean;
  /** Requested output layers: a convolution that is itself an output is never folded. */
  outputs: ReadonlySet<string>;
}

function unsupported(layer: KerasLayerJson, what: string): FoodModelError {
  return new FoodModelError('UNSUPPORTED_CONFIG', `layer ${layer.name} (${layer.class_name}): ${what}`);
}

/** Keras layer classes the converter understands. */
export const SUPPORTED_LAYER_CLASSES: ReadonlySet<string> = new Set([
  'InputLayer',
  'ZeroPadding2D',
  'Conv2D',
  'DepthwiseConv2D',
  'BatchNormalization',
  'ReLU',
  'Add',
  'AveragePooling2D',
  'GlobalAveragePooling2D',
  'Flatten',
  'Dense',
  'Dropout',
]);

/** Names of the layers feeding `layer` (single-call layers only). */
export function inboundLayerNames(layer: KerasLayerJson): string[] {
  if (layer.inbound_nodes.length === 0) return [];
  if (layer.inbound_nodes.length !== 1) throw unsupported(layer, 'shared layers (several inbound nodes)');
  const node = layer.inbound_nodes[0];
  if (!Array.isArray(node)) throw unsupported(layer, 'malformed inbound node');
  return node.map((entry: unknown) => {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || entry[1] !== 0 || entry[2] !== 0) {
      throw unsupported(layer, 'inbound tensor is not output 0 of node 0');
    }
    return entry[0];
  });
}

function num(layer: KerasLayerJson, key: string): number {
  const v = layer.config[key];
  if (typeof v !== 'number') throw unsupported(layer, `config.${key} is not a number`);
  return v;
}

function pair(layer: KerasLayerJson, key: string): [number, number] {
  const v = layer.config[key];
  if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== 'number' || typeof v[1] !== 'number') {
    throw unsupported(layer, `config.${key} is not a pair of numbers`);
  }
  return [v[0], v[1]];
}

function weight(ctx: Ctx, layer: KerasLayerJson, suffix: string): DequantizedWeight {
  const w = ctx.weights.get(`${layer.name}/${suffix}`);
  if (!w) throw new FoodModelError('WEIGHT_MISSING', `weight ${layer.name}/${suffix} is not in the manifest`);
  return w;
}

function input(ctx: Ctx, layer: KerasLayerJson, index = 0): ConvertedTensor {
  const names = inboundLayerNames(layer);
  const name = names[index];
  const t = name === undefined ? undefined : ctx.tensors.get(name);
  if (!t) throw unsupported(layer, `input #${index} is not available`);
  return t;
}

function spatial(layer: KerasLayerJson, t: ConvertedTensor): readonly [number, number, number] {
  if (t.shape.length !== 3) throw unsupported(layer, 'expects a 4-D (image) input');
  return t.shape;
}

function checkChannelsLast(layer: KerasLayerJson): void {
  const f = layer.config.data_format;
  if (f !== undefined && f !== 'channels_last') throw unsupported(layer, `data_format ${JSON.stringify(f)}`);
}

/** TF "same" padding for one spatial dimension: `[before, after]`, extra pixel at the end. */
export function samePadding(
  size: number,
  kernel: number,
  stride: number,
  dilation: number,
): [number, number] {
  const out = Math.ceil(size / stride);
  const total = Math.max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0);
  const before = Math.floor(total / 2);
  return [before, total - before];
}

function batchNormFactors(
  ctx: Ctx,
  bn: KerasLayerJson,
  channels: number,
): { scale: Float64Array; shift: Float64Array } {
  const axis = bn.config.axis;
  if (!(
    axis === -1 ||
    axis === 3 ||
    (Array.isArray(axis) && axis.length === 1 && (axis[0] === -1 || axis[0] === 3))
  )) {
    throw unsupported(bn, `axis ${JSON.stringify(axis)} (only the channel axis is supported)`);
  }
  const eps = num(bn, 'epsilon');
  const center = bn.config.center !== false;
  const scaled = bn.config.scale !== false;
  const gamma = scaled ? weight(ctx, bn, 'gamma').data : undefined;
  const beta = center ? weight(ctx, bn, 'beta').data : undefined;
  const mean = weight(ctx, bn, 'moving_mean').data;
  const variance = weight(ctx, bn, 'moving_variance').data;
  if (mean.length !== channels) throw unsupported(bn, `expects ${channels} channels, has ${mean.length}`);
  const scale = new Float64Array(channels);
  const shift = new Float64Array(channels);
  for (let c = 0; c < channels; c++) {
    const s = (gamma ? (gamma[c] ?? 1) : 1) / Math.sqrt((variance[c] ?? 1) + eps);
    scale[c] = s;
    shift[c] = (beta ? (beta[c] ?? 0) : 0) - (mean[c] ?? 0) * s;
  }
  return { scale, shift };
}

function addActivation(ctx: Ctx, layer: KerasLayerJson, pre: string, out: string): void {
  const act = layer.config.activation ?? 'linear';
  const p = ctx.prefix;
  switch (act) {
    case 'linear':
      ctx.g.addNode('Identity', [pre], [out], {}, `${p}${layer.name}/identity`);
      return;
    case 'relu':
      ctx.g.addNode('Relu', [pre], [out], {}, `${p}${layer.name}/relu`);
      return;
    case 'softmax':
      ctx.g.addNode(
        'Softmax',
        [pre],
        [out],
        { axis: { kind: 'int', value: -1 } },
        `${p}${layer.name}/softmax`,
      );
      return;
    default:
      throw unsupported(layer, `activation ${JSON.stringify(act)}`);
  }
}

/** Conv2D / DepthwiseConv2D, optionally with the following BatchNormalization folded in. */
function convertConv(ctx: Ctx, layer: KerasLayerJson, depthwise: boolean): void {
  checkChannelsLast(layer);
  const x = input(ctx, layer);
  const [cin, h, w] = spatial(layer, x);
  const [kh, kw] = pair(layer, 'kernel_size');
  const [sh, sw] = pair(layer, 'strides');
  const [dh, dw] = pair(layer, 'dilation_rate');
  const kernel = weight(ctx, layer, depthwise ? 'depthwise_kernel' : 'kernel');
  const [wkh, wkw, wcin, last] = kernel.shape;
  if (wkh !== kh || wkw !== kw || wcin !== cin || last === undefined) {
    throw unsupported(layer, `kernel shape ${JSON.stringify(kernel.shape)} does not match the input`);
  }
  // Depthwise: output channel c*mult + m reads input channel c. Conv: OIHW with group 1.
  const cout = depthwise ? cin * last : last;
  const group = depthwise ? cin : 1;
  const inPerGroup = depthwise ? 1 : cin;
  const oihw = new Float64Array(cout * inPerGroup * kh * kw);
  for (let y = 0; y < kh; y++) {
    for (let xk = 0; xk < kw; xk++) {
      for (let i = 0; i < cin; i++) {
        for (let j = 0; j < last; j++) {
          const v = kernel.data[((y * kw + xk) * cin + i) * last + j] ?? 0;
          const o = depthwise ? i * last + j : j;
          const ii = depthwise ? 0 : i;
          oihw[((o * inPerGroup + ii) * kh + y) * kw + xk] = v;
        }
      }
    }
  }
  const bias = new Float64Array(cout);
  const useBias = layer.config.use_bias === true;
  if (useBias) {
    const b = weight(ctx, layer, 'bias').data;
    for (let o = 0; o < cout; o++) bias[o] = b[o] ?? 0;
  }
  let padding: [number, number, number, number];
  if (layer.config.padding === 'valid') padding = [0, 0, 0, 0];
  else if (layer.config.padding === 'same') {
    const [pt, pb] = samePadding(h, kh, sh, dh);
    const [pl, pr] = samePadding(w, kw, sw, dw);
    padding = [pt, pl, pb, pr];
  } else throw unsupported(layer, `padding ${JSON.stringify(layer.config.padding)}`);
  const outH = Math.floor((h + padding[0] + padding[2] - ((kh - 1) * dh + 1)) / sh) + 1;
  const outW = Math.floor((w + padding[1] + padding[3] - ((kw - 1) * dw + 1)) / sw) + 1;

  // Fold a BatchNormalization that is this convolution's only consumer (and only when linear).
  const next = ctx.consumers.get(layer.name) ?? [];
  const act = layer.config.activation ?? 'linear';
  const bn = next.length === 1 && next[0]?.class_name === 'BatchNormalization' ? next[0] : undefined;
  const fold = ctx.foldBatchNorm && bn !== undefined && act === 'linear' && !ctx.outputs.has(layer.name);
  let hasBias = useBias;
  if (fold) {
    const { scale, shift } = batchNormFactors(ctx, bn, cout);
    const per = inPerGroup * kh * kw;
    for (let o = 0; o < cout; o++) {
      const s = scale[o] ?? 1;
      for (let k = 0; k < per; k++) oihw[o * per + k] = (oihw[o * per + k] ?? 0) * s;
      bias[o] = (bias[o] ?? 0) * s + (shift[o] ?? 0);
    }
    hasBias = true;
  }
  const p = ctx.prefix;
  const wName = `${p}${layer.name}/W`;
  const bName = `${p}${layer.name}/B`;
  ctx.g.addInitializer(wName, {
    type: 'FLOAT',
    dims: [cout, inPerGroup, kh, kw],
    data: Float32Array.from(oihw),
  });
  if (hasBias) ctx.g.addInitializer(bName, { type: 'FLOAT', dims: [cout], data: Float32Array.from(bias) });
  const outLayer = fold ? bn : layer;
  const outName = `${p}${outLayer.name}`;
  const convOut = act === 'linear' ? outName : `${outName}/preact`;
  ctx.g.addNode(
    'Conv',
    hasBias ? [x.name, wName, bName] : [x.name, wName],
    [convOut],
    {
      dilations: { kind: 'ints', value: [dh, dw] },
      group: { kind: 'int', value: group },
      kernel_shape: { kind: 'ints', value: [kh, kw] },
      pads: { kind: 'ints', value: padding },
      strides: { kind: 'ints', value: [sh, sw] },
    },
    `${p}${layer.name}`,
  );
  if (act !== 'linear') addActivation(ctx, layer, convOut, outName);
  const t: ConvertedTensor = { name: outName, shape: [cout, outH, outW] };
  ctx.tensors.set(layer.name, t);
  if (fold) ctx.tensors.set(bn.name, t);
}

function convertLayer(ctx: Ctx, layer: KerasLayerJson, inputTensor: string): void {
  const p = ctx.prefix;
  const out = `${p}${layer.name}`;
  const g = ctx.g;
  switch (layer.class_name) {
    case 'InputLayer': {
      const shape = layer.config.batch_input_shape;
      if (
        !Array.isArray(shape) ||
        shape.length !== 4 ||
        !shape.slice(1).every((d) => typeof d === 'number')
      ) {
        throw unsupported(layer, 'only [batch, H, W, C] image inputs are supported');
      }
      const [, hh, ww, cc] = shape as [unknown, number, number, number];
      ctx.tensors.set(layer.name, { name: inputTensor, shape: [cc, hh, ww] });
      return;
    }
    case 'ZeroPadding2D': {
      checkChannelsLast(layer);
      const x = input(ctx, layer);
      const [c, h, w] = spatial(layer, x);
      const pad = layer.config.padding;
      let top: number, bottom: number, left: number, right: number;
      if (typeof pad === 'number') [top, bottom, left, right] = [pad, pad, pad, pad];
      else if (
        Array.isArray(pad) &&
        pad.length === 2 &&
        Array.isArray(pad[0]) &&
        Array.isArray(pad[1]) &&
        [...(pad[0] as unknown[]), ...(pad[1] as unknown[])].every((v) => typeof v === 'number')
      ) {
        [top, bottom] = pad[0] as [number, number];
        [left, right] = pad[1] as [number, number];
      } else if (Array.isArray(pad) && pad.length === 2 && pad.every((v) => typeof v === 'number')) {
        [top, left] = pad as [number, number];
        [bottom, right] = [top, left];
      } else throw unsupported(layer, `padding ${JSON.stringify(pad)}`);
      const padsName = `${out}/pads`;
      g.addInitializer(padsName, {
        type: 'INT64',
        dims: [8],
        data: BigInt64Array.from([0, 0, top, left, 0, 0, bottom, right].map(BigInt)),
      });
      g.addNode('Pad', [x.name, padsName], [out], { mode: { kind: 'string', value: 'constant' } }, out);
      ctx.tensors.set(layer.name, { name: out, shape: [c, h + top + bottom, w + left + right] });
      return;
    }
    case 'Conv2D':
      convertConv(ctx, layer, false);
      return;
    case 'DepthwiseConv2D':
      convertConv(ctx, layer, true);
      return;
    case 'BatchNormalization': {
      if (ctx.tensors.has(layer.name)) return; // folded into the convolution
      const x = input(ctx, layer);
      const c = x.shape[0];
      const { scale, shift } = batchNormFactors(ctx, layer, c);
      // Inference-mode BN as a per-channel affine map: x * scale + shift.
      const bshape = x.shape.length === 3 ? [c, 1, 1] : [c];
      g.addInitializer(`${out}/scale`, { type: 'FLOAT', dims: bshape, data: Float32Array.from(scale) });
      g.addInitializer(`${out}/shift`, { type: 'FLOAT', dims: bshape, data: Float32Array.from(shift) });
      g.addNode('Mul', [x.name, `${out}/scale`], [`${out}/scaled`], {}, `${out}/mul`);
      g.addNode('Add', [`${out}/scaled`, `${out}/shift`], [out], {}, `${out}/add`);
      ctx.tensors.set(layer.name, { name: out, shape: x.shape });
      return;
    }
    case 'ReLU': {
      const x = input(ctx, layer);
      const maxValue = layer.config.max_value;
      const slope = layer.config.negative_slope ?? 0;
      const threshold = layer.config.threshold ?? 0;
      if (slope !== 0 || threshold !== 0) throw unsupported(layer, 'negative_slope/threshold must be 0');
      if (maxValue === null || maxValue === undefined) {
        g.addNode('Relu', [x.name], [out], {}, out);
      } else if (typeof maxValue === 'number') {
        g.addInitializer(`${out}/min`, { type: 'FLOAT', dims: [], data: Float32Array.from([0]) });
        g.addInitializer(`${out}/max`, { type: 'FLOAT', dims: [], data: Float32Array.from([maxValue]) });
        g.addNode('Clip', [x.name, `${out}/min`, `${out}/max`], [out], {}, out);
      } else throw unsupported(layer, 'max_value is not a number');
      ctx.tensors.set(layer.name, { name: out, shape: x.shape });
      return;
    }
    case 'Add': {
      const names = inboundLayerNames(layer);
      if (names.length < 2) throw unsupported(layer, 'needs at least two inputs');
      const xs = names.map((_, i) => input(ctx, layer, i));
      const first = xs[0] as ConvertedTensor;
      if (xs.some((t) => JSON.stringify(t.shape) !== JSON.stringify(first.shape))) {
        throw unsupported(layer, 'inputs have different shapes');
      }
      let acc = first.name;
      for (let i = 1; i < xs.length; i++) {
        const target = i === xs.length - 1 ? out : `${out}/partial${i}`;
        g.addNode(
          'Add',
          [acc, (xs[i] as ConvertedTensor).name],
          [target],
          {},
          i === xs.length - 1 ? out : target,
        );
        acc = target;
      }
      ctx.tensors.set(layer.name, { name: out, shape: first.shape });
      return;
    }
    case 'AveragePooling2D': {
      checkChannelsLast(layer);
      const x = input(ctx, layer);
      const [c, h, w] = spatial(layer, x);
      const [ph, pw] = pair(layer, 'pool_size');
      const [sh, sw] = layer.config.strides === null ? [ph, pw] : pair(layer, 'strides');
      if (layer.config.padding !== 'valid') throw unsupported(layer, 'only valid padding is supported');
      const oh = Math.floor((h - ph) / sh) + 1;
      const ow = Math.floor((w - pw) / sw) + 1;
      if (oh === 1 && ow === 1 && ph === h && pw === w) {
        g.addNode('GlobalAveragePool', [x.name], [out], {}, out);
      } else {
        g.addNode(
          'AveragePool',
          [x.name],
          [out],
          { kernel_shape: { kind: 'ints', value: [ph, pw] }, strides: { kind: 'ints', value: [sh, sw] } },
          out,
        );
      }
      ctx.tensors.set(layer.name, { name: out, shape: [c, oh, ow] });
      return;
    }
    case 'GlobalAveragePooling2D': {
      checkChannelsLast(layer);
      const x = input(ctx, layer);
      const [c] = spatial(layer, x);
      if (layer.config.keepdims === true) throw unsupported(layer, 'keepdims is not supported');
      g.addNode('GlobalAveragePool', [x.name], [`${out}/4d`], {}, `${out}/pool`);
      g.addNode('Flatten', [`${out}/4d`], [out], { axis: { kind: 'int', value: 1 } }, out);
      ctx.tensors.set(layer.name, { name: out, shape: [c] });
      return;
    }
    case 'Flatten': {
      checkChannelsLast(layer);
      const x = input(ctx, layer);
      if (x.shape.length === 1) {
        g.addNode('Identity', [x.name], [out], {}, out);
        ctx.tensors.set(layer.name, { name: out, shape: x.shape });
        return;
      }
      const [c, h, w] = x.shape;
      let src = x.name;
      if (h !== 1 || w !== 1) {
        // Keras flattens NHWC; transpose back so the feature order matches.
        g.addNode('Transpose', [x.name], [`${out}/nhwc`], { perm: { kind: 'ints', value: [0, 2, 3, 1] } });
        src = `${out}/nhwc`;
      }
      g.addNode('Flatten', [src], [out], { axis: { kind: 'int', value: 1 } }, out);
      ctx.tensors.set(layer.name, { name: out, shape: [c * h * w] });
      return;
    }
    case 'Dense': {
      const x = input(ctx, layer);
      if (x.shape.length !== 1) throw unsupported(layer, 'only 2-D inputs are supported');
      const units = num(layer, 'units');
      const kernel = weight(ctx, layer, 'kernel');
      if (kernel.shape[0] !== x.shape[0] || kernel.shape[1] !== units) {
        throw unsupported(layer, `kernel shape ${JSON.stringify(kernel.shape)} does not match`);
      }
      g.addInitializer(`${out}/W`, { type: 'FLOAT', dims: [x.shape[0], units], data: kernel.data });
      const inputs = [x.name, `${out}/W`];
      if (layer.config.use_bias !== false) {
        g.addInitializer(`${out}/B`, { type: 'FLOAT', dims: [units], data: weight(ctx, layer, 'bias').data });
        inputs.push(`${out}/B`);
      }
      const act = layer.config.activation ?? 'linear';
      const pre = act === 'linear' ? out : `${out}/preact`;
      g.addNode('Gemm', inputs, [pre], {}, out);
      if (act !== 'linear') addActivation(ctx, layer, pre, out);
      ctx.tensors.set(layer.name, { name: out, shape: [units] });
      return;
    }
    case 'Dropout': {
      const x = input(ctx, layer);
      ctx.tensors.set(layer.name, x); // identity at inference
      return;
    }
    default:
      throw new FoodModelError(
        'UNSUPPORTED_LAYER',
        `layer ${layer.name}: class ${layer.class_name} is not supported`,
      );
  }
}

/**
 * Converts the model's layers into ONNX nodes and initializers on `g`, reading from `options.inputTensor`
 * (NCHW, same value range the Keras model expects).
 * @returns the converted tensors of the requested output layers, by layer name.
 * @throws FoodModelError `UNSUPPORTED_LAYER`, `UNSUPPORTED_CONFIG`, `WEIGHT_MISSING`.
 */
export function convertLayersModel(
  g: OnnxGraphBuilder,
  model: TfjsLayersModelArtifacts,
  options: ConvertOptions,
): Map<string, ConvertedTensor> {
  const byName = new Map(model.layers.map((l) => [l.name, l]));
  const consumers = new Map<string, KerasLayerJson[]>();
  for (const l of model.layers) {
    for (const src of inboundLayerNames(l)) consumers.set(src, [...(consumers.get(src) ?? []), l]);
  }
  const wanted = options.outputLayers ?? model.outputLayers;
  const needed = new Set<string>();
  const stack = [...wanted];
  while (stack.length > 0) {
    const name = stack.pop() as string;
    if (needed.has(name)) continue;
    const layer = byName.get(name);
    if (!layer) throw new FoodModelError('SOURCE_MODEL_INVALID', `no layer named ${name}`);
    if (!SUPPORTED_LAYER_CLASSES.has(layer.class_name)) {
      // Checked before anything is added to the graph, so a failure leaves `g` untouched.
      throw new FoodModelError(
        'UNSUPPORTED_LAYER',
        `layer ${name}: class ${layer.class_name} is not supported`,
      );
    }
    needed.add(name);
    stack.push(...inboundLayerNames(layer));
  }
  const ctx: Ctx = {
    g,
    weights: dequantizeWeights(model),
    tensors: new Map(),
    consumers,
    prefix: options.namePrefix ?? '',
    foldBatchNorm: options.foldBatchNorm ?? true,
    outputs: new Set(wanted),
  };
  for (const layer of model.layers) {
    if (needed.has(layer.name)) convertLayer(ctx, layer, options.inputTensor);
  }
  const result = new Map<string, ConvertedTensor>();
  for (const name of wanted) {
    const t = ctx.tensors.get(name);
    if (!t) throw new FoodModelError('SOURCE_MODEL_INVALID', `layer ${name} was not converted`);
    result.set(name, t);
  }
  return result;
}
