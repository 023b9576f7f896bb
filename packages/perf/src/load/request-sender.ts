/**
 * Sends one prepared request and records what happened to it: the per-request path of every load
 * manager. Everything a request needs is built once up front (inputs, shared-memory references,
 * call options, expected output bytes), so a request costs the client call, one record and, for
 * sequences, one options object.
 * @packageDocumentation
 */
import { setMaxListeners } from 'node:events';

import type {
  InferInput,
  InferOptions,
  InferRequestedOutput,
  InferResult,
  TritonClient,
} from '@tritonserver-ts/client';
import type { GrpcInferStream, StreamInferOptions, StreamResponse } from '@tritonserver-ts/client/grpc';
import { tensorDataToBytes, type NeutralRequestOptions } from '@tritonserver-ts/protocol';
import { encodeInferCall } from '@tritonserver-ts/protocol/grpc';

import { PerfError } from '../errors.js';
import { addInferStatSource } from '../measure/infer-stat.js';
import type { PerfOptions } from '../options/perf-options.js';
import type { InputDataset, ModelProfile, RequestRecord } from '../types.js';
import { EncodedGrpcInfer } from './encoded-grpc-infer.js';
import { createSystemSharedMemory, type SystemSharedMemory } from './shared-memory-regions.js';
import type { SequenceRequest } from './sequences.js';

/** An expected output as bytes (little-endian raw, BYTES length-prefixed). */
interface ExpectedBytes {
  readonly name: string;
  readonly bytes: Buffer;
}

/** One data entry ready to send. */
interface Entry {
  readonly inputs: readonly InferInput[];
  readonly expected: readonly ExpectedBytes[] | undefined;
  /** Its `ModelInferRequest` without sequence fields, encoded on first use (gRPC, see `EncodedGrpcInfer`). */
  encoded?: Buffer;
}

