/**
 * `ModelStreamInfer`: one bidirectional stream carrying any number of inference requests and their
 * responses (zero, one or many per request for decoupled models), like the Python client's
 * `start_stream` / `async_stream_infer` / `stop_stream`, and as an async iterable.
 * @packageDocumentation
 */
import type { Client, ClientDuplexStream } from '@grpc/grpc-js';
import {
  TritonAbortError,
  TritonError,
  TritonInvalidArgumentError,
  TritonServerError,
  invalidArgument,
  protocolFailure,
} from '../errors.js';
import { InferResult } from '../infer-result.js';
import type { BufferPool } from '@tritonserver-ts/protocol';
import type { InferInput } from '@tritonserver-ts/protocol';
import type { InferRequestOptions } from '@tritonserver-ts/protocol/http';
import {
  encodeInferCall,
  fromInferResponseParts,
  readModelStreamInferResponse,
  serviceDefinition,
  StreamResponseParts,
  toInferResponseParts,
  type InferResponseParts,
  type ModelStreamInferResponse,
} from '@tritonserver-ts/protocol/grpc';
import { metadataFromHeaders } from './metadata.js';
import { tritonErrorFromGrpc } from './status.js';

/** Options of one request on a stream. */
export interface StreamInferOptions extends InferRequestOptions {
  /** Model version (default: the server's choice). */
  readonly modelVersion?: string | number;
  /**
   * Ask a decoupled model for an empty response flagged final after its last one
   * (`triton_enable_empty_final_response`), so the end of each request's responses is visible.
   */
  readonly enableEmptyFinalResponse?: boolean;
}

/** One message read from a stream. */
export interface StreamResponse {
  /** The response, or `undefined` when the server reported an error for one request. */
  readonly result: InferResult | undefined;
  /** The server's in-band error for one request (the stream stays open). */
  readonly error: TritonServerError | undefined;
  /** The request id the message answers (as sent in `requestId`; '' when none). */
  readonly id: string;
  /**
   * `triton_final_response`: the last response of its request (always true for models that are not
   * decoupled; a decoupled model's responses carry false but the last). The raw parameter is also in
   * `result.parameters.triton_final_response`, as the Python client's
   * `result.get_response().parameters["triton_final_response"]`.
   */
  readonly final: boolean;
  /** A final response without outputs (see `enableEmptyFinalResponse`). */
  readonly empty: boolean;
}

/** Options of {@link GrpcInferStream}. */
export interface StreamOptions {
  /** Headers sent as metadata when the stream opens. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Cancels the stream (pending reads reject with `TritonAbortError`). */
  readonly signal?: AbortSignal;
  /** Deadline of the whole stream in ms (the Python client's `stream_timeout`; default none). */
  readonly timeoutMs?: number;
}

/** Reads a `ModelStreamInferResponse` into a {@link StreamResponse}. */
export function streamResponseFrom(message: ModelStreamInferResponse): StreamResponse {
  const response = message.inferResponse;
  return streamResponseOf(
    message.errorMessage,
    response === undefined ? undefined : toInferResponseParts(response),
  );
}

/** {@link streamResponseFrom} of a message read by `readModelStreamInferResponse`. */
function streamResponseOfRead(read: StreamResponseParts | ModelStreamInferResponse): StreamResponse {
  return read instanceof StreamResponseParts
    ? streamResponseOf(read.errorMessage, read.response)
    : streamResponseFrom(read);
}

function streamResponseOf(errorMessage: string, response: InferResponseParts | undefined): StreamResponse {
  const id = response?.id ?? '';
  const finalParam = response?.parameters.triton_final_response;
  // Without the parameter (a request refused before it ran) the message is the last of its request.
  const final = typeof finalParam === 'boolean' ? finalParam : true;
  if (errorMessage !== '') {
    // An in-band error carries no status: its kind is unknown (status 400, as Triton's HTTP
    // front end answers for most request errors).
    const error = new TritonServerError(400, errorMessage, {
      body: errorMessage,
      transport: 'grpc',
      reason: 'UNKNOWN',
    });
    // A decoupled model's error for one response may be followed by more (its final flag says).
    return { result: undefined, error, id, final, empty: true };
  }
  if (response === undefined) {
    return { result: undefined, error: undefined, id, final: true, empty: true };
  }
  let decoded;
  try {
    decoded = fromInferResponseParts(response);
  } catch (error) {
    throw protocolFailure(error);
  }
  return {
    result: new InferResult(decoded),
    error: undefined,
    id,
    final,
    empty: response.outputs.length === 0,
  };
}

