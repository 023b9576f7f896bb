/**
 * Picks the load manager of `options.load.kind` (concurrency, request rate, request intervals).
 * @packageDocumentation
 */
import type { LoadContext, LoadManager } from './load-manager.js';

/** The load manager for the context's load mode. (Being written: issue 10.) */
export function createLoadManager(context: LoadContext): LoadManager {
  void context;
  throw new Error('createLoadManager: not implemented yet');
}
