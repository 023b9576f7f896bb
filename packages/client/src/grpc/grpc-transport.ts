/**
 * The gRPC transport: every operation of the client over `inference.GRPCInferenceService` with
 * @grpc/grpc-js.
 * @packageDocumentation
 */
import {
  Client,
  Metadata,
  connectivityState,
  credentials as grpcCredentials,
  status as GrpcStatus,
  type CallOptions as GrpcCallOptions,
  type ChannelOptions,
  type ClientUnaryCall,
  type ChannelCredentials,
} from '@grpc/grpc-js';
import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import type {
  CudaSharedMemoryRegion,
  InferCall,
  InferenceStatistics,
  LoadModelOptions,
  LogSettings,
  ModelConfig,
  ModelMetadata,
  RepositoryIndexEntry,
  ServerMetadata,
  SystemSharedMemoryRegion,
  TraceSettings,
  TraceSettingsUpdate,
} from '../api-types.js';
import {
  TritonError,
  TritonInvalidArgumentError,
  TritonProtocolError,
  TritonServerError,
  invalidArgument,
  protocolFailure,
} from '../errors.js';
import type { InferResult } from '../infer-result.js';
import { BufferPool, type BufferPoolOptions } from '@tritonserver-ts/protocol';
import type { CompressionAlgorithm } from '@tritonserver-ts/protocol';
import type { InferInput } from '@tritonserver-ts/protocol';
import type { InferResponse } from '@tritonserver-ts/protocol';
import { stringifyJson } from '@tritonserver-ts/protocol/http';
import {
  encodeInferCall,
  fromReadInferResponse,
  readModelInferResponse,
  serviceDefinition,
  type GrpcMethodDefinition,
  type MessageInput,
  type ModelRepositoryParameterSchema,
} from '@tritonserver-ts/protocol/grpc';
import type { CancellationListener, Transport, TransportContext } from '../transport.js';
import type { InferTimer } from '../infer-stat.js';
import { cancellationOf } from '../call-scope.js';
import {
  cudaSharedMemoryFromGrpc,
  logSettingsFromGrpc,
  logSettingsToGrpc,
  modelConfigFromGrpc,
  modelMetadataFromGrpc,
  repositoryIndexFromGrpc,
  serverMetadataFromGrpc,
  statisticsFromGrpc,
  systemSharedMemoryFromGrpc,
  traceSettingsFromGrpc,
  traceSettingsToGrpc,
} from './convert.js';
import { channelOptionsFor, type GrpcTransportOptions } from './options.js';
import { callMetadata } from './metadata.js';
import {
  GrpcInferStream,
  type StreamInferOptions,
  type StreamOptions,
  type StreamResponse,
} from './stream.js';
import { StallWatch, type WatchedCall } from './stall-watch.js';
import { isHttp2ProtocolReset, sentByServer, tritonErrorFromGrpc } from './status.js';
import { parseGrpcUrl, type GrpcAddress } from './url.js';

/**
 * Receives each message of a {@link GrpcTransport.startStream} stream: the result, or the error (an
 * in-band error of one request, or the error that ended the stream, then `response` is undefined).
 */
export type StreamCallback = (
  result: InferResult | undefined,
  error: TritonError | undefined,
  response: StreamResponse | undefined,
) => void;

/** One request of {@link GrpcTransport.streamInfer}. */
export interface StreamRequest {
  readonly modelName: string;
  readonly inputs: readonly InferInput[];
  readonly options?: StreamInferOptions;
}

type Definitions = typeof serviceDefinition;
type Rpc = keyof Definitions;
type RequestOf<K extends Rpc> = Definitions[K] extends GrpcMethodDefinition<infer I, DescMessage> ? I : never;
type ResponseOf<K extends Rpc> =
  Definitions[K] extends GrpcMethodDefinition<DescMessage, infer O> ? MessageShape<O> : never;