/** The serializer of an already encoded request. */
const passBuffer = (bytes: Buffer): Buffer => bytes;

type Waiter = { resolve: (r: IteratorResult<StreamResponse>) => void; reject: (e: unknown) => void };

/** The responses of one request being gathered by {@link GrpcInferStream.inferAll}. */
interface Collector {
  readonly responses: StreamResponse[];
  readonly resolve: (responses: StreamResponse[]) => void;
  readonly reject: (error: unknown) => void;
}

let collectSerial = 0;

/**
 * An open `ModelStreamInfer` call. {@link GrpcInferStream.send} queues requests (the Python
 * client's `async_stream_infer`); responses are read by iterating the stream (`for await`), in the
 * order the server sends them; correlate them by `requestId`. {@link GrpcInferStream.end} half-closes
 * (no more requests; iteration ends after the last response), {@link GrpcInferStream.cancel} stops
 * at once (the Python client's `stop_stream(cancel_requests=True)`).
 */
export class GrpcInferStream implements AsyncIterable<StreamResponse> {
  readonly #call: ClientDuplexStream<Buffer, StreamResponseParts | ModelStreamInferResponse>;
  readonly #queue: StreamResponse[] = [];
  readonly #waiters: Waiter[] = [];
  readonly #collectors = new Map<string, Collector>();
  #failure: unknown;
  #done = false;
  #ended = false;
  #responded = false;
  readonly #target: string;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = (): void => this.cancel();
  readonly #requestBuffers: BufferPool | undefined;
  /** Where `send` encodes its requests (made once per stream). */
  readonly #takeRequestBuffer: ((size: number) => Buffer) | undefined;

