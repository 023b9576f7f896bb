/**
 * The contract between the model repository, the backends and the scheduler.
 *
 * A backend turns a model version directory plus its config into one or more {@link ModelInstance}s.
 * An instance executes one batch at a time; the scheduler decides which requests form a batch and
 * which instance runs it.
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

import type { RequestTrace } from '../common/request-trace.js';
import type { ExecutionTimings } from '../statistics/model-statistics.js';

export type { ExecutionTimings };

/** The result of one execution: every model output, keyed by name, plus its timings. */
export interface ExecutionResult {
  readonly outputs: ReadonlyMap<string, PackedTensor>;
  readonly timings: ExecutionTimings;
}

/**
 * One loaded copy of a model (Triton's "model instance"). Instances of a model run concurrently;
 * one instance never runs two executions at once (the scheduler guarantees it).
 */
export interface ModelInstance {
  /** e.g. `food_classifier_onnx_0_0` (Triton: `<model>_<group>_<index>`). */
  readonly name: string;
  /** `KIND_CPU`, `KIND_GPU`, `KIND_MODEL` (what the instance actually runs on). */
  readonly kind: string;
  /**
   * Runs the model on `inputs` (already batched: the batch dimension, when the model has one, is
   * the first dim of every input). Returns all model outputs.
   */
  execute(inputs: ReadonlyMap<string, PackedTensor>): Promise<ExecutionResult>;
  /**
   * The per-request path (Python backend): when present, the scheduler hands the instance the
   * batch's requests as they are (never concatenated) instead of calling {@link execute}. The
   * instance answers every request through its {@link InstanceRequest.respond} (exactly one
   * response with `final: true` per request, possibly after non-final ones for decoupled models;
   * also when the execution fails) and resolves with the execution's timings once the instance is
   * free for the next batch (a decoupled model may still be responding then).
   */
  executeRequests?(requests: readonly InstanceRequest[]): Promise<ExecutionTimings>;
  /**
   * The model is being unloaded (its scheduler drains): a per-request instance answers, within a
   * bound of its own, every request still open after its execution (a decoupled model that never
   * sends a final response), so that draining ends.
   */
  closing?(): void;
  /** Frees the instance's resources. Called once, after its last execution. */
  dispose(): Promise<void>;
}

/** One response of an {@link InstanceRequest}: outputs, or an error for this request only. */
export interface InstanceResponse {
  /** The response's output tensors (absent for an error, or for a final flag sent without a response). */
  readonly outputs?: ReadonlyMap<string, PackedTensor>;
  /** This request's error (typically the core's `ServerError`). */
  readonly error?: Error;
  /**
   * The response's parameters (a Python model's `InferenceResponse(parameters=…)`): bool, int64
   * (`bigint` beyond 2^53) or string values; they reach the client with the response.
   */
  readonly parameters?: Readonly<Record<string, string | number | bigint | boolean>>;
  /** The request's last response (Triton's `TRITONSERVER_RESPONSE_COMPLETE_FINAL`). */
  readonly final: boolean;
}

/** One request as the per-request path ({@link ModelInstance.executeRequests}) sees it. */
export interface InstanceRequest {
  readonly inputs: ReadonlyMap<string, PackedTensor>;
  /** The outputs the client asked for (all outputs of the config when it asked for none). */
  readonly requestedOutputs: readonly string[];
  /** The request id ('' when none). */
  readonly id: string;
  /** The request's sequence id (`sequence_id` parameter), 0 when none. */
  readonly correlationId: number | string;
  /** Triton request flags: 1 = sequence start, 2 = sequence end. */
  readonly flags: number;
  /** The request's parameters, as the client sent them (64-bit integers beyond 2^53 as `bigint`). */
  readonly parameters: Readonly<Record<string, string | number | bigint | boolean>>;
  /** Receives each of the request's responses, in order. */
  readonly respond: (response: InstanceResponse) => void;
  /** Aborts when the client cancels the request (the front end's signal), if it can. */
  readonly signal?: AbortSignal;
  /** The request's trace when it is traced: BLS requests the model sends with it are its children. */
  readonly trace?: RequestTrace;
}

/** A model instance created by this runtime (adds its group and index to {@link ModelInstance}). */
export interface RuntimeModelInstance extends ModelInstance {
  /** The instance group's name. */
  readonly groupName: string;
  /** Index of the instance within its group. */
  readonly index: number;
  /** The model version this instance runs. */
  readonly version: number;
}