function pem(value: Uint8Array | string | undefined): Buffer | null {
  if (value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
}

/** Call options of a call without a deadline (grpc-js only reads them). */
const NO_OPTIONS: GrpcCallOptions = Object.freeze({});

/**
 * Bounds of the buffers a gRPC transport reuses for encoded infer requests: requests of 64 KiB to
 * 16 MiB are pooled, and at most 16 MiB of idle buffers are kept per transport. A buffer is reused
 * once grpc-js has copied the request into its own frame (unary: when the call has ended; stream:
 * when the write has been handed on). Not a Triton setting.
 */
export const GRPC_REQUEST_BUFFERS: BufferPoolOptions = Object.freeze({
  minBytes: 64 * 1024,
  maxBytes: 16 * 1024 * 1024,
  maxIdleBytes: 16 * 1024 * 1024,
});

/** The path of `ModelInfer`. */
const MODEL_INFER_PATH = serviceDefinition.ModelInfer.path;

/** The serializer of an already encoded message. */
const passBuffer = (bytes: unknown): Buffer => bytes as Buffer;

/** The response as it came. */
const asIs = <T>(response: T): T => response;

/**
 * The neutral response of a `ModelInfer` answer.
 * @throws TritonProtocolError (via `protocolFailure`) when it cannot be read.
 */
function inferResponseOf(read: ReturnType<typeof readModelInferResponse>): InferResponse {
  try {
    return fromReadInferResponse(read);
  } catch (error) {
    throw protocolFailure(error);
  }
}

/** A non-negative integer argument as a bigint for a 64-bit field. */
function integer(value: number, what: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TritonInvalidArgumentError(`${what} must be a non-negative integer, got ${value}`);
  }
  return BigInt(value);
}

/** A grpc-js channel of the transport and the watch of its unary calls. */
interface Channel {
  readonly client: Client;
  watch: StallWatch | undefined;
}

/**
 * The channel option that gives a replacement channel a connection of its own (grpc-js reuses a
 * connection for channels whose options are equal).
 */
const CHANNEL_GENERATION_OPTION = 'tritonserver-ts.channel_generation';

const SERVER_LIVE = serviceDefinition.ServerLive;

/**
 * The stall probe: `ServerLive` on `client` with `deadline`. Any status the server sends counts as
 * an answer; `false` only when nothing came back (deadline, or a connection that refuses streams)
 * on a channel that is connected.
 */
function probeChannel(client: Client, deadline: Date): Promise<boolean> {
  // Calls waiting for a connection are grpc-js's to handle (it connects, or fails them): only a
  // channel that believes it is connected can be silently dead.
  if (client.getChannel().getConnectivityState(false) !== connectivityState.READY)
    return Promise.resolve(true);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      SERVER_LIVE.path,
      SERVER_LIVE.requestSerialize as (value: unknown) => Buffer,
      SERVER_LIVE.responseDeserialize as (bytes: Buffer) => unknown,
      {},
      new Metadata(),
      { deadline },
      (error) => resolve(error === null || sentByServer(error)),
    );
  });
}

/** Waits until `signal` fires or `ms` pass (a local deadline and the client's timer may race). */
function settle(signal: AbortSignal, ms: number): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * One unary call in flight: notes its response metadata, cancels it when the client call is
 * cancelled, and ends it with a typed error when its channel's {@link StallWatch} finds the
 * connection dead.
 */
class PendingUnary implements CancellationListener, WatchedCall {
  call: ClientUnaryCall | undefined;
  responded = false;
  /** Set when the call was given up on (its connection died without a word). */
  abandoned: TritonError | undefined;
  readonly #timer: InferTimer | undefined;
  readonly #rpc: string;
  readonly #target: string;

  constructor(timer: InferTimer | undefined, rpc: string, target: string) {
    this.#timer = timer;
    this.#rpc = rpc;
    this.#target = target;
  }

