/**
 * The KServe v2 / Triton HTTP endpoints over the core. Each handler turns a request into a
 * {@link HttpReply}; {@link createRequestListener} adds routing, body limits, compression, errors,
 * request logging and cancellation.
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  INFERENCE_HEADER_CONTENT_LENGTH,
  compressBody,
  contentTypeFor,
  decodeInferRequest,
  encodeInferResponse,
  negotiateContentEncoding,
  outputWantsBinary,
  parseJson,
  stringifyJson,
  type DecodedInferRequest,
  type Parameters,
  type RawInferRequest,
  type ResponseOutput,
} from '@tritonserver-ts/client/protocol';

import { ServerError, invalidArg, toServerError, unsupported } from '../core/errors.js';
import type { InferenceServer } from '../core/server.js';
import type { CoreInferRequest, SharedMemoryRef } from '../core/types.js';
import {
  TooManyChunksError,
  UnsupportedEncodingError,
  checkContentEncoding,
  decompressRequestBody,
  readBody,
} from './body.js';
import {
  BODY_BUDGET_RETRY_AFTER_SECS,
  BodyBudgetExceededError,
  type MemoryBudget,
  type Reservation,
} from './memory-budget.js';
import type { OffThreadJsonDecoder } from './json-decoder.js';
import type { ResponseWriter } from './response-writer.js';
import { missingRestrictionHeader, type Restrictions } from './restricted-api.js';
import { allowedMethods, matchRoute, type Route } from './router.js';
import { HttpRequestTrace } from './trace.js';

/** What a handler answers. */
export interface HttpReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | number>>;
  /** Absent = empty body. */
  readonly body?: Uint8Array | string;
}

/** Options of the HTTP front end. */
export interface HttpFrontEndOptions {
  /** Largest accepted request body in bytes (also the largest decompressed body). */
  readonly maxInputSize: number;
  /** Request bodies (and their decompressed form) in flight across all connections; none = unbounded. */
  readonly bodyBudget?: MemoryBudget;
  /** Writes response bodies with backpressure, the send timeout and the per-connection output cap. */
  readonly responseWriter?: ResponseWriter;
  /** `--http-restricted-api`: categories that require a header. */
  readonly restrictions?: Restrictions;
  /** Decodes large JSON infer bodies off the event loop (else every body is decoded inline). */
  readonly jsonDecoder?: OffThreadJsonDecoder;
}

const JSON_TYPE = 'application/json';

function json(status: number, value: unknown): HttpReply {
  return {
    status,
    headers: { 'Content-Type': JSON_TYPE },
    body: typeof value === 'string' ? value : stringifyJson(value),
  };
}

function empty(status = 200): HttpReply {
  return { status };
}

/** `{"error": message}` with the status Triton uses for the error kind. */
export function errorReply(error: unknown): HttpReply {
  const e = toServerError(error);
  const headers: Record<string, string> = { 'Content-Type': JSON_TYPE };
  let status = e.httpStatus;
  if (e instanceof UnsupportedEncodingError) {
    status = 415;
    headers['Accept-Encoding'] = 'gzip, deflate';
  }
  if (e instanceof BodyBudgetExceededError) headers['Retry-After'] = String(BODY_BUDGET_RETRY_AFTER_SECS);
  // As Triton: keep-alive is cleared and the rest of the body is not read.
  if (e instanceof TooManyChunksError) headers.Connection = 'close';
  return { status, headers, body: JSON.stringify({ error: e.message }) };
}

/**
 * Parses an optional JSON body whose members are looked up (empty body → `{}`). As TritonJson's
 * `Find` on a value that is not an object, any other JSON value has no members: `{}`.
 */
function parseObjectBody(body: Uint8Array, what: string): Record<string, unknown> {
  if (body.byteLength === 0) return {};
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = parseJson(text, what);
  } catch (error) {
    throw toServerError(error);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return value as Record<string, unknown>;
}

function parseAnyBody(body: Uint8Array, what: string): unknown {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  try {
    return parseJson(text, what);
  } catch (error) {
    throw toServerError(error);
  }
}

/** The codec's shared-memory reference for the core (uint64 values stay exact for its checks). */
function shmRef(
  ref: { region: string; byteSize: number | bigint; offset?: number | bigint } | undefined,
): SharedMemoryRef | undefined {
  return ref === undefined
    ? undefined
    : { region: ref.region, byteSize: ref.byteSize, offset: ref.offset ?? 0 };
}

