import 'server-only';
import { env } from '../env';
import type { DurationStat, Health, ModelStats } from '../lib/types';
import { GatewayError, toGatewayError } from './errors';
import type {
  InferBatchStatistics,
  InferenceStatistics,
  InferStatistics,
  StatisticDuration,
  TritonClient,
  Uint64,
} from '@tritonserver-ts/client';
import { tritonClient } from './triton';

/** The client's 64-bit counters: a number, or a bigint beyond 2^53 − 1. */
const n = (v: Uint64 | undefined): number => (v === undefined ? 0 : Number(v));

const dur = (v: StatisticDuration | undefined): DurationStat => ({
  count: n(v?.count),
  ms: n(v?.ns) / 1e6,
});

/** `Array.isArray` that keeps a readonly list's element type. */
const isList = (v: unknown): v is readonly unknown[] => Array.isArray(v);

/** The client's statistics (the same over HTTP and gRPC) → the numbers the stats page charts. */
export function normalizeModelStats(raw: InferenceStatistics): ModelStats | undefined {
  const s = isList(raw.model_stats) ? raw.model_stats[0] : undefined;
  if (!s) return undefined;
  const inf: Partial<InferStatistics> = s.inference_stats ?? {};
  const batchStats: readonly InferBatchStatistics[] = s.batch_stats ?? [];
  const batches = batchStats
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
    cacheHit: dur(inf.cache_hit),
    cacheMiss: dur(inf.cache_miss),
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