  abandon(timeoutMs: number): void {
    this.abandoned = new TritonProtocolError(
      `${this.#rpc} on ${this.#target}: no answer, and the connection did not answer a probe within ${timeoutMs} ms ` +
        'either: it died without a word (a header block this client cannot read, such as a status message ' +
        'over 64 KiB, ends an HTTP/2 connection so). The call was abandoned; the next call uses a new connection.',
    );
    this.call?.cancel();
  }

  /** The call's response metadata arrived. */
  onMetadata(): void {
    this.responded = true;
    if (this.#timer !== undefined) this.#timer.receiveStart = process.hrtime.bigint();
  }

  onCallAbort(): void {
    this.call?.cancel();
  }
}

/**
 * The gRPC transport (`inference.GRPCInferenceService` over @grpc/grpc-js). Hand it to
 * `new TritonClient({ transport })`, or use {@link createGrpcClient}.
 *
 * Per call: the client's headers go as metadata, its timeout as the gRPC deadline, and its abort
 * signal cancels the call. Query parameters are HTTP-only and ignored. Infer: inputs travel in
 * `raw_input_contents` (typed `contents` for inputs with `binaryData: false`); `requestCompression`
 * compresses the request message (gzip or deflate, over a second channel made on first use, since
 * grpc-js compresses per channel); the client always accepts compressed responses, so
 * `responseCompression` is not needed; `rawBinaryRequest` is HTTP-only and ignored. Large infer
 * requests (64 KiB to 16 MiB) are encoded into buffers reused from one call to the next (see
 * {@link GRPC_REQUEST_BUFFERS}).
 */
export class GrpcTransport implements Transport {
  readonly kind = 'grpc' as const;
  readonly address: GrpcAddress;
  /** The channel of uncompressed calls and streams (replaced when its connection dies silently). */
  #main: Channel;
  readonly #options: GrpcTransportOptions;
  readonly #receiveLimit: number;
  readonly #credentials: ChannelCredentials;
  /** Channels that compress requests (grpc-js compresses per channel), made on first use. */
  readonly #compressed = new Map<CompressionAlgorithm, Channel>();
  /** Channels made to replace dead ones so far (a new one must not reuse the dead connection). */
  #replaced = 0;
  /** Encoded infer requests, reused once grpc-js has framed them (see {@link GRPC_REQUEST_BUFFERS}). */
  readonly #requestBuffers = new BufferPool(GRPC_REQUEST_BUFFERS);
  /** Where `infer` encodes its requests (one function for every call). */
  readonly #takeRequestBuffer = (size: number): Buffer => this.#requestBuffers.take(size);
  /** The stream of {@link GrpcTransport.startStream} and its reader. */
  #active: { stream: GrpcInferStream; reading: Promise<void> } | undefined;

  constructor(options: GrpcTransportOptions) {
    const tls = options.tls ?? {};
    const hasTls =
      tls.rootCertificates !== undefined ||
      tls.privateKey !== undefined ||
      tls.certificateChain !== undefined;
    this.address = parseGrpcUrl(options.url, options.ssl === true || hasTls);
    let creds: ChannelCredentials;
    try {
      creds = this.address.secure
        ? grpcCredentials.createSsl(pem(tls.rootCertificates), pem(tls.privateKey), pem(tls.certificateChain))
        : grpcCredentials.createInsecure();
    } catch (error) {
      throw invalidArgument(error);
    }
    this.#options = options;
    this.#receiveLimit = Number(channelOptionsFor(options)['grpc.max_receive_message_length']);
    this.#credentials = creds;
    this.#main = this.#channel(undefined);
  }