/** Maps the codec's decoded request onto the core's request. */
function toCoreRequest(
  route: Extract<Route, { kind: 'model' }>,
  decoded: DecodedInferRequest | RawInferRequest,
  signal: AbortSignal,
  receivedAt: bigint,
): CoreInferRequest {
  const base = {
    modelName: route.name,
    ...(route.version !== undefined ? { modelVersion: route.version } : {}),
    signal,
    receivedAt,
  };
  if (decoded.kind === 'raw') return { ...base, inputs: [], rawInput: decoded.data };
  return {
    ...base,
    ...(decoded.id !== undefined ? { id: decoded.id } : {}),
    parameters: decoded.parameters,
    inputs: decoded.inputs.map((i) => {
      const shm = shmRef(i.sharedMemory);
      return {
        name: i.name,
        datatype: i.datatype,
        shape: i.shape,
        ...(i.data !== undefined ? { data: i.data } : {}),
        ...(shm !== undefined ? { sharedMemory: shm } : {}),
        parameters: i.parameters,
      };
    }),
    ...(decoded.outputs !== undefined
      ? {
          outputs: decoded.outputs.map((o) => {
            const shm = shmRef(o.sharedMemory);
            return {
              name: o.name,
              ...(o.classCount !== undefined ? { classification: o.classCount } : {}),
              ...(shm !== undefined ? { sharedMemory: shm } : {}),
              parameters: o.parameters,
            };
          }),
        }
      : {}),
  };
}

async function handleInfer(
  core: InferenceServer,
  route: Extract<Route, { kind: 'model' }>,
  req: IncomingMessage,
  raw: Buffer,
  options: HttpFrontEndOptions,
  signal: AbortSignal,
  receivedAt: bigint,
  reservation?: Reservation,
  httpTrace?: HttpRequestTrace,
): Promise<HttpReply> {
  // As in Triton, the model is looked up before the body is examined; then the request is sampled.
  core.models.resolve(route.name, route.version);
  const trace = httpTrace?.sample(core, route.name);
  const encoding = checkContentEncoding(req.headers['content-encoding']);
  const body = await decompressRequestBody(raw, encoding, options.maxInputSize, reservation);
  let decoded: DecodedInferRequest | RawInferRequest;
  try {
    const header = req.headers[INFERENCE_HEADER_CONTENT_LENGTH] ?? null;
    decoded =
      options.jsonDecoder !== undefined
        ? await options.jsonDecoder.decode(body, header, route.name)
        : decodeInferRequest(body, header, { modelName: route.name });
  } catch (error) {
    throw toServerError(error);
  }
  const response = await core.infer(toCoreRequest(route, decoded, signal, receivedAt), {
    refuseDecoupled: true,
    ...(trace !== undefined ? { trace } : {}),
  });
  const outputs: ResponseOutput[] = response.outputs.map((o) => {
    if (o.sharedMemory !== undefined) {
      const parameters: Parameters = {
        shared_memory_region: o.sharedMemory.region,
        shared_memory_byte_size: o.sharedMemory.byteSize,
      };
      if (BigInt(o.sharedMemory.offset) !== 0n) parameters.shared_memory_offset = o.sharedMemory.offset;
      return { tensor: o.tensor, binary: false, omitData: true, parameters };
    }
    return { tensor: o.tensor, binary: outputWantsBinary(decoded, o.name) };
  });
  let encoded;
  try {
    encoded = encodeInferResponse({
      modelName: response.modelName,
      modelVersion: response.modelVersion,
      ...(response.id !== undefined ? { id: response.id } : {}),
      outputs,
    });
  } catch (error) {
    throw toServerError(error);
  }
  const headers: Record<string, string | number> = { 'Content-Type': contentTypeFor(encoded.headerLength) };
  if (encoded.headerLength !== undefined) headers['Inference-Header-Content-Length'] = encoded.headerLength;
  let out = encoded.body;
  const coding = negotiateContentEncoding(req.headers['accept-encoding']);
  if (coding !== 'identity') {
    out = await compressBody(out, coding);
    headers['Content-Encoding'] = coding;
  }
  httpTrace?.responseReady();
  return { status: 200, headers, body: out };
}

function decodeFiles(parameters: Record<string, unknown>): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  for (const [key, value] of Object.entries(parameters)) {
    if (!key.startsWith('file:')) continue;
    if (typeof value !== 'string') throw invalidArg(`file content for '${key}' must be a base64 string`);
    if (!/^[A-Za-z0-9+/\r\n]*={0,2}\s*$/.test(value)) {
      throw invalidArg(`failed to decode base64 content of '${key}'`);
    }
    files.set(key.slice('file:'.length), Buffer.from(value, 'base64'));
  }
  return files;
}

