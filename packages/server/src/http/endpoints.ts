/**
 * The KServe v2 / Triton HTTP endpoints over the core: each route kind is turned into one core call
 * and its result into an {@link HttpReply}. Errors are thrown (the listener turns them into replies).
 * @packageDocumentation
 */
import type { IncomingMessage } from 'node:http';

import { parseJson } from '@tritonserver-ts/protocol/http';

import { echo } from '../common/echo.js';
import { ServerError, invalidArg, toServerError } from '../common/errors.js';
import { forwardHeaders } from '../core/header-forward.js';
import type { InferenceServer } from '../core/server.js';
import { modelConfigToJson } from '../repository/index.js';
import type { InputBudget } from '../common/types.js';
import { handleGenerate } from './generate.js';
import { decodeHttpInferRequest, toCoreRequest, toInferReply } from './infer-adapter.js';
import type { Reservation } from './memory-budget.js';
import { empty, json, type HttpFrontEndOptions, type HttpReply } from './reply.js';
import type { Route } from './router.js';
import { cudaShmRegisterFromJson, systemShmRegisterFromJson } from './shared-memory-json.js';
import { logUpdateFromJson, traceUpdateFromJson } from './settings-json.js';
import { renderStatisticsJson } from './statistics-json.js';
import type { HttpRequestTrace } from './trace.js';

/** One routed request as the endpoints see it: its body has been read in full. */
export interface EndpointRequest {
  readonly req: IncomingMessage;
  readonly body: Buffer;
  readonly options: HttpFrontEndOptions;
  /** Aborted when the client goes away before the reply is written. */
  readonly signal: AbortSignal;
  /** The request's share of the in-flight body budget (decompression draws from it too). */
  readonly reservation?: Reservation;
  readonly httpTrace?: HttpRequestTrace;
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

function decodeFiles(parameters: Record<string, unknown>): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  for (const [key, value] of Object.entries(parameters)) {
    if (!key.startsWith('file:')) continue;
    if (typeof value !== 'string')
      throw invalidArg(`file content for '${echo(key)}' must be a base64 string`);
    if (!/^[A-Za-z0-9+/\r\n]*={0,2}\s*$/.test(value)) {
      throw invalidArg(`failed to decode base64 content of '${echo(key)}'`);
    }
    files.set(key.slice('file:'.length), Buffer.from(value, 'base64'));
  }
  return files;
}

/**
 * `POST v2[/models/<name>]/trace/setting`: the JSON is parsed, the model checked, then the body read
 * as an update (Triton's order).
 */
function updateTraceSettings(core: InferenceServer, model: string | undefined, body: Buffer): unknown {
  const value = parseAnyBody(body, 'trace settings');
  if (model !== undefined) core.traceSettings(model);
  return core.traceSettings(model, traceUpdateFromJson(value));
}

/** `POST v2/logging`: the settings read before a refused one are applied, then the refusal answered. */
function updateLogSettings(core: InferenceServer, body: Buffer): unknown {
  const { update, error } = logUpdateFromJson(parseAnyBody(body, 'log settings'));
  const settings = core.logSettings(update);
  if (error !== undefined) throw error;
  return settings;
}

/**
 * The input bound of an HTTP infer request: with its body, its shared-memory inputs and the
 * element-by-element conversion of its BYTES inputs (`conversion-budget.ts`) take at most
 * `--http-max-input-size`; their bytes join the body's reservation in the in-flight budget.
 */
function httpInputBudget(r: EndpointRequest): InputBudget {
  const reservation = r.reservation;
  return {
    heldBytes: r.body.byteLength,
    maxBytes: r.options.maxInputSize,
    maxBytesFlag: '--http-max-input-size',
    acquire: (bytes) => {
      if (reservation === undefined) return () => undefined;
      reservation.grow(bytes);
      return () => reservation.shrink(bytes);
    },
  };
}

/** Header (name as sent, value) pairs of `rawHeaders`. */
function* rawHeaderPairs(raw: readonly string[]): Generator<[string, string]> {
  for (let i = 0; i + 1 < raw.length; i += 2) yield [raw[i] as string, raw[i + 1] as string];
}

