/**
 * The load generator's floor: a bare closed loop that posts one pre-encoded infer request with the
 * HTTP library the client uses (undici, through `dispatch` with a handler that only counts the answer's
 * bytes, the cheapest way to use it), at a fixed concurrency, neither decoding nor checking the answer
 * beyond its status. No load generator can spend less per request; the perf engine's CPU per request
 * is reported as a ratio to this loop's, measured in the same run.
 */
import { Pool, type Dispatcher } from 'undici';

import { generateRequestBody, type InferInput } from '@tritonserver-ts/client';

/** What one floor loop did. */
export interface FloorResult {
  readonly requests: number;
  readonly seconds: number;
  /** This process's CPU seconds (user + system, every thread) over the loop. */
  readonly cpuSeconds: number;
}

/**
 * Posts `inputs` (encoded once, binary tensor extension) to `model` at `concurrency`: `warmupSeconds`
 * unmeasured on the same connections, then `seconds` measured; `marks` are called as the measured
 * part starts and ends (the bench reads the server's CPU there).
 */
export async function bareHttpLoop(
  url: string,
  model: string,
  inputs: readonly InferInput[],
  concurrency: number,
  warmupSeconds: number,
  seconds: number,
  marks: { readonly start?: () => void; readonly end?: () => void } = {},
): Promise<FloorResult> {
  const { body, headerLength } = generateRequestBody(inputs, { binaryDataOutput: true });
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
  if (headerLength !== undefined) headers['inference-header-content-length'] = String(headerLength);
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const path = `/v2/models/${encodeURIComponent(model)}/infer`;
  const options: Dispatcher.DispatchOptions = { path, method: 'POST', headers, body };
  const post = (): Promise<void> =>
    new Promise((resolve, reject) => {
      let status = 0;
      pool.dispatch(options, {
        onConnect: () => undefined,
        onHeaders: (statusCode) => {
          status = statusCode;
          return true;
        },
        onData: () => true,
        onComplete: () => {
          if (status === 200) resolve();
          else reject(new Error(`floor loop: HTTP ${String(status)}`));
        },
        onError: reject,
      });
    });
  let requests = 0;
  const loop = async (until: number): Promise<void> => {
    while (performance.now() < until) {
      await post();
      requests += 1;
    }
  };
  const run = (ms: number): Promise<unknown> => {
    const until = performance.now() + ms;
    return Promise.all(Array.from({ length: concurrency }, () => loop(until)));
  };
  let cpu: NodeJS.CpuUsage;
  let elapsed: number;
  try {
    await run(warmupSeconds * 1000);
    requests = 0;
    marks.start?.();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run(seconds * 1000);
    elapsed = (performance.now() - t0) / 1000;
    cpu = process.cpuUsage(cpu0);
    marks.end?.();
  } finally {
    await pool.close();
  }
  return { requests, seconds: elapsed, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}
