/**
 * The generate extension: `POST v2/models/{m}[/versions/{v}]/generate` and `…/generate_stream`, as
 * tritonserver's `HandleGenerate` and `GenerateRequestClass` answer them. The body is mapped onto
 * the model metadata's inputs by the shared codec (`@tritonserver-ts/protocol/http` generate.ts);
 * the request runs through the core like any other inference (statistics, traces, metrics), on a
 * decoupled model too. Each response the model sends is one encoded event:
 * - `generate_stream`: `Content-Type: text/event-stream; charset=utf-8`, one `data: <json>\n\n` per
 *   response as soon as it is ready, an error response as `data: {"error":"…"}\n\n`; the status is
 *   the first response's (200, or its error's status), sent with it;
 * - `generate`: `application/json`, the one response; a model that sends any other number of
 *   responses gets tritonserver's error ("generate expects model to produce exactly 1 response, …")
 *   under the first response's status, as tritonserver (which has sent that status by then) does.
 * A request refused before the core accepted it (unknown model, a body that cannot be mapped, the
 * model's checks) is answered as plain JSON with its status. A client that goes away cancels the
 * request (the core's signal; a Python model sees `request.is_cancelled()`).
 * @packageDocumentation
 */
import {
  GENERATE_STREAM_CONTENT_TYPE,
  decodeGenerateRequest,
  encodeGenerateError,
  encodeGenerateResponse,
  frameServerSentEvent,
  parseGenerateRequestBody,
} from '@tritonserver-ts/protocol/http';

import { capErrorMessage } from '../common/echo.js';
import type { ServerError } from '../common/errors.js';
import { invalidArg, toServerError } from '../common/errors.js';
import type { CoreInferRequest, CoreStreamResponse, InputBudget } from '../common/types.js';
import type { InferenceServer } from '../core/server.js';
import type { HttpFrontEndOptions, HttpReply, StreamedBody } from './reply.js';
import type { ResponseStream } from './response-writer.js';
import type { Route } from './router.js';
import { httpStatusForKind } from './status.js';
import type { HttpRequestTrace } from './trace.js';

/** tritonserver's answer to `generate` on a model that sent other than one response. */
export const GENERATE_SINGLE_RESPONSE_MESSAGE =
  'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses';

/** What {@link handleGenerate} needs of the routed request. */
export interface GenerateRequestContext {
  readonly body: Uint8Array;
  readonly contentEncoding: string | undefined;
  readonly options: HttpFrontEndOptions;
  readonly signal: AbortSignal;
  readonly inputBudget: InputBudget;
  readonly httpTrace?: HttpRequestTrace;
}

/**
 * Triton reads a generate body only without a content coding (`GetRequestCompressionType` must be
 * IDENTITY: absent or `identity`).
 */
function checkIdentityEncoding(value: string | undefined): void {
  if (value === undefined || value.trim().toLowerCase() === 'identity') return;
  throw invalidArg("Unsupported content-encoding, only 'identity' is supported.");
}

/** One response of the request as its event's JSON, with the status it would give as the first. */
function eventOf(r: CoreStreamResponse): { json: string; status: number } | undefined {
  if (r.error !== undefined) {
    return {
      json: encodeGenerateError(capErrorMessage(r.error.message)),
      status: httpStatusForKind(r.error.kind),
    };
  }
  if (r.response === undefined) return undefined;
  try {
    return { json: encodeGenerateResponse(r.response), status: 200 };
  } catch (error) {
    const e = toServerError(error);
    return { json: encodeGenerateError(capErrorMessage(e.message)), status: httpStatusForKind(e.kind) };
  }
}

/**
 * The events of one generate request: collected until a response stream is attached, then pushed
 * to it as they come. The first callback of the core (a response, an error, or a final flag alone)
 * fixes the status.
 */
class GenerateEvents implements StreamedBody {
  readonly #streaming: boolean;
  readonly #trace: HttpRequestTrace | undefined;
  #pending: string[] = [];
  #responses = 0;
  #out: ResponseStream | undefined;
  #complete = false;
  #onComplete: (() => void) | undefined;
  #onFirst: ((status: number) => void) | undefined;
  /** The status of the first callback, once there was one. */
  status: number | undefined;

  constructor(streaming: boolean, trace: HttpRequestTrace | undefined) {
    this.#streaming = streaming;
    this.#trace = trace;
  }

