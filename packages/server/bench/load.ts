/**
 * Bench helper: a closed-loop HTTP load generator speaking the binary tensor extension over
 * keep-alive connections (one per concurrent client), recording per-request latency. Two clients
 * (`BENCH_LOAD`): `raw` (the default), pre-encoded request bytes over a `net` socket
 * (`raw-http-client.ts`), or `node`, `node:http`'s client (what every figure before 2026-11-26 06:00
 * UTC used; it costs several times more CPU per request, taken from the cores the server shares).
 */
import http from 'node:http';

import { RawHttpConnection, encodeInferPost } from './raw-http-client.js';

/** The load generator's HTTP client: `BENCH_LOAD` = `raw` (default) or `node`. */
export function loadClient(): 'raw' | 'node' {
  const v = process.env.BENCH_LOAD ?? 'raw';
  if (v !== 'raw' && v !== 'node') throw new Error(`BENCH_LOAD must be raw or node, not '${v}'`);
  return v;
}

/** One binary infer request body for a single FP32 input. */
export interface InferBody {
  readonly body: Buffer;
  readonly headerLength: number;
}

/**
 * Builds a `[1, ...dims]` FP32 request for input `input` asking for `output` (one name or several)
 * as binary.
 */
export function buildInferBody(
  input: string,
  output: string | readonly string[],
  dims: readonly number[],
  data: Float32Array,
): InferBody {
  return binaryBody(
    input,
    'FP32',
    [1, ...dims],
    Buffer.from(data.buffer, data.byteOffset, data.byteLength),
    output,
  );
}

/**
 * Builds a BYTES `[rows, 1]` request (each row one element, sent in the binary tensor layout: a
 * 4-byte little-endian length, then the bytes) asking for `outputs` as binary.
 */
export function buildBytesInferBody(
  input: string,
  rows: readonly Uint8Array[],
  outputs: string | readonly string[],
): InferBody {
  const payload = Buffer.concat(
    rows.flatMap((row) => {
      const length = Buffer.alloc(4);
      length.writeUInt32LE(row.byteLength);
      return [length, Buffer.from(row.buffer, row.byteOffset, row.byteLength)];
    }),
  );
  return binaryBody(input, 'BYTES', [rows.length, 1], payload, outputs);
}

/** One input of {@link buildTensorsInferBody}: its name, datatype, shape and raw bytes. */
export interface BinaryInput {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly data: Uint8Array;
}

/** Builds a request with several binary inputs (in order) asking for `outputs` as binary. */
export function buildTensorsInferBody(inputs: readonly BinaryInput[], outputs: readonly string[]): InferBody {
  const header = JSON.stringify({
    inputs: inputs.map((i) => ({
      name: i.name,
      shape: i.shape,
      datatype: i.datatype,
      parameters: { binary_data_size: i.data.byteLength },
    })),
    outputs: outputs.map((name) => ({ name, parameters: { binary_data: true } })),
  });
  const json = Buffer.from(header);
  const payload = inputs.map((i) => Buffer.from(i.data.buffer, i.data.byteOffset, i.data.byteLength));
  return { body: Buffer.concat([json, ...payload]), headerLength: json.byteLength };
}

function binaryBody(
  input: string,
  datatype: string,
  shape: readonly number[],
  payload: Buffer,
  outputs: string | readonly string[],
): InferBody {
  const header = JSON.stringify({
    inputs: [{ name: input, shape, datatype, parameters: { binary_data_size: payload.byteLength } }],
    outputs: (typeof outputs === 'string' ? [outputs] : outputs).map((name) => ({
      name,
      parameters: { binary_data: true },
    })),
  });
  const json = Buffer.from(header);
  return { body: Buffer.concat([json, payload]), headerLength: json.byteLength };
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
  /** Median time `makeBody` took per measured request (ms), when the load used one. */
  readonly makeBodyP50Ms?: number;
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
  /**
   * Builds each request's body in the loop instead of sending `body` (e.g. a gateway's
   * preprocessing). Its time is part of the request's latency and is also reported alone.
   */
  readonly makeBody?: () => Promise<InferBody>;
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** Called when the measured window starts and when it ends (e.g. to sample CPU time). */
  readonly onWindow?: (edge: 'start' | 'end') => void;
  /** Told each measured successful request's latency (ms). */
  readonly onLatency?: (ms: number) => void;
}): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const path = `/v2/models/${options.model}/infer`;
  const raw = loadClient() === 'raw';
  const fixedParts = encodeInferPost(options.port, path, options.body.body, options.body.headerLength);
  const latencies: number[] = [];
  const makeBodyMs: number[] = [];
  const makeBody = options.makeBody;
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
    const connection = raw ? new RawHttpConnection(options.port) : undefined;
    while (performance.now() < stopAt) {
      const t0 = performance.now();
      let status: number;
      let built = t0;
      try {
        const body = makeBody === undefined ? options.body : await makeBody();
        built = performance.now();
        if (connection === undefined) status = await post(agent, options.port, path, body);
        else {
          const parts =
            makeBody === undefined
              ? fixedParts
              : encodeInferPost(options.port, path, body.body, body.headerLength);
          status = (await connection.request(parts)).status;
        }
      } catch {
        status = 0;
      }
      const t1 = performance.now();
      if (t1 >= measureFrom && t1 <= stopAt) {
        if (status === 200) {
          latencies.push(t1 - t0);
          options.onLatency?.(t1 - t0);
          if (makeBody !== undefined) makeBodyMs.push(built - t0);
        } else errors += 1;
      }
    }
    connection?.close();
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  timers.forEach(clearTimeout);
  agent.destroy();
  const seconds = options.durationMs / 1000;
  latencies.sort((a, b) => a - b);
  makeBodyMs.sort((a, b) => a - b);
  return {
    concurrency: options.concurrency,
    requests: latencies.length,
    errors,
    seconds,
    rps: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    ...(makeBody === undefined ? {} : { makeBodyP50Ms: percentile(makeBodyMs, 50) }),
  };
}

/** One decoded response: status, JSON header and each binary output's bytes by name. */
export interface InferReply {
  readonly status: number;
  readonly header: unknown;
  readonly outputs: ReadonlyMap<string, Buffer>;
}

/** Sends one request (a new connection) and decodes the binary-data response. */
export async function inferOnce(port: number, model: string, req: InferBody): Promise<InferReply> {
  const response = await fetch(`http://127.0.0.1:${port}/v2/models/${model}/infer`, {
    method: 'POST',
    headers: { 'Inference-Header-Content-Length': String(req.headerLength) },
    body: req.body,
  });
  const body = Buffer.from(await response.arrayBuffer());
  const jsonLength = Number(response.headers.get('inference-header-content-length') ?? body.byteLength);
  const header = JSON.parse(body.subarray(0, jsonLength).toString()) as {
    outputs?: { name: string; parameters?: { binary_data_size?: number } }[];
  };
  const outputs = new Map<string, Buffer>();
  let offset = jsonLength;
  for (const o of header.outputs ?? []) {
    const size = o.parameters?.binary_data_size ?? 0;
    outputs.set(o.name, body.subarray(offset, offset + size));
    offset += size;
  }
  return { status: response.status, header, outputs };
}
