/**
 * Test helper for the load generator: a load context against the embedded server with a dataset
 * built by hand, and a measurement window over a manager's records (a request counts in the window
 * its response arrived in, as the profiler counts it).
 */
import { setTimeout as sleep } from 'node:timers/promises';

import type { InferInput, TritonClient } from '@tritonserver-ts/client';

import { createPerfClient } from '../../src/load/perf-client.js';
import type { LoadContext, LoadManager } from '../../src/load/load-manager.js';
import { fetchModelProfile } from '../../src/model/model-profile.js';
import { perfOptions, type PerfOptions } from '../../src/options/perf-options.js';
import type { InputDataset, ModelProfile, PreparedRequest, RequestRecord } from '../../src/types.js';

/** A dataset of one stream whose steps are `requests`. */
export function datasetOf(...requests: PreparedRequest[]): InputDataset {
  return { streams: [requests] };
}

/** One FP32 input `name` of shape `shape` filled with `value` (or 0, 1, 2, … when omitted). */
export function fp32Input(name: string, shape: readonly number[], value?: number): InferInput {
  const count = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) data[i] = value ?? i;
  return { name, datatype: 'FP32', shape, data };
}

/** A load context for `modelName` on a server (`url` for the protocol chosen in `options`). */
export async function loadContext(
  url: string,
  given: Partial<PerfOptions> & { readonly modelName: string },
  dataset: InputDataset,
  adjust?: (model: ModelProfile) => ModelProfile,
  client?: TritonClient,
): Promise<LoadContext & { readonly client: TritonClient }> {
  const options = perfOptions({ ...given, url });
  const perfClient = client ?? (await createPerfClient(options));
  let model = await fetchModelProfile(perfClient, options.modelName, options.modelVersion);
  if (adjust !== undefined) model = adjust(model);
  return { client: perfClient, model, dataset, options };
}

/** What one window measured. */
export interface WindowResult {
  readonly records: RequestRecord[];
  /** Successful requests per second. */
  readonly throughput: number;
  /** Average latency of the successful requests, ms. */
  readonly avgLatencyMs: number;
  readonly errors: number;
  /** The window's length, s. */
  readonly seconds: number;
}

/** Lets the manager run for `ms` and measures the requests that ended inside. */
export async function measureWindow(manager: LoadManager, ms: number): Promise<WindowResult> {
  manager.takeRecords();
  const start = process.hrtime.bigint();
  await sleep(ms);
  const end = process.hrtime.bigint();
  const records = manager.takeRecords().filter((r) => r.endNs > start && r.endNs <= end);
  const ok = records.filter((r) => r.ok);
  const seconds = Number(end - start) / 1e9;
  const avgLatencyMs =
    ok.length === 0 ? 0 : ok.reduce((sum, r) => sum + Number(r.endNs - r.startNs), 0) / ok.length / 1e6;
  return {
    records,
    throughput: ok.length / seconds,
    avgLatencyMs,
    errors: records.length - ok.length,
    seconds,
  };
}

/** Waits until `predicate()` holds (polling), failing after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('waitFor: timed out');
    await sleep(5);
  }
}

/**
 * What a request adds to a model's `execute_delay_ms` on this host, now: the median latency of
 * `count` requests sent one at a time with `client` (after one warm-up request), less `delayMs`, in
 * ms and at least 0.
 *
 * Timing tests compare the load managers' latencies with `delayMs` + this, measured in the same run,
 * rather than with a fixed allowance: on the shared 2-core hosts a 100 ms sleep has come back after
 * 108–130 ms, from a bare node:http server as from ours, while a 0 ms request took 2.5 ms. A manager
 * that adds latency of its own, or leaves a slot empty, still fails the comparison.
 */
export async function requestOverheadMs(
  client: TritonClient,
  modelName: string,
  inputs: readonly InferInput[],
  delayMs: number,
  count = 7,
): Promise<number> {
  await client.infer(modelName, inputs);
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await client.infer(modelName, inputs);
    latencies.push(performance.now() - start);
  }
  latencies.sort((a, b) => a - b);
  return Math.max(0, (latencies[Math.floor(count / 2)] ?? delayMs) - delayMs);
}
