/**
 * The contract between the load generator (`load/`) and the profiler (`measure/`): a manager keeps
 * the server under one load level, records every request, and hands the records over on demand.
 * @packageDocumentation
 */
import type { TritonClient } from '@tritonserver-ts/client';

import type { PerfOptions } from '../options/perf-options.js';
import type { InputDataset, ModelProfile, RequestRecord } from '../types.js';

/** What a load manager sends with. */
export interface LoadContext {
  /** A client for the run's protocol and URL (headers already set). */
  readonly client: TritonClient;
  readonly model: ModelProfile;
  readonly dataset: InputDataset;
  readonly options: PerfOptions;
}

/** Keeps the server under a load level and records every request. */
export interface LoadManager {
  /**
   * Starts, or moves to, a load level: the number of requests kept in flight (concurrency) or the
   * requests per second (request rate). Ignored by the request-intervals manager.
   * `requestLimit` > 0 (perf_analyzer's `request_count` of `ChangeConcurrencyLevel`, used for
   * `--warmup-request-count` and `--request-count`): issue exactly that many requests from this
   * call on, then none until the next `changeLevel`; undefined or 0: no limit.
   */
  changeLevel(level: number, requestLimit?: number): Promise<void>;
  /** Records of requests finished since the last call; the caller owns them. */
  takeRecords(): RequestRecord[];
  /** Requests issued and not finished. */
  readonly inFlight: number;
  /**
   * Stops issuing, waits for the requests in flight (up to `timeoutMs`), then releases what the
   * manager holds (streams, shared-memory regions). Idempotent.
   */
  stop(timeoutMs?: number): Promise<void>;
}
