/**
 * Bench helper: a closed-loop HTTP load generator speaking the binary tensor extension directly over
 * `node:http` keep-alive connections (one per concurrent client), recording per-request latency.
 */
import http from 'node:http';

/** One binary infer request body for a single FP32 input. */
export interface InferBody {
  readonly body: Buffer;
  readonly headerLength: number;
}

/** Builds a `[1, ...dims]` FP32 request for input `input` asking for `output` as binary. */
export function buildInferBody(
  input: string,
  output: string,
  dims: readonly number[],
  data: Float32Array,
): InferBody {
  const header = JSON.stringify({
    inputs: [
      {
        name: input,
        shape: [1, ...dims],
        datatype: 'FP32',
        parameters: { binary_data_size: data.byteLength },
      },
    ],
    outputs: [{ name: output, parameters: { binary_data: true } }],
  });
  const json = Buffer.from(header);
  return {
    body: Buffer.concat([json, Buffer.from(data.buffer, data.byteOffset, data.byteLength)]),
    headerLength: json.byteLength,
  };
}

/** Result of one load level. */
export interface LoadResult {
  readonly concurrency: number;
  readonly requests: number;
  readonly errors: number;
  readonly seconds: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

function post(agent: http.Agent, port: number, path: string, req: InferBody): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/octet-stream',
          'Content-Length': req.body.byteLength,
          'Inference-Header-Content-Length': req.headerLength,
        },
      },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[at] ?? NaN;
}

/** Runs `concurrency` clients in a closed loop: `warmupMs` unmeasured, then `durationMs` measured. */
export async function runLoad(options: {
  readonly port: number;
  readonly model: string;
  readonly body: InferBody;
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** Called when the measured window starts and when it ends (e.g. to sample CPU time). */
  readonly onWindow?: (edge: 'start' | 'end') => void;
}): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const path = `/v2/models/${options.model}/infer`;
  const latencies: number[] = [];
  let errors = 0;
  const measureFrom = performance.now() + options.warmupMs;
  const stopAt = measureFrom + options.durationMs;
  const edges = options.onWindow;
  const timers =
    edges === undefined
      ? []
      : [
          setTimeout(() => edges('start'), options.warmupMs),
          setTimeout(() => edges('end'), options.warmupMs + options.durationMs),
        ];
  // Closed loop; a request counts when it completes inside the measured window.
  const worker = async (): Promise<void> => {
    while (performance.now() < stopAt) {
      const t0 = performance.now();
      let status: number;
      try {
        status = await post(agent, options.port, path, options.body);
      } catch {
        status = 0;
      }
      const t1 = performance.now();
      if (t1 >= measureFrom && t1 <= stopAt) {
        if (status === 200) latencies.push(t1 - t0);
        else errors += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  timers.forEach(clearTimeout);
  agent.destroy();
  const seconds = options.durationMs / 1000;
  latencies.sort((a, b) => a - b);
  return {
    concurrency: options.concurrency,
    requests: latencies.length,
    errors,
    seconds,
    rps: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}
