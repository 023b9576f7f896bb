/**
 * A traced request as every layer sees it: the scheduler reports its timestamps, an ensemble and a
 * Python model's BLS requests spawn their children from it, the core starts and finishes it. The
 * core's `ActiveTrace` (`core/tracing.ts`) implements it; the layers below the core know only this
 * interface, so none of them imports the core's trace machinery.
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

/** When traced tensors were captured: the inputs when queued, the outputs when answered. */
export type TensorActivity = 'TENSOR_QUEUE_INPUT' | 'TENSOR_BACKEND_OUTPUT';

/** One request being traced (see `ActiveTrace` for what each member records). */
export interface RequestTrace {
  /** The trace id (1, 2, … in sampling order). */
  readonly id: number;
  /** The id of the trace this one was spawned from, if any. */
  readonly parentId: number | undefined;
  /** A trace for a request this one sends (an ensemble's step, a BLS request); the caller finishes it. */
  spawnChild(): RequestTrace;
  /** Records activity `name` at `ns` (`process.hrtime.bigint()`). */
  capture(name: string, ns: bigint): void;
  /** The core started the request on `model` version `version`. */
  requestStart(model: string, version: number, requestId: string | undefined, ns: bigint): void;
  /** Whether the trace records tensors. */
  readonly tensors: boolean;
  /** Records `tensors` as `activity`. */
  captureTensors(activity: TensorActivity, tensors: Iterable<PackedTensor>): void;
  /** The request is over. Idempotent. */
  finish(): void;
}
