/**
 * The client a run sends with: HTTP or gRPC per `-i`, `-u`, `-H`.
 * @packageDocumentation
 */
import type { TritonClient } from '@tritonserver-ts/client';

import type { PerfOptions } from '../options/perf-options.js';

/** A client for the run's protocol and URL. (Being written: issue 10.) */
export function createPerfClient(options: PerfOptions): Promise<TritonClient> {
  void options;
  return Promise.reject(new Error('createPerfClient: not implemented yet'));
}
