/**
 * The transport-neutral inference request and response every layer speaks: the front ends hand
 * requests to the core in this form (already decoded from the wire), the ensemble scheduler and a
 * Python model's BLS send their requests to the core in it too (through `InferenceHost`).
 * @packageDocumentation
 */
import type {
  InferRequest,
  InferRequestInput,
  InferRequestOutput,
  ServerInferOutput,
  ServerInferResponse,
  SharedMemoryRef,
} from '@tritonserver-ts/protocol';

import type { ServerError } from './errors.js';
import type { RequestTrace } from './request-trace.js';

/** A request / tensor parameter value (64-bit integers out of the safe range are `bigint`). */
export type ParameterValue = string | number | bigint | boolean;

/**
 * Where a tensor lives in a registered shared-memory region: the one reference type of the client's
 * neutral model (`@tritonserver-ts/protocol`), shared by both wires. Offset and byte size are
 * uint64 on the wire and kept exact (`bigint` beyond 2^53 − 1) until the region checks have bounded
 * them; an absent offset is 0.
 */
export type { SharedMemoryRef };

/**
 * One input of a request to the core: the protocol's decoded input ({@link InferRequestInput}: data
 * decoded by the wire's decoder, or a shared-memory reference), with the server's deferred refusal.
 */
export interface CoreInferInput extends InferRequestInput {
  /**
   * Set by a front end whose data could not be decoded against the input's datatype and shape
   * (gRPC raw or typed contents of the wrong size): the core refuses the request with this error
   * where Triton checks the input's data size, after its name, datatype and shape, so the request
   * gets the same error, in the same order, as when the core read the bytes itself.
   */
  readonly dataError?: ServerError;
}

/** One requested output: the protocol's {@link InferRequestOutput} (`classCount`, `sharedMemory`). */
export type CoreRequestedOutput = InferRequestOutput;

/**
 * An inference request to the core: the protocol's decoded {@link InferRequest} plus the server's
 * own hooks (cancellation, activity and response callbacks, input budget, parent trace). No wire
 * detail: each front end decodes its wire (raw contents, the HTTP raw binary request) before.
 */
export interface CoreInferRequest extends InferRequest {
  readonly inputs: readonly CoreInferInput[];
  /**
   * The trace of the request that sends this one (an ensemble's, for its steps): when set, this
   * request is traced as its child (`parent_id`) whatever the sampling.
   */
  readonly parentTrace?: RequestTrace;
  /** Aborted when the client goes away. */
  readonly signal?: AbortSignal;
  /**
   * Called with the scheduler's queue and compute times of this request (Triton's trace activity
   * names, `process.hrtime.bigint()` values); an ensemble adds its steps' compute times up this way.
   */
  readonly onActivity?: (
    activity: 'QUEUE_START' | 'COMPUTE_START' | 'COMPUTE_INPUT_END' | 'COMPUTE_OUTPUT_START' | 'COMPUTE_END',
    ns: bigint,
  ) => void;
  /**
   * Decoupled models (Python backend): receives each of the request's responses as the model sends
   * them, the last one with `final: true` (it may carry no response: a final flag alone). `infer`
   * then resolves, after the final one, with a response without outputs. Without `onResponse`,
   * `infer` resolves with the last response's outputs.
   */
  readonly onResponse?: (response: CoreStreamResponse) => void;
  /**
   * How the front end bounds what the request's shared-memory inputs bring into memory (issue 23
   * item 6): checked and taken before a byte is read. Absent: no bound (in-process callers).
   */
  readonly inputBudget?: InputBudget;
}

/**
 * A front end's bound on a request's input bytes, which its shared-memory inputs count against as
 * its body does: the per-request limit (`--http-max-input-size`; over gRPC the message limit or
 * the in-flight budget, the smaller) and the in-flight budget shared by every request
 * (`--http-max-inflight-body-bytes`).
 */
export interface InputBudget {
  /** Input bytes the request already holds: its body, or its message's raw contents. */
  readonly heldBytes: number;
  /** Most input bytes one request may have (held bytes and shared-memory inputs together). */
  readonly maxBytes: number;
  /** The setting of {@link InputBudget.maxBytes}, named in the refusal (e.g. `--http-max-input-size`). */
  readonly maxBytesFlag: string;
  /**
   * Takes `bytes` out of the in-flight budget before they are read.
   * @returns gives them back (called once, when the request has been answered)
   * @throws ServerError (UNAVAILABLE) when the budget cannot hold them now
   */
  acquire(bytes: number): () => void;
}

/** One response of a request to a decoupled model (see {@link CoreInferRequest.onResponse}). */
export interface CoreStreamResponse {
  /** The response; absent for a final flag sent without one, or for an error. */
  readonly response?: CoreInferResponse;
  /** This response's error (the request may still get more responses unless `final`). */
  readonly error?: ServerError;
  /** The request's last response (`TRITONSERVER_RESPONSE_COMPLETE_FINAL`). */
  readonly final: boolean;
}

/** One output of a response: the protocol's {@link ServerInferOutput}. */
export type CoreInferOutput = ServerInferOutput;

/** An inference response: the protocol's {@link ServerInferResponse}. */
export type CoreInferResponse = ServerInferResponse;