  /**
   * A new channel (for uncompressed calls, or compressing with `compression`), with its stall watch
   * unless `stallProbe: false`.
   */
  #channel(compression: CompressionAlgorithm | undefined): Channel {
    const options: ChannelOptions = { ...channelOptionsFor(this.#options) };
    // grpc-js's CompressionAlgorithms: 1 deflate, 2 gzip.
    if (compression !== undefined)
      options['grpc.default_compression_algorithm'] = compression === 'gzip' ? 2 : 1;
    // grpc-js shares connections between channels with equal options: a replacement gets its own.
    if (this.#replaced > 0) options[CHANNEL_GENERATION_OPTION] = this.#replaced;
    const client = new Client(this.address.target, this.#credentials, options);
    const probe = this.#options.stallProbe;
    const channel: Channel = { client, watch: undefined };
    if (probe !== false) {
      channel.watch = new StallWatch(
        (deadline) => probeChannel(client, deadline),
        () => this.#replace(channel, compression),
        probe,
      );
    }
    return channel;
  }

  /** Moves the calls of `compression` off `dead` to a new connection, and closes `dead`. */
  #replace(dead: Channel, compression: CompressionAlgorithm | undefined): void {
    this.#replaced++;
    if (compression === undefined) {
      if (this.#main === dead) this.#main = this.#channel(undefined);
    } else if (this.#compressed.get(compression) === dead) {
      this.#compressed.set(compression, this.#channel(compression));
    }
    dead.client.close();
  }

  /** Bytes of idle request buffers kept for reuse now (diagnostics; see {@link GRPC_REQUEST_BUFFERS}). */
  get idleRequestBufferBytes(): number {
    return this.#requestBuffers.idleBytes;
  }

  #channelFor(compression: CompressionAlgorithm | undefined): Channel {
    if (compression === undefined) return this.#main;
    let channel = this.#compressed.get(compression);
    if (channel === undefined) {
      channel = this.#channel(compression);
      this.#compressed.set(compression, channel);
    }
    return channel;
  }

  /**
   * Runs one unary RPC. Throws the client's errors: {@link TritonServerError} for a status from the
   * server, `TritonConnectionError` when no response came.
   */
  unary<K extends Rpc>(
    rpc: K,
    request: MessageInput<RequestOf<K>>,
    ctx: TransportContext,
    compression?: CompressionAlgorithm,
  ): Promise<ResponseOf<K>> {
    const method = serviceDefinition[rpc] as unknown as GrpcMethodDefinition<DescMessage, DescMessage>;
    return this.#unary(
      rpc,
      method.path,
      method.requestSerialize as (value: unknown) => Buffer,
      method.responseDeserialize as (bytes: Buffer) => ResponseOf<K>,
      request,
      ctx,
      compression,
      asIs,
    );
  }

  /**
   * {@link GrpcTransport.unary} with the method's path and serializers; the promise resolves with
   * `finish(response)` (or rejects with what `finish` throws), so that a caller converting the
   * response needs no `await` of its own.
   */
  #unary<T, R>(
    rpc: string,
    path: string,
    serialize: (value: unknown) => Buffer,
    deserialize: (bytes: Buffer) => T,
    request: unknown,
    ctx: TransportContext,
    compression: CompressionAlgorithm | undefined,
    finish: (response: T) => R,
    /** Called once grpc-js has finished with the call (and so with `request`'s bytes). */
    release?: () => void,
  ): Promise<R> {
    const metadata = callMetadata(ctx.headers);
    const callOptions: GrpcCallOptions = ctx.deadline !== undefined ? { deadline: ctx.deadline } : NO_OPTIONS;
    const cancellation = cancellationOf(ctx);
    return new Promise<R>((resolve, reject) => {
      if (cancellation.aborted) {
        reject(tritonErrorFromGrpc(cancellation.reason, rpc));
        return;
      }
      const pending = new PendingUnary(ctx.timer, rpc, this.address.target);
      const channel = this.#channelFor(compression);
      const call = channel.client.makeUnaryRequest(
        path,
        serialize,
        deserialize,
        request,
        metadata,
        callOptions,
        (error, response) => {
          release?.();
          cancellation.removeListener(pending);
          channel.watch?.end(pending);
          if (pending.abandoned !== undefined) {
            reject(pending.abandoned);
            return;
          }
          if (error === null && response !== undefined) {
            let value: R;
            try {
              value = finish(response);
            } catch (failure) {
              reject(failure instanceof Error ? failure : new Error(String(failure)));
              return;
            }
            resolve(value);
            return;
          }
          const failure = tritonErrorFromGrpc(error, `${rpc} on ${this.address.target}`, pending.responded, {
            maxReceiveMessageLength: this.#receiveLimit,
          });
          // Node 22+ resets a stream whose header block it cannot read and closes the connection
          // (Node 20 goes silent instead, which the stall watch catches): move on to a new one now.
          if (error !== null && isHttp2ProtocolReset(error)) this.#replace(channel, compression);
          if (error?.code === GrpcStatus.DEADLINE_EXCEEDED) {
            // Let the client's own timer fire first, so it reports its timeout error.
            void settle(ctx.signal, 50).then(() => reject(failure));
            return;
          }
          reject(failure);
        },
      );
      // grpc-js serializes the request synchronously in makeUnaryRequest (the infer's send ends).
      if (ctx.timer !== undefined) ctx.timer.sendEnd = process.hrtime.bigint();
      pending.call = call;
      // An inline listener (not a per-instance arrow field, which tsx's keepNames renames per call).
      call.on('metadata', () => pending.onMetadata());
      cancellation.addListener(pending);
      channel.watch?.start(pending);
    });
  }

