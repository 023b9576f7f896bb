/**
 * Large JSON infer bodies are decoded in a worker thread, so that parsing 64 MB of JSON does not
 * stall health checks and every other request on the event loop (issue 12). Small bodies and binary
 * requests (whose JSON header is small) are decoded on the main thread, where a worker round trip
 * would cost more than it saves.
 * @packageDocumentation
 */
import type { Worker } from 'node:worker_threads';

import { ProtocolError, type ProtocolErrorCode } from '@tritonserver-ts/protocol';
import {
  decodeInferRequest,
  type DecodedInferRequest,
  type RawInferRequest,
} from '@tritonserver-ts/protocol/http';

import { startWorkerModule } from '../common/worker-module.js';
import { fromWireInput, type DecodeAnswer, type DecodeJob } from './json-decode-worker.js';

/** JSON parts larger than this are decoded off the main thread. */
export const OFF_THREAD_JSON_BYTES = 1024 * 1024;

/**
 * The worker is ended after this long with nothing to decode: its heap (the parsed JSON, and the
 * bodies it was handed, garbage it would only collect when it next allocates) goes back to the system
 * at once instead of staying with an idle thread (issue 14, item 7). The next large body starts a
 * new one.
 */
export const JSON_DECODER_IDLE_MS = 1000;

function startWorker(): Worker {
  return startWorkerModule(new URL('./json-decode-worker.js', import.meta.url), import.meta.url);
}

/**
 * Decodes infer bodies, large JSON ones in one worker thread (started on first use, unreferenced while
 * idle, ended after {@link JSON_DECODER_IDLE_MS} without work).
 */
export class OffThreadJsonDecoder {
  #worker: Worker | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #next = 0;
  readonly #pending = new Map<
    number,
    { resolve: (r: DecodedInferRequest | RawInferRequest) => void; reject: (e: Error) => void }
  >();

  /** Decodes `body` like the codec's `decodeInferRequest`, off the main thread when its JSON part is large. */
  decode(
    body: Buffer,
    header: string | readonly string[] | null,
    modelName: string,
  ): Promise<DecodedInferRequest | RawInferRequest> {
    if (!this.goesOffThread(body, header)) return this.#inline(body, header, modelName);
    return this.#offThread(body, header as string | null, modelName);
  }

  /**
   * Whether {@link decode} would decode `body` off the main thread (its JSON part is large);
   * otherwise the caller may decode it inline itself, with the codec's `decodeInferRequest`.
   */
  goesOffThread(body: Uint8Array, header: string | readonly string[] | null): boolean {
    // A repeated header is the codec's to refuse, inline.
    if (header !== null && typeof header !== 'string') return false;
    const jsonBytes = header === null ? body.byteLength : Number(header);
    return jsonBytes > OFF_THREAD_JSON_BYTES && header !== '0';
  }

  #inline(
    body: Buffer,
    header: string | readonly string[] | null,
    modelName: string,
  ): Promise<DecodedInferRequest | RawInferRequest> {
    try {
      return Promise.resolve(decodeInferRequest(body, header, { modelName, packBytes: true }));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #offThread(
    body: Buffer,
    header: string | null,
    modelName: string,
  ): Promise<DecodedInferRequest | RawInferRequest> {
    const worker = this.#ensureWorker();
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    const id = this.#next++;
    // The body is not used on this thread any more: hand its memory over (a copy when it is shared).
    const own =
      body.byteOffset === 0 &&
      body.buffer.byteLength === body.byteLength &&
      body.buffer instanceof ArrayBuffer
        ? new Uint8Array(body.buffer)
        : new Uint8Array(body);
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      if (this.#pending.size === 1) worker.ref();
      const job: DecodeJob = { id, body: own, header, modelName };
      worker.postMessage(job, [own.buffer]);
    });
  }

  /** Ends the worker (server shutdown); pending decodes fail. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.#failAll(new Error('the JSON decoder was closed'));
    await worker?.terminate();
  }

  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = startWorker();
    worker.unref();
    worker.on('message', (answer: DecodeAnswer) => {
      const pending = this.#pending.get(answer.id);
      if (pending === undefined) return;
      this.#pending.delete(answer.id);
      if (this.#pending.size === 0) {
        worker.unref();
        this.#stopWhenIdle(worker);
      }
      if (answer.ok) {
        const request = answer.request;
        pending.resolve(
          request.kind === 'json' ? { ...request, inputs: request.inputs.map(fromWireInput) } : request,
        );
      } else if (answer.error.name === 'ProtocolError' && answer.error.code !== undefined) {
        const { code, message, status } = answer.error;
        pending.reject(
          new ProtocolError(
            code as ProtocolErrorCode,
            message,
            status === undefined ? undefined : { status },
          ),
        );
      } else pending.reject(new Error(answer.error.message));
    });
    worker.on('error', (error) => this.#failAll(error));
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(new Error('the JSON decoding worker stopped'));
    });
    this.#worker = worker;
    return worker;
  }

  #stopWhenIdle(worker: Worker): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#worker !== worker || this.#pending.size > 0) return;
      this.#worker = undefined;
      // Nothing is pending on it: its exit must not fail the jobs of the worker started after it.
      worker.removeAllListeners();
      worker.on('error', () => undefined);
      void worker.terminate();
    }, JSON_DECODER_IDLE_MS).unref();
  }

  #failAll(error: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(error);
  }
}
