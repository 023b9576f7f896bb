/**
 * The one writer of a `ModelStreamInfer` call: gRPC allows one write at a time on a stream, so every
 * message (ordered answers of non-decoupled models, decoupled responses as they come) goes through
 * one queue, each write waiting for the client to take the previous one when grpc-js buffers. The
 * writer counts the bytes of the messages it holds or has handed to grpc-js and the client has not
 * taken yet ({@link StreamWriter.pendingBytes}): the stream stops reading requests while they pile up.
 * @packageDocumentation
 */
import { once } from 'node:events';

import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { ModelInferRequest, ModelStreamInferResponse } from '@tritonserver-ts/protocol/grpc';

/** Serialises the writes of one stream (see the module comment). */
export class StreamWriter {
  readonly #call: ServerDuplexStream<ModelInferRequest, ModelStreamInferResponse>;
  readonly #signal: AbortSignal;
  readonly #stopped: () => boolean;
  readonly #onProgress: (() => void) | undefined;
  #chain: Promise<void> = Promise.resolve();
  #pendingBytes = 0;

  /**
   * @param signal - aborted when the stream is gone (a pending wait for `drain` then gives up).
   * @param stopped - true once the stream has finished: later messages are dropped.
   * @param onProgress - called whenever the client has taken a message.
   */
  constructor(
    call: ServerDuplexStream<ModelInferRequest, ModelStreamInferResponse>,
    signal: AbortSignal,
    stopped: () => boolean,
    onProgress?: () => void,
  ) {
    this.#call = call;
    this.#signal = signal;
    this.#stopped = stopped;
    this.#onProgress = onProgress;
  }

  /** Bytes of the messages queued here or handed to grpc-js and not yet taken by the client (an estimate). */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /**
   * Queues `message` after every message queued before it; `after` runs once it has been handed to
   * grpc-js (or dropped because the stream is gone).
   */
  write(message: ModelStreamInferResponse, after?: () => void): void {
    const size = messageBytes(message);
    this.#pendingBytes += size;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#signal.removeEventListener('abort', release);
      this.#pendingBytes -= size;
      this.#onProgress?.();
    };
    this.then(async () => {
      if (this.#stopped()) {
        release();
        after?.();
        return;
      }
      const written = this.#call.write(message, release);
      // A stream that is gone never calls back: its bytes go with it.
      this.#signal.addEventListener('abort', release, { once: true });
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

/** Roughly the encoded size of `message`: its tensor bytes and error text, plus a small header. */
export function messageBytes(message: ModelStreamInferResponse): number {
  let bytes = 64 + message.errorMessage.length;
  const response = message.inferResponse;
  if (response === undefined) return bytes;
  for (const raw of response.rawOutputContents) bytes += raw.byteLength;
  bytes += 64 * response.outputs.length;
  return bytes;
}