  async #flag(run: () => Promise<boolean>, ctx: TransportContext): Promise<boolean> {
    try {
      return await run();
    } catch (error) {
      // As over HTTP: a server that answers with an error status means "not live / ready".
      if (error instanceof TritonServerError && !cancellationOf(ctx).aborted) return false;
      throw error;
    }
  }

  isServerLive(ctx: TransportContext): Promise<boolean> {
    return this.#flag(async () => (await this.unary('ServerLive', {}, ctx)).live, ctx);
  }

  isServerReady(ctx: TransportContext): Promise<boolean> {
    return this.#flag(async () => (await this.unary('ServerReady', {}, ctx)).ready, ctx);
  }

  isModelReady(name: string, version: string, ctx: TransportContext): Promise<boolean> {
    return this.#flag(async () => (await this.unary('ModelReady', { name, version }, ctx)).ready, ctx);
  }

  async getServerMetadata(ctx: TransportContext): Promise<ServerMetadata> {
    return serverMetadataFromGrpc(await this.unary('ServerMetadata', {}, ctx));
  }

  async getModelMetadata(name: string, version: string, ctx: TransportContext): Promise<ModelMetadata> {
    return modelMetadataFromGrpc(await this.unary('ModelMetadata', { name, version }, ctx));
  }

  async getModelConfig(name: string, version: string, ctx: TransportContext): Promise<ModelConfig> {
    return modelConfigFromGrpc((await this.unary('ModelConfig', { name, version }, ctx)).config);
  }

  async getModelRepositoryIndex(ctx: TransportContext): Promise<RepositoryIndexEntry[]> {
    return repositoryIndexFromGrpc(await this.unary('RepositoryIndex', {}, ctx));
  }

  async loadModel(name: string, options: LoadModelOptions, ctx: TransportContext): Promise<void> {
    const parameters: Record<string, MessageInput<typeof ModelRepositoryParameterSchema>> = {};
    if (options.config !== undefined) {
      const config = typeof options.config === 'string' ? options.config : stringifyJson(options.config);
      parameters.config = { parameterChoice: { case: 'stringParam', value: config } };
    }
    for (const [path, content] of Object.entries(options.files ?? {})) {
      const key = path.startsWith('file:') ? path : `file:${path}`;
      parameters[key] = { parameterChoice: { case: 'bytesParam', value: content } };
    }
    await this.unary('RepositoryModelLoad', { modelName: name, parameters }, ctx);
  }

