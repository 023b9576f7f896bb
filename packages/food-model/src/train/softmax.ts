/**
 * Multinomial logistic regression (softmax regression) with L2 regularisation on the weights, fitted by
 * full-batch Nesterov accelerated gradient (in the equivalent representer form, see below) with a fixed
 * step (1/L from a power-iteration bound) and a fixed iteration count. No randomness: the same data give the same bits.
 */
import { FoodModelError } from '../errors.js';

/** Training options. */
export interface SoftmaxOptions {
  /** Number of classes (some may have no samples). */
  classes: number;
  /** L2 strength on the weights (not the bias). */
  l2: number;
  /** Fixed number of iterations. */
  iterations: number;
  /**
   * Pseudo-count of the log-prior bias initialisation `log((n_k + α) / (n + Kα))`: a class without
   * samples starts at a near-zero probability and training only lowers it further.
   */
  priorPseudoCount: number;
}

/** Defaults used by the build (chosen by cross-validation on the training split). */
export const DEFAULT_SOFTMAX_OPTIONS: Omit<SoftmaxOptions, 'classes'> = {
  l2: 0.01,
  iterations: 200,
  priorPseudoCount: 0.01,
};

/** A fitted model on standardised features: `logits = ((x - mean) / std) · W + b`. */
export interface SoftmaxModel {
  dim: number;
  classes: number;
  mean: Float64Array;
  std: Float64Array;
  /** Row-major `[dim, classes]`. */
  weights: Float64Array;
  bias: Float64Array;
  /** Final training loss (mean cross-entropy + L2 term). */
  loss: number;
}

/** Row-major `[n, dim]` feature matrix. */
export interface FeatureMatrix {
  n: number;
  dim: number;
  data: Float32Array | Float64Array;
}

function standardize(x: FeatureMatrix): { z: Float64Array; mean: Float64Array; std: Float64Array } {
  const { n, dim, data } = x;
  const mean = new Float64Array(dim);
  const std = new Float64Array(dim);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < dim; j++) mean[j] = (mean[j] ?? 0) + (data[i * dim + j] ?? 0) / n;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < dim; j++) {
      const d = (data[i * dim + j] ?? 0) - (mean[j] ?? 0);
      std[j] = (std[j] ?? 0) + (d * d) / n;
    }
  }
  for (let j = 0; j < dim; j++) std[j] = Math.max(Math.sqrt(std[j] ?? 0), 1e-3);
  const z = new Float64Array(n * dim);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < dim; j++)
      z[i * dim + j] = ((data[i * dim + j] ?? 0) - (mean[j] ?? 0)) / (std[j] ?? 1);
  }
  return { z, mean, std };
}

/** Largest eigenvalue of the symmetric `[n, n]` matrix `m` by a fixed number of power iterations. */
function largestEigenvalue(m: Float64Array, n: number): number {
  let v = new Float64Array(n).fill(1 / Math.sqrt(n));
  let lambda = 0;
  for (let it = 0; it < 50; it++) {
    const u = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += (m[i * n + j] as number) * (v[j] as number);
      u[i] = s;
    }
    let norm = 0;
    for (let i = 0; i < n; i++) norm += (u[i] as number) ** 2;
    norm = Math.sqrt(norm);
    lambda = norm;
    for (let i = 0; i < n; i++) u[i] = (u[i] as number) / norm;
    v = u;
  }
  return lambda;
}

/** Gram matrix `Z Zᵀ / n + 1/n` (the `1` accounts for the bias column in the step-size bound). */
function gram(z: Float64Array, n: number, dim: number): Float64Array {
  const k = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      let s = 0;
      for (let d = 0; d < dim; d++) s += (z[i * dim + d] as number) * (z[j * dim + d] as number);
      k[i * n + j] = s;
      k[j * n + i] = s;
    }
  }
  return k;
}

/** Softmax probabilities of row-major logits `[n, k]`, in place. */
export function softmaxRows(logits: Float64Array | Float32Array, k: number): void {
  for (let i = 0; i < logits.length; i += k) {
    let max = -Infinity;
    for (let c = 0; c < k; c++) max = Math.max(max, logits[i + c] ?? -Infinity);
    let sum = 0;
    for (let c = 0; c < k; c++) {
      const e = Math.exp((logits[i + c] ?? 0) - max);
      logits[i + c] = e;
      sum += e;
    }
    for (let c = 0; c < k; c++) logits[i + c] = (logits[i + c] ?? 0) / sum;
  }
}

function linear(
  z: Float64Array,
  n: number,
  dim: number,
  w: Float64Array,
  b: Float64Array,
  k: number,
): Float64Array {
  const out = new Float64Array(n * k);
  for (let i = 0; i < n; i++) {
    const row = i * k;
    for (let c = 0; c < k; c++) out[row + c] = b[c] ?? 0;
    for (let j = 0; j < dim; j++) {
      const zij = z[i * dim + j] ?? 0;
      if (zij === 0) continue;
      const wj = j * k;
      for (let c = 0; c < k; c++) out[row + c] = (out[row + c] ?? 0) + zij * (w[wj + c] ?? 0);
    }
  }
  return out;
}

/**
 * Fits softmax regression.
 * @param labels class index per row, `0 <= label < classes`.
 * @throws FoodModelError `TRAINING_FAILED` on inconsistent inputs or a non-finite loss.
 */
