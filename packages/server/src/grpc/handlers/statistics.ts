/**
 * `ModelStatistics`: the core's {@link ModelStatisticsReport}s (the same ones
 * `GET v2/models[/{m}[/versions/{v}]]/stats` renders) as `inference.ModelStatistics` messages, 64-bit
 * counters exact. An unknown model or version gets the inference errors, as over HTTP.
 * @packageDocumentation
 */
import {
  ModelStatisticsResponseSchema,
  type InferResponseStatisticsSchema,
  type ModelStatisticsRequest,
  type ModelStatisticsSchema,
  type ModelStatisticsResponse,
} from '@tritonserver-ts/protocol/grpc';
import { type MessageInitShape } from '@tritonserver-ts/protocol/grpc';

import type {
  InferResponseStatistics,
  ModelStatisticsReport,
  StatisticDuration,
} from '../../statistics/report.js';
import { message } from '../messages.js';
import type { UnaryHandler } from './types.js';

const duration = (d: StatisticDuration): { count: bigint; ns: bigint } => ({ count: d.count, ns: d.ns });

function responseStats(r: InferResponseStatistics): MessageInitShape<typeof InferResponseStatisticsSchema> {
  return {
    computeInfer: duration(r.compute_infer),
    computeOutput: duration(r.compute_output),
    success: duration(r.success),
    fail: duration(r.fail),
    emptyResponse: duration(r.empty_response),
    cancel: duration(r.cancel),
  };
}

/** The protobuf init of one report (`inference.ModelStatistics`). */
function modelStatisticsMessage(s: ModelStatisticsReport): MessageInitShape<typeof ModelStatisticsSchema> {
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
    memoryUsage: s.memory_usage.map((m) => ({ type: m.type, id: m.id, byteSize: m.byte_size })),
    responseStats: Object.fromEntries(
      Object.entries(s.response_stats).map(([key, r]) => [key, responseStats(r)]),
    ),
  };
}

/** The `ModelStatisticsResponse` of the core's reports. */
export function statisticsResponse(reports: readonly ModelStatisticsReport[]): ModelStatisticsResponse {
  return message(ModelStatisticsResponseSchema, { modelStats: reports.map(modelStatisticsMessage) });
}

export const modelStatistics: UnaryHandler<ModelStatisticsRequest, ModelStatisticsResponse> = (
  req,
  { core },
) => statisticsResponse(core.modelStatistics(req.name, req.version));