  /** Resolves with the status once the core called back for the first time. */
  first(): Promise<number> {
    if (this.status !== undefined) return Promise.resolve(this.status);
    return new Promise((resolve) => {
      this.#onFirst = resolve;
    });
  }

  /** The core's callback for each response of the request. */
  readonly onResponse = (r: CoreStreamResponse): void => {
    if (this.#complete) return;
    const event = eventOf(r);
    if (event !== undefined) {
      this.#responses += 1;
      this.#trace?.responseReady();
      const chunk = this.#streaming ? frameServerSentEvent(event.json) : event.json;
      if (this.#out !== undefined && this.#streaming) {
        // Gone or cut: the connection's close cancels the request; later events are dropped.
        this.#out.push(chunk);
      } else this.#pending.push(chunk);
    }
    if (this.status === undefined) {
      this.status = event?.status ?? 200;
      this.#onFirst?.(this.status);
    }
    if (r.final) this.#finish();
  };

  /** Ends the events (the core's request is over). */
  finish(): void {
    if (this.status === undefined) {
      this.status = 200;
      this.#onFirst?.(this.status);
    }
    this.#finish();
  }

  #finish(): void {
    if (this.#complete) return;
    this.#complete = true;
    if (!this.#streaming) {
      // tritonserver's non-streaming answer: the one response, else its error.
      if (this.#responses !== 1) this.#pending = [encodeGenerateError(GENERATE_SINGLE_RESPONSE_MESSAGE)];
      if (this.#out !== undefined) this.#flush(this.#out);
    }
    this.#onComplete?.();
  }

  #flush(out: ResponseStream): void {
    for (const chunk of this.#pending) out.push(chunk);
    this.#pending = [];
  }

  pipe(out: ResponseStream): Promise<void> {
    this.#out = out;
    if (this.#streaming || this.#complete) this.#flush(out);
    if (this.#complete) return Promise.resolve();
    return new Promise((resolve) => {
      this.#onComplete = resolve;
      // A connection that closes ends the body at once; the request is cancelled through its signal.
      out.onClose(resolve);
    });
  }
}

/**
 * `POST v2/models/{m}[/versions/{v}]/generate[_stream]`: tritonserver's order — the model's
 * metadata (unknown model or version), the content coding, the JSON body and its mapping, then the
 * core's checks; the reply is returned once the core sent the first response (its status fixes the
 * reply's), and its body is written as the responses come.
 * @throws ServerError for a request refused before the core accepted it (plain JSON reply).
 */
export async function handleGenerate(
  core: InferenceServer,
  route: Extract<Route, { kind: 'model' }>,
  r: GenerateRequestContext,
  streaming: boolean,
): Promise<HttpReply> {
  const metadata = core.modelMetadata(route.name, route.version);
  const model = core.models.resolve(route.name, route.version);
  const trace = r.httpTrace?.sample(core, route.name);
  checkIdentityEncoding(r.contentEncoding);
  let decoded;
  try {
    decoded = decodeGenerateRequest(parseGenerateRequestBody(r.body), metadata.inputs, {
      maxInputSize: r.options.maxInputSize,
    });
  } catch (error) {
    throw toServerError(error);
  }
  const events = new GenerateEvents(streaming, r.httpTrace);
  const request: CoreInferRequest = {
    modelName: route.name,
    ...(route.version !== undefined ? { modelVersion: route.version } : {}),
    ...(decoded.id !== undefined ? { id: decoded.id } : {}),
    inputs: decoded.inputs,
    parameters: decoded.parameters,
    signal: r.signal,
    inputBudget: r.inputBudget,
    onResponse: events.onResponse,
  };
  let accepted = false;
  let refused: ServerError | undefined;
  const run = core
    .infer(request, {
      model,
      plainParameters: true,
      ...(trace !== undefined ? { trace } : {}),
      onAccepted: () => {
        accepted = true;
      },
    })
    .then(
      () => events.finish(),
      (error: unknown) => {
        const e = toServerError(error);
        // Refused before the core took the request: a plain JSON error, not an event.
        if (!accepted && events.status === undefined) refused = e;
        else events.onResponse({ error: e, final: true });
        events.finish();
      },
    );
  const status = await Promise.race([events.first(), run.then(() => events.status ?? 200)]);
  if (refused !== undefined) throw refused;
  return {
    status,
    headers: { 'Content-Type': streaming ? GENERATE_STREAM_CONTENT_TYPE : 'application/json' },
    stream: events,
  };
}