export function trainSoftmax(
  x: FeatureMatrix,
  labels: readonly number[],
  options: SoftmaxOptions,
): SoftmaxModel {
  const { n, dim } = x;
  const k = options.classes;
  if (labels.length !== n || n === 0)
    throw new FoodModelError('TRAINING_FAILED', 'labels do not match the rows');
  if (labels.some((l) => !Number.isInteger(l) || l < 0 || l >= k)) {
    throw new FoodModelError('TRAINING_FAILED', 'label out of range');
  }
  const { z, mean, std } = standardize(x);
  // Representer form: W = Zᵀ A. Gradient descent on W started at 0 stays in that span, and the
  // update W ← W − η (Zᵀ R / n + λ W) is exactly A ← A − η (R / n + λ A), which only needs the
  // n×n Gram matrix (n < dim here), so each iteration costs n²k instead of 2·n·dim·k.
  const K = gram(z, n, dim);
  const bound = new Float64Array(n * n);
  for (let i = 0; i < n * n; i++) bound[i] = ((K[i] as number) + 1) / n;
  const step = 1 / (0.5 * largestEigenvalue(bound, n) * 1.05 + options.l2);

  const counts = new Float64Array(k);
  for (const l of labels) counts[l] = (counts[l] as number) + 1;
  const alpha = options.priorPseudoCount;
  let a = new Float64Array(n * k);
  let b = Float64Array.from(counts, (c) => Math.log((c + alpha) / (n + k * alpha)));
  let aPrev = a.slice();
  let bPrev = b.slice();
  let loss = NaN;
  const ay = new Float64Array(n * k);
  const by = new Float64Array(k);
  const p = new Float64Array(n * k);
  for (let it = 1; it <= options.iterations; it++) {
    // Nesterov look-ahead point y = x_t + (t-1)/(t+2) (x_t - x_{t-1}).
    const mom = (it - 1) / (it + 2);
    for (let j = 0; j < ay.length; j++)
      ay[j] = (a[j] as number) + mom * ((a[j] as number) - (aPrev[j] as number));
    for (let c = 0; c < k; c++) by[c] = (b[c] as number) + mom * ((b[c] as number) - (bPrev[c] as number));

    // p = K · ay + by (the logits), and the L2 term ½λ tr(Aᵀ K A) on the way.
    let reg = 0;
    for (let i = 0; i < n; i++) {
      const row = i * k;
      for (let c = 0; c < k; c++) p[row + c] = 0;
      for (let j = 0; j < n; j++) {
        const kij = K[i * n + j] as number;
        const aj = j * k;
        for (let c = 0; c < k; c++) p[row + c] = (p[row + c] as number) + kij * (ay[aj + c] as number);
      }
      for (let c = 0; c < k; c++) {
        reg += 0.5 * options.l2 * (ay[row + c] as number) * (p[row + c] as number);
        p[row + c] = (p[row + c] as number) + (by[c] as number);
      }
    }
    softmaxRows(p, k);
    let ce = 0;
    for (let i = 0; i < n; i++) {
      const l = labels[i] as number;
      ce -= Math.log(Math.max(p[i * k + l] as number, 1e-300)) / n;
      p[i * k + l] = (p[i * k + l] as number) - 1; // p becomes the residual P − Y
    }
    loss = ce + reg;
    if (!Number.isFinite(loss))
      throw new FoodModelError('TRAINING_FAILED', `loss diverged at iteration ${it}`);
    aPrev = a;
    bPrev = b;
    a = new Float64Array(n * k);
    b = new Float64Array(k);
    for (let j = 0; j < a.length; j++) {
      a[j] = (ay[j] as number) - step * ((p[j] as number) / n + options.l2 * (ay[j] as number));
    }
    for (let c = 0; c < k; c++) {
      let g = 0;
      for (let i = 0; i < n; i++) g += (p[i * k + c] as number) / n;
      b[c] = (by[c] as number) - step * g;
    }
  }
  // W = Zᵀ A.
  const w = new Float64Array(dim * k);
  for (let i = 0; i < n; i++) {
    for (let d = 0; d < dim; d++) {
      const zid = z[i * dim + d] as number;
      const wd = d * k;
      for (let c = 0; c < k; c++) w[wd + c] = (w[wd + c] as number) + zid * (a[i * k + c] as number);
    }
  }
  return { dim, classes: k, mean, std, weights: w, bias: b, loss };
}

/** Logits of raw (unstandardised) features. */
export function predictLogits(model: SoftmaxModel, x: FeatureMatrix): Float64Array {
  const { z } = { z: new Float64Array(x.n * x.dim) };
  for (let i = 0; i < x.n; i++) {
    for (let j = 0; j < x.dim; j++) {
      z[i * x.dim + j] = ((x.data[i * x.dim + j] ?? 0) - (model.mean[j] ?? 0)) / (model.std[j] ?? 1);
    }
  }
  return linear(z, x.n, x.dim, model.weights, model.bias, model.classes);
}

/**
 * Folds the standardisation into a plain linear head on raw features, rounded to float32:
 * `W' = W / std`, `b' = b - Σ_j mean_j W'_j`.
 */
export function toRawLinearHead(model: SoftmaxModel): { weights: Float32Array; bias: Float32Array } {
  const { dim, classes: k } = model;
  const w = new Float64Array(dim * k);
  const b = Float64Array.from(model.bias);
  for (let j = 0; j < dim; j++) {
    for (let c = 0; c < k; c++) {
      const v = (model.weights[j * k + c] ?? 0) / (model.std[j] ?? 1);
      w[j * k + c] = v;
      b[c] = (b[c] ?? 0) - (model.mean[j] ?? 0) * v;
    }
  }
  return { weights: Float32Array.from(w), bias: Float32Array.from(b) };
}
