/**
 * The load generator's own gRPC `ModelInfer` path (issue 30): requests encoded once per data entry
 * (per request for sequences) and sent as bytes through grpc-js, as a bare grpc-js loop would send
 * them, instead of through `TritonClient.infer`, which encodes every request again and decodes
 * every response into an `InferResult` (together 1.2–1.5× a bare loop's CPU per request, measured
 * in `npm run bench`). What the server receives is the same: the bytes come from the protocol's
 * `encodeInferCall`, the encoder the client's gRPC transport uses, on the same call fields, over a
 * channel with the client's channel options and the run's `-H` headers as metadata. Responses are
 * still read (`readModelInferResponse`, timed as the client's receive time) and errors carry the
 * client's messages (`tritonErrorFromGrpc`).
 *
 * Used for unary gRPC requests without `--grpc-compression-algorithm` and without
 * `validation_data` (whose check needs the client's decoded result); everything else goes through
 * the client as before.
 * @packageDocumentation
 */
import { Client, credentials, type ClientUnaryCall, type Metadata, type ServiceError } from '@grpc/grpc-js';
import { channelOptionsFor, metadataFromHeaders, tritonErrorFromGrpc } from '@tritonserver-ts/client/grpc';
import { readModelInferResponse } from '@tritonserver-ts/protocol/grpc';

import type { ClientInferStat } from '../measure/infer-stat.js';

/** The gRPC method every request goes to. */
const MODEL_INFER_PATH = '/inference.GRPCInferenceService/ModelInfer';

const passBuffer = (bytes: Buffer): Buffer => bytes;

/** Sends encoded `ModelInferRequest`s on a channel of its own; see the module documentation. */
export class EncodedGrpcInfer {
  readonly #client: Client;
  readonly #target: string;
  readonly #metadata: Metadata;
  readonly #inFlight = new Set<ClientUnaryCall>();
  #aborted = false;
  #count = 0;
  #total = 0n;
  #send = 0n;
  #receive = 0n;

  /**
   * @param url - the run's `-u` (`host:port`)
   * @param headers - the run's `-H` headers, sent as metadata with every request
   * @param signal - aborts every request in flight (and any sent after it fired)
   */
  constructor(url: string, headers: Readonly<Record<string, string>>, signal: AbortSignal) {
    this.#target = url;
    this.#client = new Client(url, credentials.createInsecure(), channelOptionsFor({ url }));
    // grpc-js copies a call's metadata before adding to it, so one object serves every call.
    this.#metadata = metadataFromHeaders(headers);
    signal.addEventListener(
      'abort',
      () => {
        this.#aborted = true;
        for (const call of this.#inFlight) call.cancel();
      },
      { once: true },
    );
  }

  /**
   * Sends one encoded request; resolves with undefined when it was answered, else with the error's
   * message. Never rejects.
   */
  send(request: Buffer): Promise<string | undefined> {
    if (this.#aborted) return Promise.resolve('the request was cancelled');
    return new Promise((resolve) => {
      const start = process.hrtime.bigint();
      const call = this.#client.makeUnaryRequest(
        MODEL_INFER_PATH,
        passBuffer,
        passBuffer,
        request,
        this.#metadata,
        (error: ServiceError | null, response?: Buffer) => {
          this.#inFlight.delete(call);
          const received = process.hrtime.bigint();
          if (error !== null || response === undefined) {
            resolve(tritonErrorFromGrpc(error, `ModelInfer on ${this.#target}`).message);
            return;
          }
          try {
            readModelInferResponse(response);
          } catch (failure) {
            resolve(failure instanceof Error ? failure.message : String(failure));
            return;
          }
          const end = process.hrtime.bigint();
          this.#count += 1;
          this.#total += end - start;
          this.#send += sent - start;
          this.#receive += end - received;
          resolve(undefined);
        },
      );
      // grpc-js frames the message synchronously in makeUnaryRequest: the send ends here.
      const sent = process.hrtime.bigint();
      this.#inFlight.add(call);
    });
  }

  /** The cumulative timing of the answered requests, as the client's `inferStat()`. */
  inferStat(): ClientInferStat {
    return {
      completedRequestCount: this.#count,
      cumulativeTotalRequestTimeNs: this.#total,
      cumulativeSendTimeNs: this.#send,
      cumulativeReceiveTimeNs: this.#receive,
    };
  }

  /** Closes the channel (requests in flight are cancelled by grpc-js). */
  close(): void {
    this.#client.close();
  }
}