  async unloadModel(name: string, unloadDependents: boolean, ctx: TransportContext): Promise<void> {
    await this.unary(
      'RepositoryModelUnload',
      {
        modelName: name,
        parameters: {
          unload_dependents: { parameterChoice: { case: 'boolParam', value: unloadDependents } },
        },
      },
      ctx,
    );
  }

  async getInferenceStatistics(
    name: string,
    version: string,
    ctx: TransportContext,
  ): Promise<InferenceStatistics> {
    return statisticsFromGrpc(await this.unary('ModelStatistics', { name, version }, ctx));
  }

  async getTraceSettings(modelName: string, ctx: TransportContext): Promise<TraceSettings> {
    return traceSettingsFromGrpc(await this.unary('TraceSetting', { modelName }, ctx));
  }

  async updateTraceSettings(
    modelName: string,
    settings: TraceSettingsUpdate,
    ctx: TransportContext,
  ): Promise<TraceSettings> {
    return traceSettingsFromGrpc(
      await this.unary('TraceSetting', { modelName, settings: traceSettingsToGrpc(settings) }, ctx),
    );
  }

  async getLogSettings(ctx: TransportContext): Promise<LogSettings> {
    return logSettingsFromGrpc(await this.unary('LogSettings', {}, ctx));
  }

  async updateLogSettings(settings: LogSettings, ctx: TransportContext): Promise<LogSettings> {
    return logSettingsFromGrpc(
      await this.unary('LogSettings', { settings: logSettingsToGrpc(settings) }, ctx),
    );
  }

  async getSystemSharedMemoryStatus(
    region: string,
    ctx: TransportContext,
  ): Promise<SystemSharedMemoryRegion[]> {
    return systemSharedMemoryFromGrpc(await this.unary('SystemSharedMemoryStatus', { name: region }, ctx));
  }

  async registerSystemSharedMemory(
    name: string,
    key: string,
    byteSize: number,
    offset: number,
    ctx: TransportContext,
  ): Promise<void> {
    await this.unary(
      'SystemSharedMemoryRegister',
      { name, key, offset: integer(offset, 'offset'), byteSize: integer(byteSize, 'byte_size') },
      ctx,
    );
  }

  async unregisterSystemSharedMemory(name: string, ctx: TransportContext): Promise<void> {
    await this.unary('SystemSharedMemoryUnregister', { name }, ctx);
  }

  async getCudaSharedMemoryStatus(region: string, ctx: TransportContext): Promise<CudaSharedMemoryRegion[]> {
    return cudaSharedMemoryFromGrpc(await this.unary('CudaSharedMemoryStatus', { name: region }, ctx));
  }

  async registerCudaSharedMemory(
    name: string,
    rawHandle: Uint8Array,
    deviceId: number,
    byteSize: number,
    ctx: TransportContext,
  ): Promise<void> {
    await this.unary(
      'CudaSharedMemoryRegister',
      {
        name,
        rawHandle,
        deviceId: integer(deviceId, 'device_id'),
        byteSize: integer(byteSize, 'byte_size'),
      },
      ctx,
    );
  }

  async unregisterCudaSharedMemory(name: string, ctx: TransportContext): Promise<void> {
    await this.unary('CudaSharedMemoryUnregister', { name }, ctx);
  }

