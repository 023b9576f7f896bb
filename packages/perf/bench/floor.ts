/**
 * The load generator's floors: bare closed loops that send one pre-encoded infer request with the
 * library the client uses for the wire, at a fixed concurrency, neither decoding nor checking the
 * answer beyond its status. No load generator over the same library can spend less per request; the
 * perf engine's CPU per request is reported as a ratio to these loops', measured in the same run.
 * - HTTP ({@link bareHttpLoop}): undici, through `dispatch` with a handler that only counts the
 *   answer's bytes, the cheapest way to use it.
 * - gRPC ({@link bareGrpcLoop}): a @grpc/grpc-js `Client` with identity (de)serializers, on one
 *   channel with the client's channel options.
 */
import { Client, credentials } from '@grpc/grpc-js';
import { Pool, type Dispatcher } from 'undici';

import { generateRequestBody, type InferInput } from '@tritonserver-ts/client';
import { channelOptionsFor } from '@tritonserver-ts/client/grpc';
import {
  encodeModelInferRequest,
  serviceDefinition,
  toModelInferRequest,
} from '@tritonserver-ts/protocol/grpc';

/** What one floor loop did. */
export interface FloorResult {
  readonly requests: number;
  readonly seconds: number;
  /** This process's CPU seconds (user + system, every thread) over the loop. */
  readonly cpuSeconds: number;
}

/** Called as the measured part of a loop starts and ends (the bench reads the server's CPU there). */
export interface FloorMarks {
  readonly start?: () => void;
  readonly end?: () => void;
}

/**
 * Runs `concurrency` closed loops of `send`: `warmupSeconds` unmeasured, then `seconds` measured
 * (requests, wall time and this process's CPU), `marks` around the measured part.
 */
async function closedLoops(
  send: () => Promise<void>,
  concurrency: number,
  warmupSeconds: number,
  seconds: number,
  marks: FloorMarks,
): Promise<FloorResult> {
  let requests = 0;
  const loop = async (until: number): Promise<void> => {
    while (performance.now() < until) {
      await send();
      requests += 1;
    }
  };
  const run = (ms: number): Promise<unknown> => {
    const until = performance.now() + ms;
    return Promise.all(Array.from({ length: concurrency }, () => loop(until)));
  };
  await run(warmupSeconds * 1000);
  requests = 0;
  marks.start?.();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(seconds * 1000);
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  marks.end?.();
  return { requests, seconds: elapsed, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/**
 * Posts `inputs` (encoded once, binary tensor extension) to `model` at `concurrency` over HTTP
 * (`url`, `http://host:port`): `warmupSeconds` unmeasured on the same connections, then `seconds`
 * measured; `marks` are called as the measured part starts and ends.
 */
export async function bareHttpLoop(
  url: string,
  model: string,
  inputs: readonly InferInput[],
  concurrency: number,
  warmupSeconds: number,
  seconds: number,
  marks: FloorMarks = {},
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
  try {
    return await closedLoops(post, concurrency, warmupSeconds, seconds, marks);
  } finally {
    await pool.close();
  }
}

/** The path of `ModelInfer`. */
const MODEL_INFER_PATH = serviceDefinition.ModelInfer.path;

/** The message as it is (the request is already encoded; the answer is only counted). */
const identity = (bytes: Buffer): Buffer => bytes;

/**
 * Sends `inputs` to `model` at `concurrency` as unary `ModelInfer` calls over gRPC (`target`,
 * `host:port`): the `ModelInferRequest` perf sends by default (model name, no version, the inputs in
 * `raw_input_contents`, no requested outputs or parameters) is encoded once with
 * `encodeModelInferRequest`, and every loop sends those bytes through one grpc-js channel (as the
 * perf engine shares one) made with the client's channel options (`channelOptionsFor`: message
 * sizes, keepalive). An answer is not decoded, only counted; an error status rejects. No generator
 * over grpc-js can spend less per call: nothing is encoded, decoded, timed or watched per request.
 * `warmupSeconds` unmeasured on the same channel, then `seconds` measured; `marks` are called as
 * the measured part starts and ends.
 */
export async function bareGrpcLoop(
  target: string,
  model: string,
  inputs: readonly InferInput[],
  concurrency: number,
  warmupSeconds: number,
  seconds: number,
  marks: FloorMarks = {},
): Promise<FloorResult> {
  const preEncoded = encodeModelInferRequest(toModelInferRequest({ modelName: model, inputs }));
  const client = new Client(target, credentials.createInsecure(), channelOptionsFor({ url: target }));
  const infer = (): Promise<void> =>
    new Promise((resolve, reject) => {
      client.makeUnaryRequest(MODEL_INFER_PATH, identity, identity, preEncoded, (error) => {
        if (error === null) resolve();
        else reject(new Error(`floor loop: gRPC status ${String(error.code)}: ${error.details}`));
      });
    });
  try {
    return await closedLoops(infer, concurrency, warmupSeconds, seconds, marks);
  } finally {
    client.close();
  }
}
