import 'server-only';
import { env } from '../env';
import type { DurationStat, Health, ModelStats } from '../lib/types';
import { GatewayError, toGatewayError } from './errors';
import type { TritonClient } from '@tritonserver-ts/client';
import { tritonClient } from './triton';

/** 64-bit counters may arrive as number, bigint, string or a lossless-number object. */
const n = (v: unknown): number => {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v === undefined || v === null) return 0;
  // lossless-json numbers and the like stringify to their digits.
  const x = Number(typeof v === 'string' ? v : (v as { toString(): string }).toString());
  return Number.isFinite(x) ? x : 0;
};

const dur = (v: unknown): DurationStat => {
  const o = (v ?? {}) as { count?: unknown; ns?: unknown };
  return { count: n(o.count), ms: n(o.ns) / 1e6 };
};

/** Triton's `/v2/models/<m>/stats` entry → the numbers the stats page charts. */
export function normalizeModelStats(raw: unknown): ModelStats | undefined {
  const list = ((raw ?? {}) as { model_stats?: unknown[] }).model_stats ?? [];
  const s = list[0] as Record<string, unknown> | undefined;
  if (!s) return undefined;
  const inf = (s.inference_stats ?? {}) as Record<string, unknown>;
  const batches = ((s.batch_stats ?? []) as Record<string, unknown>[])
    .map((b) => {
      const ci = dur(b.compute_infer);
      return { batchSize: n(b.batch_size), count: ci.count, computeInferMs: ci.ms };
    })
    .sort((a, b) => a.batchSize - b.batchSize);
  return {
    name: typeof s.name === 'string' ? s.name : '',
    version: typeof s.version === 'string' ? s.version : '',
    inferenceCount: n(s.inference_count),
    executionCount: n(s.execution_count),
    lastInference: n(s.last_inference),
    success: dur(inf.success),
    fail: dur(inf.fail),
    queue: dur(inf.queue),
    computeInput: dur(inf.compute_input),
    computeInfer: dur(inf.compute_infer),
    computeOutput: dur(inf.compute_output),
    batches,
    at: new Date().toISOString(),
  };
}

export async function modelStats(signal?: AbortSignal): Promise<ModelStats> {
  const { modelName, modelVersion } = env();
  const raw = await (
    await tritonClient()
  ).getInferenceStatistics(modelName, modelVersion || undefined, signal ? { signal } : {});
  const stats = normalizeModelStats(raw);
  if (!stats)
    throw new GatewayError(
      'INFERENCE_FAILED',
      `The inference server reported an error: no statistics for ${modelName}`,
    );
  return stats;
}

const short = (err: unknown) => toGatewayError(err).message;

/** App, server and model health; never throws. */
export async function health(): Promise<Health> {
  const { tritonUrl, modelName, modelVersion } = env();
  const opts = { timeoutMs: 2000 };
  let c: TritonClient;
  try {
    c = await tritonClient();
  } catch (e) {
    const error = short(e);
    return {
      app: 'ok',
      server: { url: tritonUrl, live: false, ready: false, error },
      model: { name: modelName, ready: false, error },
      ok: false,
    };
  }
  const probe = (p: Promise<boolean>): Promise<{ v: boolean; e?: string }> =>
    p.then(
      (v) => ({ v }),
      (e: unknown) => ({ v: false, e: short(e) }),
    );
  const [live, ready, model] = await Promise.all([
    probe(c.isServerLive(opts)),
    probe(c.isServerReady(opts)),
    probe(c.isModelReady(modelName, modelVersion || undefined, opts)),
  ]);
  const err = live.e ?? ready.e;
  return {
    app: 'ok',
    server: { url: tritonUrl, live: live.v, ready: ready.v, ...(err ? { error: err } : {}) },
    model: {
      name: modelName,
      ready: model.v,
      ...(model.e ? { error: model.e } : model.v ? {} : { error: `Model "${modelName}" is not ready.` }),
    },
    // Real Triton with strict readiness reports "not ready" when any other model failed to load;
    // what matters here is that the server is live and our model is ready.
    ok: live.v && model.v,
  };
}
