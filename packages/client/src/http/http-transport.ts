/**
 * The HTTP/REST transport (KServe v2 + Triton extensions) over an undici keep-alive `Pool`.
 * @packageDocumentation
 */
import { Pool } from 'undici';
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
  EMPTY_RESPONSE_MESSAGE,
  TritonConnectionError,
  TritonError,
  TritonServerError,
  invalidArgument,
  protocolFailure,
} from '../errors.js';
import type { QueryParams } from '../query-params.js';
import { parseRetryAfter } from '../retry.js';
import { compressBody, decompressBody } from '@tritonserver-ts/protocol';
import { encodeInferRequestBody, encodeRawBinaryRequest } from '@tritonserver-ts/protocol/http';
import { inferResponseFromHttp } from '@tritonserver-ts/protocol/http';
import { type InferResponse } from '@tritonserver-ts/protocol';
import { parseJson, stringifyJson } from '@tritonserver-ts/protocol/http';
import { INFERENCE_HEADER_CONTENT_LENGTH } from '@tritonserver-ts/protocol/http';
import type { Transport, TransportContext } from '../transport.js';
import { cancellationOf } from '../call-scope.js';
import { exchange, type HttpResponse, type ReceivedResponse } from './exchange.js';
import { streamingRequest, type StreamingResponse } from './event-stream-request.js';
import { decodeGenerateEvent, type GenerateResponse } from '@tritonserver-ts/protocol/http';
import type { GenerateCall } from '../api-types.js';
import { inBandGenerateError } from '../generate.js';
import { apiPath, parseServerUrl, type ServerAddress } from './url.js';

export type { HttpResponse } from './exchange.js';

/** Options of {@link HttpTransport}. */
export interface HttpTransportOptions {
  /** `host:port[/base]` or `http(s)://host[:port][/base]`. */
  readonly url: string;
  /** https for a `host:port` url. */
  readonly ssl?: boolean;
  /** Maximum pooled connections (default 64). */
  readonly connections?: number;
  /** How long an idle keep-alive connection stays open, in ms (default 30000). */
  readonly keepAliveTimeoutMs?: number;
}