async function handleRoute(
  core: InferenceServer,
  route: Route,
  req: IncomingMessage,
  body: Buffer,
  options: HttpFrontEndOptions,
  signal: AbortSignal,
  receivedAt: bigint,
  reservation?: Reservation,
  httpTrace?: HttpRequestTrace,
): Promise<HttpReply> {
  switch (route.kind) {
    case 'server-metadata':
      return json(200, core.serverMetadata());
    case 'health': {
      const ok = route.check === 'live' ? core.isLive() : core.isReady();
      return empty(ok ? 200 : 400);
    }
    case 'model-stats-all':
      return json(200, core.statisticsJson());
    case 'logging':
      return json(
        200,
        req.method === 'POST' ? core.logSettings(parseAnyBody(body, 'log settings')) : core.logSettings(),
      );
    case 'trace':
      return json(
        200,
        req.method === 'POST'
          ? core.traceSettings(undefined, parseAnyBody(body, 'trace settings'))
          : core.traceSettings(),
      );
    case 'model':
      switch (route.action) {
        case 'metadata':
          return json(200, core.modelMetadata(route.name, route.version));
        case 'ready':
          return core.isModelReady(route.name, route.version)
            ? empty(200)
            : json(400, { error: 'Model version not ready' });
        case 'config':
          return json(200, core.modelConfig(route.name, route.version));
        case 'stats':
          return json(200, core.statisticsJson(route.name, route.version));
        case 'trace':
          return json(
            200,
            req.method === 'POST'
              ? core.traceSettings(route.name, parseAnyBody(body, 'trace settings'))
              : core.traceSettings(route.name),
          );
        case 'infer':
          return handleInfer(core, route, req, body, options, signal, receivedAt, reservation, httpTrace);
        case 'generate':
        case 'generate_stream':
          core.models.resolve(route.name, route.version);
          throw unsupported(`the ${route.action} extension is not supported by tritonserver-ts; use /infer`);
      }
      break;
    case 'repository-index': {
      const b = parseObjectBody(body, 'repository index request');
      // Triton's TritonJson wording (400).
      if (b.ready !== undefined && typeof b.ready !== 'boolean')
        throw invalidArg('attempt to access JSON non-boolean as boolean');
      const index = await core.repositoryIndex(b.ready === true);
      return json(200, index);
    }
    case 'repository-model': {
      const b = parseObjectBody(body, `${route.action} request`);
      const parameters = b.parameters ?? {};
      if (route.action === 'unload') {
        const params = (typeof parameters === 'object' && parameters !== null ? parameters : {}) as Record<
          string,
          unknown
        >;
        const dependents = params.unload_dependents;
        if (dependents !== undefined && typeof dependents !== 'boolean') {
          throw invalidArg("'unload_dependents' must be a boolean");
        }
        await core.unloadModel(route.name, { unloadDependents: dependents === true });
        return empty(200);
      }
      // Triton's load: every member of 'parameters' is read as a string (TritonJson's wording).
      if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) {
        throw invalidArg('attempt to get members for non-object');
      }
      const params = parameters as Record<string, unknown>;
      for (const value of Object.values(params)) {
        if (typeof value !== 'string') throw invalidArg('attempt to access JSON non-string as string');
      }
      const config = params.config as string | undefined;
      const files = decodeFiles(params);
      await core.loadModel(route.name, {
        ...(config !== undefined ? { config } : {}),
        ...(files.size > 0 ? { files } : {}),
      });
      return empty(200);
    }
    case 'shared-memory': {
      const manager = route.memory === 'system' ? core.systemSharedMemory : core.cudaSharedMemory;
      switch (route.action) {
        case 'status':
          return json(200, manager.status(route.region));
        case 'register':
          if (route.region === undefined) {
            throw invalidArg(
              `'region name' is necessary to register ${route.memory === 'system' ? 'system' : 'cuda'} shared memory region`,
            );
          }
          manager.register(route.region, parseObjectBody(body, 'shared memory register request'));
          return empty(200);
        case 'unregister':
          manager.unregister(route.region);
          return empty(200);
      }
    }
  }
  throw new ServerError('INTERNAL', 'unhandled route');
}

/** Where the binary tail of an uncompressed infer body starts (to align it), if known. */
function alignmentOf(req: IncomingMessage): number | undefined {
  if (req.headers['content-encoding'] !== undefined) return undefined;
  const value = req.headers[INFERENCE_HEADER_CONTENT_LENGTH];
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) return undefined;
  return Number(value);
}

/** Counts requests in flight so shutdown can wait for them. */
export interface InFlightTracker {
  readonly count: number;
  /** Resolves when no request is in flight. */
  idle(): Promise<void>;
}