/** A request waiting for its responses on the gRPC stream. */
interface StreamPending {
  readonly startNs: bigint;
  readonly responseNs: bigint[];
  readonly stream: number;
  readonly step: number;
  readonly delayed: boolean;
  readonly sequence: SequenceRequest | undefined;
  readonly expected: readonly ExpectedBytes[] | undefined;
  error: string | undefined;
  readonly done: () => void;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function asBytes(data: Parameters<typeof tensorDataToBytes>[1], datatype: string): Buffer {
  const bytes = tensorDataToBytes(datatype as Parameters<typeof tensorDataToBytes>[0], data);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Compares a response with the expected outputs (`validation_data`).
 * @returns undefined when every expected output matches, else what differs
 */
function validateOutputs(result: InferResult, expected: readonly ExpectedBytes[]): string | undefined {
  for (const { name, bytes } of expected) {
    if (!result.hasOutput(name)) return `output '${name}' is missing from the response`;
    let actual: Buffer;
    try {
      actual = asBytes(result.asTypedArray(name), result.datatype(name));
    } catch (error) {
      return `output '${name}' cannot be read: ${messageOf(error)}`;
    }
    if (!actual.equals(bytes)) {
      return `output '${name}' does not match the expected output (validation_data): ${actual.byteLength} bytes received, ${bytes.byteLength} expected${
        actual.byteLength === bytes.byteLength
          ? `, first difference at byte ${firstDifference(actual, bytes)}`
          : ''
      }`;
    }
  }
  return undefined;
}

function firstDifference(a: Buffer, b: Buffer): number {
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** Sends prepared requests of one run and keeps their records. */
export class RequestSender {
  readonly #client: TritonClient;
  readonly #model: string;
  readonly #options: PerfOptions;
  readonly #decoupled: boolean;
  readonly #entries: readonly (readonly Entry[])[];
  readonly #callOptions: InferOptions;
  readonly #streamOptions: StreamInferOptions;
  readonly #shm: SystemSharedMemory | undefined;
  readonly #abort = new AbortController();
  /** Unary gRPC requests that need no client-side result (see `EncodedGrpcInfer`). */
  readonly #encodedGrpc: EncodedGrpcInfer | undefined;
  /** The call fields of those requests, as `encodeInferCall` takes them. */
  readonly #grpcRequest: NeutralRequestOptions;
  #records: RequestRecord[] = [];
  #inFlight = 0;
  #idle: (() => void)[] = [];
  // --streaming
  readonly #streaming: boolean;
  #stream: GrpcInferStream | undefined;
  readonly #pending = new Map<string, StreamPending>();
  #nextId = 0;
  #closed = false;

  private constructor(
    client: TritonClient,
    model: ModelProfile,
    dataset: InputDataset,
    options: PerfOptions,
    shm: SystemSharedMemory | undefined,
  ) {
    this.#client = client;
    this.#model = model.name;
    this.#options = options;
    this.#decoupled = model.decoupled;
    this.#shm = shm;
    this.#streaming = options.streaming;
    this.#entries = dataset.streams.map((steps, s) =>
      steps.map((request, t): Entry => {
        const expected =
          request.expectedOutputs === undefined || shm !== undefined
            ? undefined
            : [...request.expectedOutputs].map(([name, output]) => ({
                name,
                bytes: asBytes(output.data, output.datatype),
              }));
        return { inputs: shm?.inputs[s]?.[t] ?? request.inputs, expected };
      }),
    );
    const outputs: readonly InferRequestedOutput[] | undefined = shm?.outputs;
    const parameters: Record<string, string | number | boolean> = {};
    for (const p of options.requestParameters) parameters[p.name] = p.value;
    // Every request in flight listens on the one abort signal: at a concurrency above Node's default
    // of 10 listeners it would warn of a leak that is not one (each call removes its listener).
    setMaxListeners(0, this.#abort.signal);
    this.#callOptions = {
      ...(model.version !== '' ? { modelVersion: model.version } : {}),
      ...(outputs !== undefined ? { outputs } : {}),
      ...(options.inputTensorFormat === 'json' ? { binaryData: false } : {}),
      ...(options.outputTensorFormat === 'json' && outputs === undefined ? { binaryDataOutput: false } : {}),
      ...(options.requestParameters.length > 0 ? { parameters } : {}),
      ...(options.protocol === 'grpc' && options.grpcCompression !== 'none'
        ? { requestCompression: options.grpcCompression }
        : {}),
      signal: this.#abort.signal,
      timeoutMs: 0,
      maxRetries: 0,
    };
    const {
      signal: _signal,
      timeoutMs: _timeout,
      maxRetries: _retries,
      requestCompression: _c,
      ...streamOptions
    } = this.#callOptions;
    this.#streamOptions = {
      ...streamOptions,
      ...(model.decoupled ? { enableEmptyFinalResponse: true } : {}),
    };
    const { modelVersion: _version, ...grpcRequest } = streamOptions;
    this.#grpcRequest = grpcRequest;
    if (options.protocol === 'grpc' && !options.streaming && options.grpcCompression === 'none') {
      this.#encodedGrpc = new EncodedGrpcInfer(options.url, options.headers, this.#abort.signal);
      addInferStatSource(client, this.#encodedGrpc);
    }
  }

  /**
   * A sender for the context: registers the shared-memory regions (`--shared-memory system`) and
   * opens the gRPC stream (`--streaming`).
   * @throws PerfError `SHARED_MEMORY` when the regions cannot be set up; `USAGE` for
   *   `--streaming` without gRPC
   */
  static async create(
    client: TritonClient,
    model: ModelProfile,
    dataset: InputDataset,
    options: PerfOptions,
  ): Promise<RequestSender> {
    if (options.streaming && options.protocol !== 'grpc') {
      throw new PerfError('USAGE', 'Streaming is only allowed with gRPC protocol.');
    }
    if (dataset.streams.length === 0 || dataset.streams.some((s) => s.length === 0)) {
      throw new PerfError('INPUT_DATA', 'the input data has no request to send');
    }
    const shm =
      options.sharedMemory === 'system'
        ? await createSystemSharedMemory(client, model, dataset, options.outputSharedMemorySize)
        : undefined;
    return new RequestSender(client, model, dataset, options, shm);
  }

  /** Requests sent and not finished. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** The shared-memory regions in use (`--shared-memory system`), for tests and reports. */
  get sharedMemory(): SystemSharedMemory | undefined {
    return this.#shm;
  }

  /** Records of the requests finished since the last call. */
  takeRecords(): RequestRecord[] {
    const records = this.#records;
    this.#records = [];
    return records;
  }

  /** Resolves when no request is in flight. */
  whenIdle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /**
   * Sends `dataset.streams[stream][step]` (with `sequence`'s id and flags) and resolves when its
   * last response or its error arrived, the record kept. Never rejects.
   */
  send(stream: number, step: number, sequence: SequenceRequest | undefined, delayed: boolean): Promise<void> {
    const entry = this.#entries[stream]?.[step];
    if (entry === undefined) throw new RangeError(`no input data for stream ${stream} step ${step}`);
    this.#inFlight += 1;
    return this.#streaming
      ? this.#sendOnStream(entry, stream, step, sequence, delayed)
      : this.#sendUnary(entry, stream, step, sequence, delayed);
  }

  async #sendUnary(
    entry: Entry,
    stream: number,
    step: number,
    sequence: SequenceRequest | undefined,
    delayed: boolean,
  ): Promise<void> {
    const encoded = this.#encodedGrpc;
    if (encoded !== undefined && entry.expected === undefined) {
      const startNs = process.hrtime.bigint();
      let error: string | undefined;
      try {
        const request =
          sequence === undefined
            ? (entry.encoded ??= this.#encode(entry, undefined))
            : this.#encode(entry, sequence);
        error = await encoded.send(request);
      } catch (e) {
        error = messageOf(e);
      }
      const endNs = process.hrtime.bigint();
      this.#record(
        startNs,
        endNs,
        error === undefined ? [endNs] : [],
        error,
        delayed,
        stream,
        step,
        sequence,
      );
      return;
    }
    const options =
      sequence === undefined
        ? this.#callOptions
        : {
            ...this.#callOptions,
            sequenceId: sequence.id,
            sequenceStart: sequence.start,
            sequenceEnd: sequence.end,
          };
    const startNs = process.hrtime.bigint();
    let endNs: bigint;
    let error: string | undefined;
    try {
      const result = await this.#client.infer(this.#model, entry.inputs, options);
      endNs = process.hrtime.bigint();
      if (entry.expected !== undefined) error = validateOutputs(result, entry.expected);
    } catch (e) {
      endNs = process.hrtime.bigint();
      error = messageOf(e);
    }
    this.#record(startNs, endNs, error === undefined ? [endNs] : [], error, delayed, stream, step, sequence);
  }

  /** `entry`'s `ModelInferRequest` (with `sequence`'s id and flags), as the client's gRPC transport encodes it. */
  #encode(entry: Entry, sequence: SequenceRequest | undefined): Buffer {
    const request: NeutralRequestOptions =
      sequence === undefined
        ? this.#grpcRequest
        : {
            ...this.#grpcRequest,
            sequenceId: sequence.id,
            sequenceStart: sequence.start,
            sequenceEnd: sequence.end,
          };
    const modelVersion = this.#callOptions.modelVersion;
    return encodeInferCall({
      modelName: this.#model,
      ...(modelVersion !== undefined ? { modelVersion: String(modelVersion) } : {}),
      inputs: entry.inputs,
      request,
    });
  }