function headerValue(headers: HttpResponse['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function queryString(params: Readonly<QueryParams>): string {
  // Most calls have none: skip URLSearchParams.
  if (Object.keys(params).length === 0) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    const values = Array.isArray(value) ? (value as readonly (string | number | boolean)[]) : [value];
    for (const v of values) search.append(key, String(v));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * Turns a non-200 response into a {@link TritonServerError}: the `error` text of a JSON body
 * verbatim; for an empty body the Python client's "client received an empty response from the
 * server."; otherwise the raw body text.
 */
export function serverErrorFromResponse(response: HttpResponse): TritonServerError {
  const text = Buffer.from(response.body).toString('utf8');
  let message = text.trim() === '' ? EMPTY_RESPONSE_MESSAGE : text;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as { error?: unknown }).error === 'string'
    ) {
      message = (parsed as { error: string }).error;
    }
  } catch {
    // Not JSON: keep the raw text.
  }
  const retryAfterMs = parseRetryAfter(headerValue(response.headers, 'retry-after'));
  return new TritonServerError(response.status, message, {
    body: text,
    transport: 'http',
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/**
 * An uncompressed infer request whose binary tail has at least this many bytes is sent as parts
 * (JSON header, then views on each binary input's data) instead of being copied into one new body:
 * for a 602 KB image the copy and its garbage cost about 1 ms of CPU per request. Smaller tails
 * (e.g. the 128 bytes of `simple`) are joined: up to about 16 KiB one buffer costs as little or less
 * than writing parts (measured in the README's Benchmark section); 64 KiB leaves a margin.
 */
export const PARTS_MIN_TAIL_BYTES = 64 * 1024;

const JSON_CONTENT: Readonly<Record<string, string>> = { 'content-type': 'application/json' };

/** The KServe v2 HTTP transport. Construct it directly only to share it or to pass pool options. */
export class HttpTransport implements Transport {
  readonly kind = 'http' as const;
  readonly address: ServerAddress;
  readonly #pool: Pool;
  readonly #inferPaths = new Map<string, string>();

  constructor(options: HttpTransportOptions) {
    this.address = parseServerUrl(options.url, options.ssl);
    this.#pool = new Pool(this.address.origin, {
      connections: options.connections ?? 64,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    });
  }

  /**
   * Sends one request and reads the whole response. Throws {@link TritonConnectionError} when no
   * complete response arrives (the client turns it into a timeout or abort error when its signal
   * fired).
   */
  send(
    method: 'GET' | 'POST',
    segments: string[],
    ctx: TransportContext,
    body?: Uint8Array | string,
    extraHeaders?: Record<string, string>,
  ): Promise<HttpResponse> {
    return this.#send(method, apiPath(this.address.basePath, ...segments), ctx, body, extraHeaders);
  }

  async #send(
    method: 'GET' | 'POST',
    apiPathname: string,
    ctx: TransportContext,
    body: Uint8Array | string | readonly Uint8Array[] | undefined,
    extraHeaders: Record<string, string> | undefined,
    alignAt?: string,
  ): Promise<ReceivedResponse> {
    const path = apiPathname + queryString(ctx.queryParams);
    const headers: Record<string, string> = { ...ctx.headers, ...extraHeaders };
    try {
      return await exchange(
        this.#pool,
        {
          method,
          path,
          headers,
          body: body ?? (method === 'POST' ? '' : null),
          ...(alignAt === undefined ? {} : { alignAt }),
        },
        cancellationOf(ctx),
        ctx.timer,
      );
    } catch (cause) {
      if (cause instanceof TritonError) throw cause;
      const detail = cause instanceof Error ? cause.message : String(cause);
      throw new TritonConnectionError(`${method} ${this.address.origin}${path} failed: ${detail}`, { cause });
    }
  }

  /** `{base}/v2/models/{name}[/versions/{version}]/infer`, cached for recent models. */
  #inferPath(name: string, version: string): string {
    const key = version === '' ? name : `${name}\u0000${version}`;
    let path = this.#inferPaths.get(key);
    if (path === undefined) {
      path = apiPath(this.address.basePath, ...this.#model(name, version, 'infer'));
      if (this.#inferPaths.size >= 256) this.#inferPaths.clear();
      this.#inferPaths.set(key, path);
    }
    return path;
  }

  async #json<T>(
    method: 'GET' | 'POST',
    segments: string[],
    ctx: TransportContext,
    body?: unknown,
  ): Promise<T> {
    const payload = body === undefined ? undefined : stringifyJson(body);
    const res = await this.send(
      method,
      segments,
      ctx,
      payload,
      payload === undefined ? undefined : { 'content-type': 'application/json' },
    );
    if (res.status !== 200) throw serverErrorFromResponse(res);
    if (res.body.byteLength === 0) return {} as T;
    try {
      return parseJson(Buffer.from(res.body).toString('utf8'), 'the response') as T;
    } catch (error) {
      throw protocolFailure(error);
    }
  }

  async #status(segments: string[], ctx: TransportContext): Promise<boolean> {
    const res = await this.send('GET', segments, ctx);
    return res.status === 200;
  }

  async #post(segments: string[], ctx: TransportContext, body?: unknown): Promise<void> {
    await this.#json('POST', segments, ctx, body);
  }

  #model(name: string, version: string, ...rest: string[]): string[] {
    return version === ''
      ? ['v2', 'models', name, ...rest]
      : ['v2', 'models', name, 'versions', version, ...rest];
  }

  /** `POST v2/models/{m}[/versions/{v}]/generate`: the model's one response. */
  async generate(call: GenerateCall, ctx: TransportContext): Promise<GenerateResponse> {
    const res = await this.send(
      'POST',
      this.#model(call.modelName, call.modelVersion, 'generate'),
      ctx,
      call.body,
      JSON_CONTENT,
    );
    if (res.status !== 200) throw serverErrorFromResponse(res);
    let event;
    try {
      event = decodeGenerateEvent(Buffer.from(res.body).toString('utf8'));
    } catch (error) {
      throw protocolFailure(error);
    }
    if (event.kind === 'error') throw inBandGenerateError(event.message, 'http');
    return event.response;
  }

  /**
   * `POST v2/models/{m}[/versions/{v}]/generate_stream`: resolves with the Server-Sent Events body
   * once the server answered 200 (read it as it arrives; returning early from it closes the
   * connection). A non-200 answer is read whole and thrown as infer's errors are.
   */
  async openGenerateStream(call: GenerateCall, ctx: TransportContext): Promise<AsyncIterable<Uint8Array>> {
    const segments = this.#model(call.modelName, call.modelVersion, 'generate_stream');
    const path = apiPath(this.address.basePath, ...segments) + queryString(ctx.queryParams);
    let response: StreamingResponse;
    try {
      response = await streamingRequest(
        this.#pool,
        { path, headers: { ...ctx.headers, ...JSON_CONTENT, accept: 'text/event-stream' }, body: call.body },
        ctx.signal,
      );
    } catch (cause) {
      const detail = cause instanceof Error ? cause.message : String(cause);
      throw new TritonConnectionError(`POST ${this.address.origin}${path} failed: ${detail}`, { cause });
    }
    if (response.status !== 200) {
      let text: string;
      try {
        text = await response.body.text();
      } catch (cause) {
        const detail = cause instanceof Error ? cause.message : String(cause);
        throw new TritonConnectionError(`POST ${this.address.origin}${path} failed: ${detail}`, { cause });
      }
      throw serverErrorFromResponse({
        status: response.status,
        headers: response.headers,
        body: Buffer.from(text, 'utf8'),
      });
    }
    const type = headerValue(response.headers, 'content-type') ?? '';
    if (!/^text\/event-stream\b/i.test(type)) {
      await response.body.text().catch(() => undefined);
      throw protocolFailure(
        new Error(`generate_stream answered Content-Type '${type}', not text/event-stream`),
      );
    }
    return response.body;
  }

  isServerLive(ctx: TransportContext): Promise<boolean> {
    return this.#status(['v2', 'health', 'live'], ctx);
  }

  isServerReady(ctx: TransportContext): Promise<boolean> {
    return this.#status(['v2', 'health', 'ready'], ctx);
  }

  isModelReady(name: string, version: string, ctx: TransportContext): Promise<boolean> {
    return this.#status(this.#model(name, version, 'ready'), ctx);
  }

  getServerMetadata(ctx: TransportContext): Promise<ServerMetadata> {
    return this.#json('GET', ['v2'], ctx);
  }

  getModelMetadata(name: string, version: string, ctx: TransportContext): Promise<ModelMetadata> {
    return this.#json('GET', this.#model(name, version), ctx);
  }

  getModelConfig(name: string, version: string, ctx: TransportContext): Promise<ModelConfig> {
    return this.#json('GET', this.#model(name, version, 'config'), ctx);
  }

  async getModelRepositoryIndex(ctx: TransportContext): Promise<RepositoryIndexEntry[]> {
    const index = await this.#json<RepositoryIndexEntry[] | Record<string, never>>(
      'POST',
      ['v2', 'repository', 'index'],
      ctx,
    );
    return Array.isArray(index) ? index : [];
  }

  async loadModel(name: string, options: LoadModelOptions, ctx: TransportContext): Promise<void> {
    const body: { parameters?: Record<string, string> } = {};
    if (options.config !== undefined || options.files !== undefined) {
      const parameters: Record<string, string> = {};
      if (options.config !== undefined) {
        parameters.config =
          typeof options.config === 'string' ? options.config : stringifyJson(options.config);
      }
      for (const [path, content] of Object.entries(options.files ?? {})) {
        const key = path.startsWith('file:') ? path : `file:${path}`;
        parameters[key] = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString(
          'base64',
        );
      }
      body.parameters = parameters;
    }
    await this.#post(['v2', 'repository', 'models', name, 'load'], ctx, body);
  }

  async unloadModel(name: string, unloadDependents: boolean, ctx: TransportContext): Promise<void> {
    await this.#post(['v2', 'repository', 'models', name, 'unload'], ctx, {
      parameters: { unload_dependents: unloadDependents },
    });
  }

  getInferenceStatistics(name: string, version: string, ctx: TransportContext): Promise<InferenceStatistics> {
    return this.#json(
      'GET',
      name === '' ? ['v2', 'models', 'stats'] : this.#model(name, version, 'stats'),
      ctx,
    );
  }

  #trace(modelName: string): string[] {
    return modelName === '' ? ['v2', 'trace', 'setting'] : ['v2', 'models', modelName, 'trace', 'setting'];
  }

  getTraceSettings(modelName: string, ctx: TransportContext): Promise<TraceSettings> {
    return this.#json('GET', this.#trace(modelName), ctx);
  }

  updateTraceSettings(
    modelName: string,
    settings: TraceSettingsUpdate,
    ctx: TransportContext,
  ): Promise<TraceSettings> {
    return this.#json('POST', this.#trace(modelName), ctx, settings);
  }

  getLogSettings(ctx: TransportContext): Promise<LogSettings> {
    return this.#json('GET', ['v2', 'logging'], ctx);
  }

  updateLogSettings(settings: LogSettings, ctx: TransportContext): Promise<LogSettings> {
    return this.#json('POST', ['v2', 'logging'], ctx, settings);
  }

  #shm(kind: 'system' | 'cuda', region: string, action: string): string[] {
    const root = `${kind}sharedmemory`;
    return region === '' ? ['v2', root, action] : ['v2', root, 'region', region, action];
  }

  async getSystemSharedMemoryStatus(
    region: string,
    ctx: TransportContext,
  ): Promise<SystemSharedMemoryRegion[]> {
    const status = await this.#json<SystemSharedMemoryRegion[]>(
      'GET',
      this.#shm('system', region, 'status'),
      ctx,
    );
    return Array.isArray(status) ? status : [];
  }

  async registerSystemSharedMemory(
    name: string,
    key: string,
    byteSize: number,
    offset: number,
    ctx: TransportContext,
  ): Promise<void> {
    await this.#post(this.#shm('system', name, 'register'), ctx, { key, offset, byte_size: byteSize });
  }

  async unregisterSystemSharedMemory(name: string, ctx: TransportContext): Promise<void> {
    await this.#post(this.#shm('system', name, 'unregister'), ctx);
  }

  async getCudaSharedMemoryStatus(region: string, ctx: TransportContext): Promise<CudaSharedMemoryRegion[]> {
    const status = await this.#json<CudaSharedMemoryRegion[]>(
      'GET',
      this.#shm('cuda', region, 'status'),
      ctx,
    );
    return Array.isArray(status) ? status : [];
  }

  async registerCudaSharedMemory(
    name: string,
    rawHandle: Uint8Array,
    deviceId: number,
    byteSize: number,
    ctx: TransportContext,
  ): Promise<void> {
    const b64 = Buffer.from(rawHandle.buffer, rawHandle.byteOffset, rawHandle.byteLength).toString('base64');
    await this.#post(this.#shm('cuda', name, 'register'), ctx, {
      raw_handle: { b64 },
      device_id: deviceId,
      byte_size: byteSize,
    });
  }

  async unregisterCudaSharedMemory(name: string, ctx: TransportContext): Promise<void> {
    await this.#post(this.#shm('cuda', name, 'unregister'), ctx);
  }

  async infer(call: InferCall, ctx: TransportContext): Promise<InferResponse> {
    let encoded:
      | { body: Uint8Array; headerLength: number | undefined }
      | { parts: readonly Uint8Array[]; byteLength: number; headerLength: number | undefined };
    try {
      const first = call.inputs[0];
      if (call.http.rawBinaryRequest === true && first?.data !== undefined) {
        encoded = encodeRawBinaryRequest(first.datatype, first.data);
      } else {
        // Compression needs the whole body in one buffer.
        const partsFrom = call.requestCompression === undefined ? PARTS_MIN_TAIL_BYTES : Infinity;
        encoded = encodeInferRequestBody(call.inputs, call.request, call.http, partsFrom);
      }
    } catch (error) {
      throw invalidArgument(error);
    }
    const headers: Record<string, string> = {};
    if (encoded.headerLength !== undefined) {
      headers[INFERENCE_HEADER_CONTENT_LENGTH] = String(encoded.headerLength);
      headers['content-type'] = 'application/octet-stream';
    } else {
      headers['content-type'] = 'application/json';
    }
    let body: Uint8Array | readonly Uint8Array[];
    if ('parts' in encoded) {
      // Written part by part from the caller's memory; the length must be given up front.
      body = encoded.parts;
      headers['content-length'] = String(encoded.byteLength);
    } else {
      body = encoded.body;
      if (call.requestCompression !== undefined) {
        body = await compressBody(encoded.body, call.requestCompression);
        headers['content-encoding'] = call.requestCompression;
      }
    }
    if (call.responseCompression !== undefined) headers['accept-encoding'] = call.responseCompression;
    const res = await this.#send(
      'POST',
      this.#inferPath(call.modelName, call.modelVersion),
      ctx,
      body,
      headers,
      INFERENCE_HEADER_CONTENT_LENGTH,
    );
    const encoding = res.header('content-encoding');
    let responseBody = res.body;
    if (encoding !== undefined) {
      try {
        responseBody = await decompressBody(res.body, encoding);
      } catch (error) {
        throw protocolFailure(error);
      }
    }
    if (res.status !== 200) {
      throw serverErrorFromResponse({ status: res.status, headers: res.headers, body: responseBody });
    }
    try {
      return inferResponseFromHttp(responseBody, res.header(INFERENCE_HEADER_CONTENT_LENGTH));
    } catch (error) {
      throw protocolFailure(error);
    }
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }
}
