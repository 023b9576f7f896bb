/**
 * How far V8 lets a process's heap grow before a full garbage collection, for the project's
 * commands (`tritonserver-ts`, `perf-analyzer-ts`, `model-analyzer-ts`) that move image-sized
 * tensors (issue 31).
 *
 * Every 600 KB request that crosses a socket arrives (or leaves) as fresh `ArrayBuffer` memory:
 * `node:http`'s body chunks, HTTP/2 DATA frames, grpc-js's framed message. V8 counts that memory
 * against the heap's growth limit, which it sets only a few megabytes above the live heap of a
 * small process (~14 MB for the server), so with V8's own heuristics a full mark-compact ran every
 * 10–20 food requests (measured with `--trace-gc`: 82 in 1,746 HTTP requests, 107 in 1,089 gRPC
 * requests), costing 1–2.5 ms of CPU per request on the main thread and V8's helper threads, and
 * the perf CLI's gRPC client 1.2 ms per request. With the limit at 4× the live heap, the cheap
 * young-generation collections V8 starts for external memory reclaim those buffers first: no full
 * collection at all in the same HTTP run, a sixth as many over gRPC.
 *
 * The price is memory: the JS heap may grow to four times its live size before it is collected
 * (bounded as always by `--max-old-space-size`); for the server that is tens of megabytes.
 * Not a Triton setting (Triton is C++).
 * @packageDocumentation
 */
import { setFlagsFromString } from 'node:v8';

/** The heap growing percent the project's commands apply by default: the limit at 4× the live heap. */
export const DEFAULT_HEAP_GROWING_PERCENT = 300;

/** The environment variable that overrides {@link DEFAULT_HEAP_GROWING_PERCENT}; `0` keeps V8's heuristics. */
export const HEAP_GROWING_PERCENT_ENV = 'TRITONSERVER_TS_HEAP_GROWING_PERCENT';

/** The largest value {@link applyHeapGrowingPercent} accepts (V8's limit grows 11× the live heap). */
export const MAX_HEAP_GROWING_PERCENT = 1000;

/** Where {@link applyHeapGrowingPercent} reads the choice from and how it applies it (the process's, by default). */
export interface HeapGrowingOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Node's own command-line flags (`process.execArgv`). */
  readonly execArgv?: readonly string[];
  /** Sets V8 flags (`v8.setFlagsFromString`). */
  readonly setFlags?: (flags: string) => void;
}

/**
 * Sets V8's `--heap-growing-percent` for this process (see the module documentation): to the value
 * of {@link HEAP_GROWING_PERCENT_ENV} when set, else {@link DEFAULT_HEAP_GROWING_PERCENT}. Node's
 * own `--heap-growing-percent` on the command line wins, and `0` leaves V8's heuristics alone.
 * Call it once, first thing, from a command's entry point; a library never calls it for its host.
 * @returns the percent applied, or undefined when nothing was changed
 * @throws RangeError when the variable is not an integer from 0 to {@link MAX_HEAP_GROWING_PERCENT}
 */
export function applyHeapGrowingPercent(options: HeapGrowingOptions = {}): number | undefined {
  const env = options.env ?? process.env;
  const execArgv = options.execArgv ?? process.execArgv;
  if (execArgv.some((flag) => /^--heap[-_]growing[-_]percent(=|$)/.test(flag))) return undefined;
  const text = env[HEAP_GROWING_PERCENT_ENV]?.trim();
  let percent = DEFAULT_HEAP_GROWING_PERCENT;
  if (text !== undefined && text !== '') {
    percent = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!(percent >= 0 && percent <= MAX_HEAP_GROWING_PERCENT)) {
      throw new RangeError(
        `${HEAP_GROWING_PERCENT_ENV} must be an integer from 0 to ${String(MAX_HEAP_GROWING_PERCENT)}, got '${text}'`,
      );
    }
  }
  if (percent === 0) return undefined;
  (options.setFlags ?? setFlagsFromString)(`--heap-growing-percent=${String(percent)}`);
  return percent;
}
