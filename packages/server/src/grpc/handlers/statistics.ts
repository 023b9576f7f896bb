/**
 * `ModelStatistics`: the same snapshots `GET v2/models[/{m}[/versions/{v}]]/stats` renders, as
 * `inference.ModelStatistics` messages (64-bit counters exact). An unknown model or version gets
 * the inference errors, as over HTTP.
 * @packageDocumentation
 */
import {
  ModelStatisticsResponseSchema,
  type ModelStatisticsRequest,
  type ModelStatisticsResponse,
} from '@tritonserver-ts/client/protocol/grpc';

import type { InferenceServer } from '../../core/server.js';
import type { DurationStat, ModelStatisticsSnapshot } from '../../statistics/model-statistics.js';
import { message } from '../messages.js';
import type { UnaryHandler } from './types.js';

/** The snapshots a statistics request selects (the core's rules for `statisticsJson`). */
export function selectStatistics(
  core: InferenceServer,
  name: string,
  version: string,
): ModelStatisticsSnapshot[] {
  if (name === '') return core.statistics.snapshot();
  const serving = core.models.resolve(name, version === '' ? undefined : version);
  return version === ''
    ? core.models.readyVersions(name).flatMap((v) => core.statistics.snapshot(name, String(v)))
    : core.statistics.snapshot(name, String(serving.version));
}

const duration = (d: DurationStat): { count: bigint; ns: bigint } => ({ count: d.count, ns: d.ns });

export const modelStatistics: UnaryHandler<ModelStatisticsRequest, ModelStatisticsResponse> = (
  req,
  { core },
) => {
  const snapshots = selectStatistics(core, req.name, req.version);
  return message(ModelStatisticsResponseSchema, {
    modelStats: snapshots.map((s) => {
      const i = s.inference_stats;
      return {
        name: s.name,
        version: s.version,
        lastInference: s.last_inference,
        inferenceCount: s.inference_count,
        executionCount: s.execution_count,
        inferenceStats: {
          success: duration(i.success),
          fail: duration(i.fail),
          queue: duration(i.queue),
          computeInput: duration(i.compute_input),
          computeInfer: duration(i.compute_infer),
          computeOutput: duration(i.compute_output),
          cacheHit: duration(i.cache_hit),
          cacheMiss: duration(i.cache_miss),
        },
        batchStats: s.batch_stats.map((b) => ({
          batchSize: b.batch_size,
          computeInput: duration(b.compute_input),
          computeInfer: duration(b.compute_infer),
          computeOutput: duration(b.compute_output),
        })),
        memoryUsage: [],
        responseStats: {},
      };
    }),
  });
};
