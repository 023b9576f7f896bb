/**
 * The transport-neutral inference request and response every layer speaks: the front ends hand
 * requests to the core in this form (already decoded from the wire), the ensemble scheduler and a
 * Python model's BLS send their requests to the core in it too (through `InferenceHost`).
 * @packageDocumentation
 */
import type { BytesList, PackedTensor, SharedMemoryRef, TensorData } from '@tritonserver-ts/protocol';

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

/** One input of an inference request. */
export interface CoreInferInput {
  readonly name: string;
  /** The datatype string as sent (validated against the model by the core). */
  readonly datatype: string;
  readonly shape: readonly number[];
  /**
   * Decoded data; absent when the input is in shared memory or given as {@link CoreInferInput.raw}.
   * BYTES: a `BytesList` (one buffer, as the front ends decode it) or one `Uint8Array` per element.
   */
  readonly data?: TensorData | BytesList;
  /**
   * The input's raw wire bytes (gRPC `raw_input_contents`, or typed `contents` serialised), decoded
   * by the core against the model's datatype and the shape, with Triton's byte-size message.
   */
  readonly raw?: Uint8Array;
  /** Set when the input's data is in a registered shared-memory region. */
  readonly sharedMemory?: SharedMemoryRef;
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
}

/** One requested output. */
export interface CoreRequestedOutput {
  readonly name: string;
  /** Classification extension: return the top `classification` classes instead of the tensor. */
  readonly classification?: number;
  /** Write the output into this shared-memory region instead of returning it. */
  readonly sharedMemory?: SharedMemoryRef;
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
}

/** An inference request after wire decoding. */
export interface CoreInferRequest {
  readonly modelName: string;
  /** Requested version ('' or absent = latest ready version). */
  readonly modelVersion?: string;
  readonly id?: string;
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  readonly inputs: readonly CoreInferInput[];
  /** Absent or empty = every model output. */
  readonly outputs?: readonly CoreRequestedOutput[];
  /**
   * The trace of the request that sends this one (an ensemble's, for its steps): when set, this
   * request is traced as its child (`parent_id`) whatever the sampling.
   */
  readonly parentTrace?: RequestTrace;
  /**
   * Raw binary request (HTTP `Inference-Header-Content-Length: 0`): the bytes of the model's single
   * input; `inputs` must then be empty.
   */
  readonly rawInput?: Uint8Array;
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

/** One output of a response. */
export interface CoreInferOutput {
  /**
   * The tensor (for classification: the BYTES class strings). BYTES data is a `BytesList` (one
   * buffer in Triton's length-prefixed layout; `toArray()` / `toStrings()` give the elements).
   */
  readonly tensor: PackedTensor;
  /** Set when the output was written to shared memory (the response then carries no data). */
  readonly sharedMemory?: SharedMemoryRef;
  /** The name as requested (equal to `tensor.name`). */
  readonly name: string;
  /** True when classification was applied. */
  readonly classification: boolean;
}

/** An inference response. */
export interface CoreInferResponse {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id?: string;
  /**
   * The response's parameters (a Python model's `InferenceResponse(parameters=…)`): the JSON
   * `parameters` of an HTTP response, the `parameters` map of a gRPC one.
   */
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  readonly outputs: readonly CoreInferOutput[];
}
