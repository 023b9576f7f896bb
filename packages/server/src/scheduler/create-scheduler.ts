/**
 * Picks the scheduler a model config asks for: the sequence batcher for `sequence_batching`, the
 * dynamic batcher when `dynamic_batching` is set and the model batches (`max_batch_size > 0`),
 * otherwise the default scheduler.
 * @packageDocumentation
 */
import { ServerError } from '../common/errors.js';
import { createDefaultScheduler } from './default-scheduler.js';
import { createDynamicBatcher } from './dynamic-batcher.js';
import { createEnsembleScheduler } from './ensemble-scheduler.js';
import { createSequenceBatcher } from './sequence-batcher.js';
import type { SchedulingEngine } from './engine.js';
import { batchLayoutOf } from './ragged.js';
import { rateLimitedInstances } from './rate-limiter.js';
import type { SchedulerFactory } from './types.js';

/**
 * The {@link SchedulerFactory} the core uses. `sequence_batching` gets the sequence batcher
 * (`sequence-batcher.ts`; Direct or Oldest); `ensemble_scheduling` gets the ensemble scheduler (which
 * runs its steps through the `inferenceHost`).
 */
export const createScheduler: SchedulerFactory &
  ((...args: Parameters<SchedulerFactory>) => SchedulingEngine) = (options) => {
  const { config } = options;
  if (config.ensemble_scheduling !== undefined) {
    if (options.inferenceHost === undefined || options.modelConfig === undefined) {
      throw new ServerError(
        'INTERNAL',
        `model '${options.modelName}': an ensemble needs the server that hosts its composing models`,
      );
    }
    return createEnsembleScheduler({
      modelName: options.modelName,
      config,
      inferenceHost: options.inferenceHost,
      modelConfig: options.modelConfig,
      ...(options.statistics === undefined ? {} : { statistics: options.statistics }),
    }) as SchedulingEngine;
  }
  const layout = batchLayoutOf(config, options.batchInputs ?? 'none');
  // Ensembles are not rate limited (their composing models are); this registers the instances. The
  // sequence batcher does not take part yet (its instances run unlimited), so it registers none.
  const limited =
    config.sequence_batching === undefined
      ? options.rateLimiter?.register(rateLimitedInstances(config, options.instances))
      : undefined;
  const common = {
    modelName: options.modelName,
    modelVersion: options.modelVersion,
    instances: options.instances,
    maxBatchSize: config.max_batch_size,
    ...(options.statistics === undefined ? {} : { statistics: options.statistics }),
    ...(layout === undefined ? {} : { batchLayout: layout }),
    ...(limited === undefined ? {} : { rateLimiter: limited }),
  };
  if (config.sequence_batching !== undefined) {
    return createSequenceBatcher({
      ...common,
      config,
      ...(options.implicitStates === undefined ? {} : { implicitStates: options.implicitStates }),
    }) as unknown as SchedulingEngine;
  }
  if (config.dynamic_batching !== undefined && config.max_batch_size > 0) {
    return createDynamicBatcher({ ...common, dynamicBatching: config.dynamic_batching });
  }
  return createDefaultScheduler(common);
};
