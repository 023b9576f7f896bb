/**
 * The one writer of a `ModelStreamInfer` call: gRPC allows one write at a time on a stream, so every
 * message (ordered answers of non-decoupled models, decoupled responses as they come) goes through
 * one queue, each write waiting for the client to take the previous one when grpc-js buffers.
 * @packageDocumentation
 */
import { once } from 'node:events';

import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { ModelInferRequest, ModelStreamInferResponse } from '@tritonserver-ts/client/protocol/grpc';

/** Serialises the writes of one stream (see the module comment). */
export class StreamWriter {
  readonly #call: ServerDuplexStream<ModelInferRequest, ModelStreamInferResponse>;
  readonly #signal: AbortSignal;
  readonly #stopped: () => boolean;
  #chain: Promise<void> = Promise.resolve();

  /**
   * @param signal - aborted when the stream is gone (a pending wait for `drain` then gives up).
   * @param stopped - true once the stream has finished: later messages are dropped.
   */
  constructor(
    call: ServerDuplexStream<ModelInferRequest, ModelStreamInferResponse>,
    signal: AbortSignal,
    stopped: () => boolean,
  ) {
    this.#call = call;
    this.#signal = signal;
    this.#stopped = stopped;
  }

  /**
   * Queues `message` after every message queued before it; `after` runs once it has been handed to
   * grpc-js (or dropped because the stream is gone).
   */
  write(message: ModelStreamInferResponse, after?: () => void): void {
    this.then(async () => {
      if (this.#stopped()) {
        after?.();
        return;
      }
      const written = this.#call.write(message);
      after?.();
      // Backpressure: the next message waits until the client has taken this one.
      if (!written) await once(this.#call, 'drain', { signal: this.#signal }).catch(() => undefined);
    });
  }

  /** Runs `task` after every message queued so far has been written (or dropped). */
  then(task: () => void | Promise<void>): void {
    this.#chain = this.#chain.then(task).catch(() => undefined);
  }

  /** Settles once every message queued so far has been written (or dropped). */
  idle(): Promise<void> {
    return this.#chain;
  }
}
