/**
 * The onnxruntime backend behind the runtime's `Backend` interface: sessions (`onnxruntime-backend.ts`),
 * hosted in worker threads when its settings ask (`worker-instances.ts`, `ort-worker.ts`,
 * `inline-policy.ts`), auto-complete from the ONNX model (`auto-complete.ts`), and every batching
 * feature of Triton's ONNX Runtime backend (ragged inputs, batch inputs and outputs).
 * @packageDocumentation
 */
import type { Backend } from '../registry.js';
import { autoCompleteOnnxConfig } from './auto-complete.js';
import { createOnnxInstance, type OnnxInstanceSpec } from './onnxruntime-backend.js';
import type { OnnxruntimeSettings } from './settings.js';
import { WorkerModelInstance } from './worker-instances.js';

export type { OnnxruntimeSettings, WorkerInstanceOptions } from './settings.js';

/** The onnxruntime backend with `settings` bound. */
export function onnxruntimeBackend(settings: OnnxruntimeSettings = {}): Omit<Backend, 'name'> {
  const { workerThreads } = settings;
  const create = (
    spec: OnnxInstanceSpec,
  ): Promise<WorkerModelInstance | Awaited<ReturnType<typeof createOnnxInstance>>> =>
    workerThreads === undefined || workerThreads === false
      ? createOnnxInstance(spec)
      : WorkerModelInstance.start(spec, workerThreads);
  return {
    createInstance: ({ modelVersion, ...base }) =>
      create({
        ...base,
        modelPath: modelVersion.modelPath,
        ...(modelVersion.displayPath === undefined ? {} : { displayPath: modelVersion.displayPath }),
        ...(settings.defaultIntraOpThreads === undefined
          ? {}
          : { defaultIntraOpThreads: settings.defaultIntraOpThreads }),
        ...(settings.defaultInterOpThreads === undefined
          ? {}
          : { defaultInterOpThreads: settings.defaultInterOpThreads }),
      }),
    autoCompleteConfig: autoCompleteOnnxConfig,
    requiresModelFile: true,
    batchInputs: 'all',
  };
}