  #record(
    startNs: bigint,
    endNs: bigint,
    responseNs: readonly bigint[],
    error: string | undefined,
    delayed: boolean,
    stream: number,
    step: number,
    sequence: SequenceRequest | undefined,
  ): void {
    const ok = error === undefined;
    let record: RequestRecord;
    if (sequence === undefined) {
      record = ok
        ? { startNs, endNs, responseNs, ok, delayed, stream, step }
        : { startNs, endNs, responseNs, ok, error, delayed, stream, step };
    } else {
      const { id: sequenceId, start: sequenceStart, end: sequenceEnd } = sequence;
      record = ok
        ? { startNs, endNs, responseNs, ok, delayed, stream, step, sequenceId, sequenceStart, sequenceEnd }
        : {
            startNs,
            endNs,
            responseNs,
            ok,
            error,
            delayed,
            stream,
            step,
            sequenceId,
            sequenceStart,
            sequenceEnd,
          };
    }
    this.#records.push(record);
    this.#inFlight -= 1;
    if (this.#inFlight === 0 && this.#idle.length > 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  // ---- --streaming: one ModelStreamInfer stream, responses matched by request id ----

  #openStream(): GrpcInferStream {
    const transport = (this.#client as { transport?: { openStream?: unknown } }).transport;
    if (transport === undefined || typeof transport.openStream !== 'function') {
      throw new PerfError('USAGE', 'Streaming is only allowed with gRPC protocol.');
    }
    const stream = (transport.openStream as (o: { headers: Record<string, string> }) => GrpcInferStream).call(
      transport,
      { headers: { ...this.#options.headers } },
    );
    void this.#readStream(stream);
    return stream;
  }

  async #readStream(stream: GrpcInferStream): Promise<void> {
    let failure: string | undefined;
    try {
      for (;;) {
        const next = await stream.next();
        if (next.done === true) break;
        this.#onStreamResponse(next.value);
      }
    } catch (error) {
      failure = messageOf(error);
    }
    if (this.#stream === stream) this.#stream = undefined;
    // Requests still waiting will get no answer on this stream.
    const reason = failure ?? 'the stream ended before the request was answered';
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.error ??= reason;
      pending.done();
    }
  }

  #onStreamResponse(response: StreamResponse): void {
    const now = process.hrtime.bigint();
    const pending = this.#pending.get(response.id);
    if (pending === undefined) return;
    if (response.error !== undefined) pending.error ??= response.error.message;
    else if (!response.empty) {
      pending.responseNs.push(now);
      if (pending.expected !== undefined && response.result !== undefined) {
        pending.error ??= validateOutputs(response.result, pending.expected);
      }
    }
    if (response.final) {
      this.#pending.delete(response.id);
      pending.done();
    }
  }

  #sendOnStream(
    entry: Entry,
    stream: number,
    step: number,
    sequence: SequenceRequest | undefined,
    delayed: boolean,
  ): Promise<void> {
    const requestId = String(++this.#nextId);
    const options: StreamInferOptions =
      sequence === undefined
        ? { ...this.#streamOptions, requestId }
        : {
            ...this.#streamOptions,
            requestId,
            sequenceId: sequence.id,
            sequenceStart: sequence.start,
            sequenceEnd: sequence.end,
          };
    return new Promise<void>((resolve) => {
      const startNs = process.hrtime.bigint();
      const pending: StreamPending = {
        startNs,
        responseNs: [],
        stream,
        step,
        delayed,
        sequence,
        expected: entry.expected,
        error: undefined,
        done: () => {
          const endNs = process.hrtime.bigint();
          const ok = pending.error === undefined && (pending.responseNs.length > 0 || this.#decoupled);
          this.#record(
            startNs,
            pending.responseNs.at(-1) ?? endNs,
            pending.responseNs,
            ok ? undefined : (pending.error ?? 'no response'),
            delayed,
            stream,
            step,
            sequence,
          );
          resolve();
        },
      };
      try {
        if (this.#closed) throw new Error('the load manager is stopped');
        this.#stream ??= this.#openStream();
        this.#pending.set(requestId, pending);
        this.#stream.send(this.#model, entry.inputs, options);
      } catch (error) {
        this.#pending.delete(requestId);
        pending.error = messageOf(error);
        pending.done();
      }
    });
  }

  /** Aborts every request in flight (their records say so) and closes the stream. */
  abort(): void {
    this.#abort.abort();
    this.#stream?.cancel();
  }

  /**
   * Releases what the sender holds: the stream (half-closed, or cancelled when requests are still
   * in flight) and the shared-memory regions. Call after the requests finished or were aborted.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#encodedGrpc?.close();
    const stream = this.#stream;
    if (stream !== undefined) {
      if (this.#pending.size > 0) stream.cancel();
      else stream.end();
    }
    await this.#shm?.release();
  }
}
