/**
 * Picks the load manager of `options.load.kind` (concurrency, request rate, request intervals).
 * @packageDocumentation
 */
import { ConcurrencyManager } from './concurrency-manager.js';
import type { LoadContext, LoadManager } from './load-manager.js';
import { RateManager } from './rate-manager.js';

/**
 * The load manager for the context's load mode. Nothing is sent until the first
 * `changeLevel`, which also sets up the shared-memory regions (`--shared-memory system`) and the
 * gRPC stream (`--streaming`); `stop()` releases them.
 *
 * ```ts
 * const manager = createLoadManager({ client, model, dataset, options });
 * await manager.changeLevel(4);           // 4 requests in flight
 * await sleep(1000);
 * const records = manager.takeRecords();  // what finished so far
 * await manager.stop();
 * ```
 */
export function createLoadManager(context: LoadContext): LoadManager {
  return context.options.load.kind === 'concurrency'
    ? new ConcurrencyManager(context)
    : new RateManager(context);
}
