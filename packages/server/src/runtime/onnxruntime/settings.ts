/**
 * Settings of the onnxruntime backend: the thread defaults of its sessions and how its instances
 * are hosted (the core hosts each session in a worker thread; see `worker-instances.ts`).
 * @packageDocumentation
 */
import type { WorkerInstanceOptions } from './worker-instances.js';

/** onnxruntime backend settings (all optional). */
export interface OnnxruntimeSettings {
  /** ORT intra-op threads when the config has no `intra_op_thread_count` parameter. Default 1. */
  readonly defaultIntraOpThreads?: number;
  /** ORT inter-op threads when the config has no `inter_op_thread_count` parameter. Default 1. */
  readonly defaultInterOpThreads?: number;
  /**
   * Host each instance's session in a worker thread of its own, with these options (the core's
   * default: onnxruntime-node runs `session.run` synchronously on its calling thread, so sessions on
   * the main thread would run one after another and block the event loop). `false` or absent: the
   * session runs on the calling thread.
   */
  readonly workerThreads?: WorkerInstanceOptions | false;
}

export type { WorkerInstanceOptions };
