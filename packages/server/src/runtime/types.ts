/**
 * The contract between the model repository, the backends and the scheduler.
 *
 * A backend turns a model version directory plus its config into one or more {@link ModelInstance}s.
 * An instance executes one batch at a time; the scheduler decides which requests form a batch and
 * which instance runs it.
 * @packageDocumentation
 */
import type { Tensor } from '@tritonserver-ts/client/protocol';

/** Nanosecond timings of one execution, split like Triton's compute_input / compute_infer / compute_output. */
export interface ExecutionTimings {
  /** Preparing inputs for the backend (e.g. building ORT tensors, concatenating a batch). */
  readonly computeInputNs: bigint;
  /** The backend's own run. */
  readonly computeInferNs: bigint;
  /** Turning backend outputs into protocol tensors. */
  readonly computeOutputNs: bigint;
}

/** The result of one execution: every model output, keyed by name, plus its timings. */
export interface ExecutionResult {
  readonly outputs: ReadonlyMap<string, Tensor>;
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
  execute(inputs: ReadonlyMap<string, Tensor>): Promise<ExecutionResult>;
  /** Frees the instance's resources. Called once, after its last execution. */
  dispose(): Promise<void>;
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