/** `POST v2/models/<name>[/versions/<v>]/infer`. */
async function handleInfer(
  core: InferenceServer,
  route: Extract<Route, { kind: 'model' }>,
  r: EndpointRequest,
): Promise<HttpReply> {
  // As in Triton, the model is looked up (once: the core runs the request on it) before the body
  // is examined; then the request is sampled.
  const model = core.models.resolve(route.name, route.version);
  const trace = r.httpTrace?.sample(core, route.name);
  const decoded = await decodeHttpInferRequest(route.name, r.req.headers, r.body, r.options, r.reservation);
  // Shared-memory inputs and BYTES converted element by element count against the body's limits.
  let request = { ...toCoreRequest(route, decoded, model, r.signal), inputBudget: httpInputBudget(r) };
  const forwarded = forwardHeaders(rawHeaderPairs(r.req.rawHeaders), r.options.headerForwardPattern);
  if (forwarded !== undefined) request = { ...request, parameters: { ...request.parameters, ...forwarded } };
  const response = await core.infer(request, {
    model,
    refuseDecoupled: true,
    ...(trace !== undefined ? { trace } : {}),
  });
  const reply = await toInferReply(response, decoded, r.req.headers['accept-encoding']);
  r.httpTrace?.responseReady();
  return reply;
}

/** `POST v2/repository/models/<name>/load|unload`. */
async function handleRepositoryModel(
  core: InferenceServer,
  route: Extract<Route, { kind: 'repository-model' }>,
  body: Buffer,
): Promise<HttpReply> {
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

/** `v2/systemsharedmemory/...` and `v2/cudasharedmemory/...`. */
function handleSharedMemory(
  core: InferenceServer,
  route: Extract<Route, { kind: 'shared-memory' }>,
  body: Buffer,
): HttpReply {
  const manager = route.memory === 'system' ? core.systemSharedMemory : core.cudaSharedMemory;
  switch (route.action) {
    case 'status':
      return json(200, manager.status(route.region));
    case 'register': {
      if (route.region === undefined) {
        throw invalidArg(
          `'region name' is necessary to register ${route.memory === 'system' ? 'system' : 'cuda'} shared memory region`,
        );
      }
      const fields = parseObjectBody(body, 'shared memory register request');
      // Refused with client shared memory disabled before any field is read.
      manager.assertClientShmAllowed();
      if (route.memory === 'system') {
        core.systemSharedMemory.register(systemShmRegisterFromJson(route.region, fields));
      } else {
        core.cudaSharedMemory.register(cudaShmRegisterFromJson(route.region, fields));
      }
      return empty(200);
    }
    case 'unregister':
      manager.unregister(route.region);
      return empty(200);
  }
}

/**
 * Answers one routed request (route and method already checked by the listener).
 * @throws ServerError (or an error {@link toServerError} maps) for every refused request.
 */
export async function handleRoute(
  core: InferenceServer,
  route: Route,
  r: EndpointRequest,
): Promise<HttpReply> {
  const { req, body } = r;
  switch (route.kind) {
    case 'server-metadata':
      return json(200, core.serverMetadata());
    case 'health': {
      const ok = route.check === 'live' ? core.isLive() : core.isReady();
      return empty(ok ? 200 : 400);
    }
    case 'model-stats-all':
      return json(200, renderStatisticsJson(core.modelStatistics()));
    case 'logging':
      return json(200, req.method === 'POST' ? updateLogSettings(core, body) : core.logSettings());
    case 'trace':
      return json(
        200,
        req.method === 'POST' ? updateTraceSettings(core, undefined, body) : core.traceSettings(),
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
          return json(200, modelConfigToJson(core.modelConfig(route.name, route.version)));
        case 'stats':
          return json(200, renderStatisticsJson(core.modelStatistics(route.name, route.version)));
        case 'trace':
          return json(
            200,
            req.method === 'POST'
              ? updateTraceSettings(core, route.name, body)
              : core.traceSettings(route.name),
          );
        case 'infer':
          return handleInfer(core, route, r);
        case 'generate':
        case 'generate_stream':
          return handleGenerate(
            core,
            route,
            {
              body: r.body,
              contentEncoding: req.headers['content-encoding'],
              options: r.options,
              signal: r.signal,
              inputBudget: httpInputBudget(r),
              ...(r.httpTrace !== undefined ? { httpTrace: r.httpTrace } : {}),
            },
            route.action === 'generate_stream',
          );
      }
      break;
    case 'repository-index': {
      const b = parseObjectBody(body, 'repository index request');
      // Triton 2.73's wording (400).
      if (b.ready !== undefined && typeof b.ready !== 'boolean')
        throw invalidArg("Invalid value for 'ready': expected a boolean");
      const index = await core.repositoryIndex(b.ready === true);
      return json(200, index);
    }
    case 'repository-model':
      return handleRepositoryModel(core, route, body);
    case 'shared-memory':
      return handleSharedMemory(core, route, body);
  }
  throw new ServerError('INTERNAL', 'unhandled route');
}