  infer(call: InferCall, ctx: TransportContext): Promise<InferResponse> {
    let request: Buffer;
    try {
      // The common call is written without protobuf-es messages; the bytes are those of
      // toModelInferRequest + encodeModelInferRequest.
      request = encodeInferCall(
        {
          modelName: call.modelName,
          modelVersion: call.modelVersion,
          inputs: call.inputs,
          request: call.request,
        },
        false,
        this.#takeRequestBuffer,
      );
    } catch (error) {
      return Promise.reject(invalidArgument(error));
    }
    try {
      return this.#unary(
        'ModelInfer',
        MODEL_INFER_PATH,
        passBuffer,
        readModelInferResponse,
        request,
        ctx,
        call.requestCompression,
        inferResponseOf,
        // grpc-js frames (copies) the message before sending it, and calls back only after that.
        () => this.#requestBuffers.give(request),
      );
    } catch (error) {
      // As from the async method this was: a bad header rejects, never throws.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /**
   * Opens a `ModelStreamInfer` stream (the Python client's `start_stream`): send requests with
   * `send`, read responses with `for await`, finish with `end` or `cancel`.
   */
  openStream(options: StreamOptions = {}): GrpcInferStream {
    return new GrpcInferStream(
      this.#main.client,
      this.address.target,
      options,
      this.#receiveLimit,
      this.#requestBuffers,
    );
  }

  /**
   * Streams requests and yields every response as it arrives (zero or many per request for
   * decoupled models). The stream is half-closed when `requests` is exhausted and ends when the
   * server has answered everything; breaking out of the loop cancels it.
   */
  async *streamInfer(
    requests: Iterable<StreamRequest> | AsyncIterable<StreamRequest>,
    options: StreamOptions = {},
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const stream = this.openStream(options);
    let pumpError: Error | undefined;
    const pump = (async () => {
      try {
        for await (const r of requests) stream.send(r.modelName, r.inputs, r.options);
        stream.end();
      } catch (error) {
        pumpError = error instanceof Error ? error : new Error(String(error));
        stream.cancel();
      }
    })();
    try {
      for await (const response of stream) yield response;
    } catch (error) {
      throw pumpError ?? error;
    } finally {
      stream.cancel();
      // Not awaited: a request iterable that never yields again must not hold the caller.
      void pump;
    }
    if (pumpError !== undefined) throw pumpError;
  }

  /**
   * Starts the one stream of this transport, as the Python client's `start_stream`: every response
   * (or in-band error) is passed to `callback(result, error, response)`; an error of the stream
   * itself is passed once as `error` and ends it.
   * @throws TritonInvalidArgumentError when a stream is already running.
   */
  startStream(callback: StreamCallback, options: StreamOptions = {}): void {
    if (this.#active !== undefined) {
      throw new TritonInvalidArgumentError(
        'cannot start another stream with one already running. Only a single active stream is supported at a given time.',
      );
    }
    const stream = this.openStream(options);
    const reading = (async () => {
      try {
        for await (const response of stream) callback(response.result, response.error, response);
      } catch (error) {
        callback(undefined, error instanceof TritonError ? error : protocolFailure(error), undefined);
      }
    })();
    this.#active = { stream, reading };
  }

  /**
   * Sends a request on the stream of {@link GrpcTransport.startStream} (the Python client's
   * `async_stream_infer`); responses go to its callback.
   * @throws TritonInvalidArgumentError when no stream was started.
   */
  asyncStreamInfer(modelName: string, inputs: readonly InferInput[], options: StreamInferOptions = {}): void {
    if (this.#active === undefined) {
      throw new TritonInvalidArgumentError('stream not available, use startStream() to make one available.');
    }
    this.#active.stream.send(modelName, inputs, options);
  }

  /**
   * Stops the stream of {@link GrpcTransport.startStream} (the Python client's `stop_stream`):
   * half-closes it and resolves once the server has sent every response, or with
   * `cancelRequests: true` cancels it at once. A no-op without a stream.
   */
  async stopStream(options: { readonly cancelRequests?: boolean } = {}): Promise<void> {
    const active = this.#active;
    if (active === undefined) return;
    this.#active = undefined;
    if (options.cancelRequests === true) active.stream.cancel();
    else active.stream.end();
    await active.reading;
  }

  /** Closes the channel; calls in flight finish first. */
  async close(): Promise<void> {
    // As the Python client: the stream is stopped (half-closed, its responses read) first.
    await this.stopStream();
    this.#main.client.close();
    for (const channel of this.#compressed.values()) channel.client.close();
  }
}