/** Creates the `request` listener of the HTTP server. */
export function createRequestListener(
  core: InferenceServer,
  options: HttpFrontEndOptions,
): { listener: (req: IncomingMessage, res: ServerResponse) => void; inFlight: InFlightTracker } {
  let count = 0;
  let waiters: (() => void)[] = [];
  const inFlight: InFlightTracker = {
    get count() {
      return count;
    },
    idle() {
      return count === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };
  const done = (): void => {
    count--;
    if (count === 0) {
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    }
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const receivedAt = process.hrtime.bigint();
    const httpTrace = new HttpRequestTrace(res, receivedAt);
    count++;
    const controller = new AbortController();
    const reservation = options.bodyBudget?.open();
    // The reservation is returned when the handler settles (below), not on close: a request whose
    // client is gone still holds its body until its inference ends.
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const path = (req.url ?? '/').split('?')[0] as string;
    let bytesIn = 0;
    void (async (): Promise<HttpReply> => {
      const route = matchRoute(path);
      if (route === undefined) return json(404, { error: 'Not Found' });
      // As Triton's handlers: the restriction is checked before the method.
      if (options.restrictions !== undefined) {
        const missing = missingRestrictionHeader(options.restrictions, route, (n) => req.headers[n]);
        if (missing !== undefined)
          return json(403, { error: `This API is restricted, expecting header '${missing}'` });
      }
      if (!allowedMethods(route).includes(req.method ?? ''))
        return json(405, { error: 'Method Not Allowed' });
      try {
        const body =
          req.method === 'POST'
            ? await readBody(req, options.maxInputSize, alignmentOf(req), reservation)
            : Buffer.alloc(0);
        bytesIn = body.byteLength;
        httpTrace.bodyRead();
        return await handleRoute(
          core,
          route,
          req,
          body,
          options,
          controller.signal,
          receivedAt,
          reservation,
          httpTrace,
        );
      } catch (error) {
        return errorReply(error);
      }
    })()
      .then((reply) => {
        // The body has been turned into the reply: its bytes leave the in-flight budget.
        reservation?.release();
        httpTrace.sending();
        send(req, res, reply, options);
        if (core.logger.isVerbose(1)) {
          core.logger.verbose(
            1,
            JSON.stringify({
              method: req.method,
              path,
              status: reply.status,
              ms: Number(process.hrtime.bigint() - receivedAt) / 1e6,
              bytes_in: bytesIn,
              bytes_out: reply.body === undefined ? 0 : Buffer.byteLength(reply.body),
            }),
          );
        }
      })
      .catch((error: unknown) => {
        core.logger.error(`HTTP handler failed: ${String(error)}`);
        if (!res.headersSent) send(req, res, errorReply(error), options);
        else res.destroy();
      })
      .finally(() => {
        reservation?.release();
        done();
      });
  };
  return { listener, inFlight };
}

/** How much of an unread over-limit body is read and discarded before the connection is closed. */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
const DRAIN_MAX_MS = 10_000;

function send(
  req: IncomingMessage,
  res: ServerResponse,
  reply: HttpReply,
  options: HttpFrontEndOptions,
): void {
  if (res.destroyed || res.writableEnded) return;
  const body = reply.body ?? '';
  const headers: Record<string, string | number> = {
    ...reply.headers,
    'Content-Length': Buffer.byteLength(body),
  };
  res.writeHead(reply.status, headers);
  if (options.responseWriter !== undefined) options.responseWriter.write(req.socket, res, body);
  else res.end(body);
  if (!req.complete) {
    if (headers.Connection === 'close') res.once('finish', () => req.destroy());
    else drainAfterAnswer(req, res);
  }
}

/**
 * A body we refused to read (over a limit) arrives after our answer: the answer goes first, then
 * the rest of the body is read and discarded, so a client that uploads before it reads still gets
 * the answer instead of a reset. Past DRAIN_MAX_BYTES or DRAIN_MAX_MS the connection is closed.
 */
function drainAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  let drained = 0;
  const stop = (): void => {
    clearTimeout(timer);
    req.off('data', onData);
  };
  const onData = (chunk: Buffer): void => {
    drained += chunk.byteLength;
    if (drained > DRAIN_MAX_BYTES) {
      stop();
      socket.destroy();
    }
  };
  const timer = setTimeout(() => {
    stop();
    socket.destroy();
  }, DRAIN_MAX_MS).unref();
  req.on('data', onData);
  req.once('end', stop);
  res.once('close', () => {
    if (!req.complete) stop();
  });
  req.resume();
}
