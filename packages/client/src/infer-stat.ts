/**
 * Client-side inference statistics: Triton's `ClientInferStat` (the C++ client library's
 * `InferStat`), which perf_analyzer reads for its "Client Send" and "Client Recv" figures.
 * @packageDocumentation
 */

/**
 * Cumulative inference statistics of one `TritonClient` since it was created (Triton's
 * `InferStat`). Every figure only grows; diff two snapshots for the figures of a time window, e.g.
 * the average send time per request is `Δ cumulativeSendTimeNs / Δ completedRequestCount`.
 *
 * Times are in nanoseconds from a monotonic clock (`process.hrtime.bigint()`):
 * - total: from the start of `infer()` until its result is built;
 * - send: from the start of `infer()` until the encoded request has been handed to the wire
 *   library (HTTP: to undici, which writes it to an idle keep-alive connection at once; gRPC: to
 *   grpc-js, which serializes the `ModelInferRequest` then) — so it includes encoding and
 *   compression, as Triton's gRPC client's send time is "the time for marshaling infer request";
 * - receive: from the first sign of the response (HTTP: its status line and headers; gRPC: its
 *   response metadata) until it is read, decoded and its result built.
 *
 * Only successful inferences are counted (failed ones add nothing to any figure). Triton's C++
 * library also counts a request the server answered with an error when its timers are complete;
 * we leave those out so the averages describe successful requests. Inferences sent on a
 * `GrpcInferStream` (`ModelStreamInfer`) are not counted: the stream is a transport object of its
 * own, outside the client.
 */
export interface InferStat {
  /** How many inferences completed successfully. */
  readonly completedRequestCount: number;
  /** The sum of their whole durations, from the start of the request until the result is built. */
  readonly cumulativeTotalRequestTimeNs: bigint;
  /** The sum of their send times: from the start until the encoded request was handed over. */
  readonly cumulativeSendTimeNs: bigint;
  /** The sum of their receive times: from the first sign of the response until it is decoded. */
  readonly cumulativeReceiveTimeNs: bigint;
}

/**
 * The timestamps of one inference attempt (`process.hrtime.bigint()` values, `0n` when not yet
 * reached), handed to the transport in `TransportContext.timer`. `TritonClient.infer` sets
 * `sendStart`; the transport stamps `sendEnd` when the encoded request has been handed to its wire
 * library and `receiveStart` when the response starts to arrive. A transport that stamps nothing
 * still has its inferences counted, with send and receive times of 0.
 */
export interface InferTimer {
  /** When the attempt started (the start of `infer()`, or of a retry). */
  sendStart: bigint;
  /** When the encoded request was handed to the wire library. */
  sendEnd: bigint;
  /** When the response started to arrive (headers or metadata). */
  receiveStart: bigint;
}

/** Accumulates {@link InferStat} figures; one per client. */
export class InferStatRecorder {
  #count = 0;
  #total = 0n;
  #send = 0n;
  #receive = 0n;

  /** Adds one successful inference that started at `start` and finished at `end`. */
  record(start: bigint, timer: InferTimer, end: bigint): void {
    this.#count++;
    this.#total += end - start;
    // Both stamps or neither: a transport that does not stamp contributes no send/receive time.
    if (timer.sendEnd !== 0n && timer.receiveStart !== 0n) {
      this.#send += timer.sendEnd - timer.sendStart;
      this.#receive += end - timer.receiveStart;
    }
  }

  /** The figures so far. */
  snapshot(): InferStat {
    return {
      completedRequestCount: this.#count,
      cumulativeTotalRequestTimeNs: this.#total,
      cumulativeSendTimeNs: this.#send,
      cumulativeReceiveTimeNs: this.#receive,
    };
  }
}