  /**
   * @param requestBuffers - where requests are encoded; each buffer is given back once grpc-js has
   * framed its request (the write's callback).
   */
  constructor(
    client: Client,
    target: string,
    options: StreamOptions = {},
    maxReceiveMessageLength?: number,
    requestBuffers?: BufferPool,
  ) {
    this.#target = target;
    this.#requestBuffers = requestBuffers;
    this.#takeRequestBuffer = requestBuffers === undefined ? undefined : (size) => requestBuffers.take(size);
    const method = serviceDefinition.ModelStreamInfer;
    const metadata = metadataFromHeaders(options.headers ?? {});
    const timeout = options.timeoutMs;
    const deadline =
      timeout !== undefined && timeout > 0 && Number.isFinite(timeout) ? Date.now() + timeout : undefined;
    this.#call = client.makeBidiStreamRequest(
      method.path,
      passBuffer,
      readModelStreamInferResponse,
      metadata,
      deadline !== undefined ? { deadline } : {},
    );
    this.#signal = options.signal;
    if (options.signal?.aborted === true) queueMicrotask(() => this.cancel());
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#call.on('metadata', () => {
      this.#responded = true;
    });
    this.#call.on('data', (message: StreamResponseParts | ModelStreamInferResponse) => {
      let response: StreamResponse;
      try {
        response = streamResponseOfRead(message);
      } catch (error) {
        this.#fail(error);
        return;
      }
      const collector = this.#collectors.get(response.id);
      if (collector !== undefined) {
        collector.responses.push(response);
        if (response.final) {
          this.#collectors.delete(response.id);
          collector.resolve(collector.responses);
        }
        return;
      }
      const waiter = this.#waiters.shift();
      if (waiter !== undefined) waiter.resolve({ value: response, done: false });
      else this.#queue.push(response);
    });
    this.#call.on('error', (error: unknown) => {
      if (this.#signal?.aborted === true) this.#fail(new TritonAbortError({ cause: error }));
      else {
        this.#fail(
          tritonErrorFromGrpc(error, `ModelStreamInfer on ${this.#target}`, this.#responded, {
            ...(maxReceiveMessageLength !== undefined ? { maxReceiveMessageLength } : {}),
          }),
        );
      }
    });
    this.#call.on('end', () => this.#finish());
  }

  #fail(error: unknown): void {
    if (this.#done) return;
    this.#failure = error;
    this.#done = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    for (const w of this.#waiters.splice(0)) w.reject(error);
    for (const c of this.#collectors.values()) c.reject(error);
    this.#collectors.clear();
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    for (const w of this.#waiters.splice(0)) w.resolve({ value: undefined, done: true });
    // The server ended the stream: every request is complete (a final flag alone may not be sent).
    for (const c of this.#collectors.values()) c.resolve(c.responses);
    this.#collectors.clear();
  }

  /**
   * Sends one request on the stream (the Python client's `async_stream_infer`).
   * @throws TritonInvalidArgumentError when the inputs cannot be encoded or the stream was ended.
   */
  send(modelName: string, inputs: readonly InferInput[], options: StreamInferOptions = {}): void {
    if (this.#ended || this.#done) throw new TritonInvalidArgumentError('the stream is closed');
    let request: Buffer;
    const buffers = this.#requestBuffers;
    try {
      // The bytes of toModelInferRequest + encodeModelInferRequest (the common call without
      // protobuf-es messages).
      request = encodeInferCall(
        {
          modelName,
          modelVersion: options.modelVersion === undefined ? '' : String(options.modelVersion),
          inputs,
          request: options,
        },
        options.enableEmptyFinalResponse === true,
        this.#takeRequestBuffer,
      );
    } catch (error) {
      throw invalidArgument(error);
    }
    if (buffers === undefined) this.#call.write(request);
    // grpc-js calls back once the request is framed (copied) and handed on, or the stream is gone.
    else this.#call.write(request, () => buffers.give(request));
  }

  /**
   * Sends one request and gathers all of its responses until the one flagged final (a decoupled
   * model may send zero or many). Its responses are not passed to the iterator. The request is sent
   * with `enableEmptyFinalResponse: true` unless told otherwise (without it a request answered by
   * the final flag alone is only seen complete when the stream ends) and with `requestId` (one is
   * made up when missing: the responses are matched by id, so ids must be unique on the stream).
   * Resolves with the responses in order (an in-band error is one of them: check `error`); rejects
   * when the stream fails or is cancelled first.
   * @throws TritonInvalidArgumentError when the inputs cannot be encoded, the stream was ended, or
   * another `inferAll` of the stream waits for the same id.
   */
  inferAll(
    modelName: string,
    inputs: readonly InferInput[],
    options: StreamInferOptions = {},
  ): Promise<StreamResponse[]> {
    const id =
      options.requestId !== undefined && options.requestId !== ''
        ? options.requestId
        : `tritonserver-ts-${process.pid}-${++collectSerial}`;
    if (this.#collectors.has(id)) {
      throw new TritonInvalidArgumentError(
        `a request with id '${id}' is already being collected on this stream`,
      );
    }
    this.send(modelName, inputs, { enableEmptyFinalResponse: true, ...options, requestId: id });
    return new Promise((resolve, reject) => {
      this.#collectors.set(id, { responses: [], resolve, reject });
    });
  }

  /** Half-closes the stream: no more requests; responses still arrive until the server ends it. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#call.end();
  }

  /** Cancels the stream at once; pending and later reads end with `TritonAbortError`. */
  cancel(): void {
    this.#ended = true;
    if (!this.#done) this.#fail(new TritonAbortError());
    this.#call.cancel();
  }

  /** The next response, or `done` when the server ended the stream. */
  next(): Promise<IteratorResult<StreamResponse>> {
    const queued = this.#queue.shift();
    if (queued !== undefined) return Promise.resolve({ value: queued, done: false });
    if (this.#done) {
      return this.#failure !== undefined
        ? Promise.reject(
            this.#failure instanceof TritonError ? this.#failure : protocolFailure(this.#failure),
          )
        : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamResponse> {
    return {
      next: () => this.next(),
      return: () => {
        this.cancel();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
