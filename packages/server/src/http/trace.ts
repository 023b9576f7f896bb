/**
 * The HTTP front end's part of a request trace (Triton's `HTTP_RECV_START`, `HTTP_RECV_END`,
 * `INFER_RESPONSE_COMPLETE`, `HTTP_SEND_START`, `HTTP_SEND_END`). As in tritonserver, an inference
 * request is sampled once its model is known; the trace is finished (and handed to the trace file)
 * when its response has been sent or its connection closed.
 * @packageDocumentation
 */
import type { ServerResponse } from 'node:http';

import type { InferenceServer } from '../core/server.js';
import type { ActiveTrace } from '../core/tracing.js';

/** One HTTP request's trace state; every method is a no-op unless the request was sampled. */
export class HttpRequestTrace {
  readonly #res: ServerResponse;
  readonly #receivedAt: bigint;
  #bodyReadAt: bigint | undefined;
  #trace: ActiveTrace | undefined;

  /** @param receivedAt - `process.hrtime.bigint()` when the request arrived. */
  constructor(res: ServerResponse, receivedAt: bigint) {
    this.#res = res;
    this.#receivedAt = receivedAt;
  }

  /** The request body has been read. */
  bodyRead(): void {
    this.#bodyReadAt = process.hrtime.bigint();
  }

  /** Samples the request for `model`; returns the trace to hand to the core, if any. */
  sample(core: InferenceServer, model: string): ActiveTrace | undefined {
    const trace = core.trace.sample(model);
    if (trace === undefined) return undefined;
    this.#trace = trace;
    trace.capture('HTTP_RECV_START', this.#receivedAt);
    trace.capture('HTTP_RECV_END', this.#bodyReadAt ?? process.hrtime.bigint());
    let sentAt: bigint | undefined;
    this.#res.once('finish', () => {
      sentAt = process.hrtime.bigint();
    });
    this.#res.once('close', () => {
      if (sentAt !== undefined) trace.capture('HTTP_SEND_END', sentAt);
      trace.finish();
    });
    return trace;
  }

  /** The response body is encoded. */
  responseReady(): void {
    this.#trace?.capture('INFER_RESPONSE_COMPLETE', process.hrtime.bigint());
  }

  /** The response is about to be written. */
  sending(): void {
    if (this.#trace === undefined) return;
    if (this.#res.destroyed) this.#trace.finish();
    else this.#trace.capture('HTTP_SEND_START', process.hrtime.bigint());
  }
}
