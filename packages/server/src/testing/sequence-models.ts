/**
 * Generated sequence-batching test models (issue 28), loadable by this server and by real Triton:
 *
 * - `simple_sequence` (ONNX, Direct, `max_batch_size` 8): Triton's example model for the
 *   `simple_*_sequence_*_client` examples: INT32 INPUT [1] → OUTPUT = (INPUT + START) × READY, with
 *   START and READY INT32 controls. The examples' expected figures (1, 11, 7, …) follow from it.
 * - {@link sequenceEchoModel}: ONNX model that echoes every control input it gets (START_OUT,
 *   END_OUT, READY_OUT, CORRID_OUT) beside OUTPUT = INPUT, so a test sees what the batcher fed each
 *   row; Direct or Oldest, control data types and CORRID type chosen per model.
 * - {@link sequenceAccumulatorPythonModel}: Python model keeping one accumulator per sequence in a
 *   dict keyed by its CORRID control input (as Triton's python_backend sequence examples): START sets
 *   it to INPUT, later requests add INPUT, END drops it; OUTPUT is the running sum (0 on a padding row).
 * @packageDocumentation
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import type { OnnxElementType } from '@tritonserver-ts/onnx-builder';
import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';

/** A generated model: its name and files (paths relative to the model directory). */
export interface GeneratedSequenceModel {
  readonly name: string;
  readonly files: Readonly<Record<string, string | Uint8Array>>;
}

/** Writes `models` into `repository`, one directory each. */
export async function writeSequenceModels(
  repository: string,
  models: readonly GeneratedSequenceModel[],
): Promise<void> {
  for (const model of models) {
    for (const [path, content] of Object.entries(model.files)) {
      const file = join(repository, model.name, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
    }
  }
}

/** Control kinds' config data types for the echo model's boolean controls. */
export type BooleanControlType = 'INT32' | 'FP32' | 'BOOL';

const ONNX_OF: Record<string, OnnxElementType> = {
  INT32: 'INT32',
  FP32: 'FLOAT',
  BOOL: 'BOOL',
  UINT64: 'UINT64',
  INT64: 'INT64',
  UINT32: 'UINT32',
  STRING: 'STRING',
};

function booleanControl(name: string, kind: string, type: BooleanControlType): string {
  const values =
    type === 'INT32'
      ? 'int32_false_true: [ 0, 1 ]'
      : type === 'FP32'
        ? 'fp32_false_true: [ 0, 1 ]'
        : 'bool_false_true: [ false, true ]';
  return `    { name: "${name}" control [ { kind: ${kind} ${values} } ] }`;
}

/** `simple_sequence`: Triton's example sequence model (see the module documentation). */
export function simpleSequenceModel(name = 'simple_sequence'): GeneratedSequenceModel {
  const dims = ['batch', 1];
  const g = new OnnxGraphBuilder({ name });
  g.addInput('INPUT', 'INT32', dims);
  g.addInput('START', 'INT32', dims);
  g.addInput('READY', 'INT32', dims);
  g.addNode('Add', ['INPUT', 'START'], ['SUM']);
  g.addNode('Mul', ['SUM', 'READY'], ['OUTPUT']);
  g.addOutput('OUTPUT', 'INT32', dims);
  const config = `name: "${name}"
backend: "onnxruntime"
max_batch_size: 8
sequence_batching {
  control_input [
${booleanControl('START', 'CONTROL_SEQUENCE_START', 'INT32')},
${booleanControl('READY', 'CONTROL_SEQUENCE_READY', 'INT32')}
  ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;
  return { name, files: { 'config.pbtxt': config, '1/model.onnx': g.toBytes() } };
}

/** Options of {@link sequenceEchoModel}. */
export interface SequenceEchoOptions {
  readonly name: string;
  readonly strategy: 'direct' | 'oldest';
  /** `max_batch_size` (Direct: slots per instance). Default 4. */
  readonly maxBatchSize?: number;
  /** Instances (KIND_CPU). Default 1. */
  readonly instances?: number;
  /** START / END / READY control type. Default INT32. */
  readonly controlType?: BooleanControlType;
  /** CORRID type (without `TYPE_`). Default UINT64. */
  readonly corridType?: 'UINT64' | 'INT64' | 'UINT32' | 'INT32' | 'STRING';
  /** `max_sequence_idle_microseconds` (0 = Triton's default, 1 s). */
  readonly idleMicroseconds?: number;
  /** Extra lines inside the strategy block (`direct { … }` / `oldest { … }`). */
  readonly strategyFields?: string;
}

/** An ONNX model echoing its control inputs (see the module documentation). */
export function sequenceEchoModel(options: SequenceEchoOptions): GeneratedSequenceModel {
  const { name, strategy } = options;
  const mbs = options.maxBatchSize ?? 4;
  const controlType = options.controlType ?? 'INT32';
  const corridType = options.corridType ?? 'UINT64';
  const dims = mbs > 0 ? ['batch', 1] : [1];
  const g = new OnnxGraphBuilder({ name });
  g.addInput('INPUT', 'INT32', dims);
  const controlOnnx = ONNX_OF[controlType] as OnnxElementType;
  for (const c of ['START', 'END', 'READY']) g.addInput(c, controlOnnx, dims);
  g.addInput('CORRID', ONNX_OF[corridType] as OnnxElementType, dims);
  g.addNode('Identity', ['INPUT'], ['OUTPUT']);
  g.addOutput('OUTPUT', 'INT32', dims);
  for (const c of ['START', 'END', 'READY']) {
    g.addNode('Identity', [c], [`${c}_OUT`]);
    g.addOutput(`${c}_OUT`, controlOnnx, dims);
  }
  g.addNode('Identity', ['CORRID'], ['CORRID_OUT']);
  g.addOutput('CORRID_OUT', ONNX_OF[corridType] as OnnxElementType, dims);
  const out = (n: string, t: string): string => `{ name: "${n}" data_type: TYPE_${t} dims: [ 1 ] }`;
  const config = `name: "${name}"
backend: "onnxruntime"
max_batch_size: ${mbs}
sequence_batching {
${options.idleMicroseconds !== undefined ? `  max_sequence_idle_microseconds: ${options.idleMicroseconds}\n` : ''}  ${strategy} { ${options.strategyFields ?? ''} }
  control_input [
${booleanControl('START', 'CONTROL_SEQUENCE_START', controlType)},
${booleanControl('END', 'CONTROL_SEQUENCE_END', controlType)},
${booleanControl('READY', 'CONTROL_SEQUENCE_READY', controlType)},
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_${corridType === 'STRING' ? 'STRING' : corridType} } ] }
  ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [
  ${out('OUTPUT', 'INT32')},
  ${out('START_OUT', controlType)},
  ${out('END_OUT', controlType)},
  ${out('READY_OUT', controlType)},
  ${out('CORRID_OUT', corridType)}
]
instance_group [ { kind: KIND_CPU count: ${options.instances ?? 1} } ]
`;
  return { name, files: { 'config.pbtxt': config, '1/model.onnx': g.toBytes() } };
}

/** Options of {@link sequenceAccumulatorPythonModel}. */
export interface SequenceAccumulatorOptions {
  readonly name?: string;
  readonly strategy?: 'direct' | 'oldest';
  /** Default 8. */
  readonly maxBatchSize?: number;
  /** CORRID type. Default UINT64. */
  readonly corridType?: 'UINT64' | 'STRING';
  readonly idleMicroseconds?: number;
  /** Seconds each execute() sleeps (to hold requests in the queue). Default 0. */
  readonly delaySeconds?: number;
}

/** A Python accumulator keyed by CORRID (see the module documentation). */
export function sequenceAccumulatorPythonModel(
  options: SequenceAccumulatorOptions = {},
): GeneratedSequenceModel {
  const name = options.name ?? 'py_sequence_accumulator';
  const mbs = options.maxBatchSize ?? 8;
  const corridType = options.corridType ?? 'UINT64';
  const control = (n: string, kind: string): string =>
    `    { name: "${n}" control [ { kind: ${kind} int32_false_true: [ 0, 1 ] } ] }`;
  const config = `name: "${name}"
backend: "python"
max_batch_size: ${mbs}
sequence_batching {
${options.idleMicroseconds !== undefined ? `  max_sequence_idle_microseconds: ${options.idleMicroseconds}\n` : ''}  ${options.strategy ?? 'direct'} { }
  control_input [
${control('START', 'CONTROL_SEQUENCE_START')},
${control('END', 'CONTROL_SEQUENCE_END')},
${control('READY', 'CONTROL_SEQUENCE_READY')},
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_${corridType} } ] }
  ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;
  const py = `import time

import numpy as np
import triton_python_backend_utils as pb_utils


def _scalar(request, name):
    return pb_utils.get_input_tensor_by_name(request, name).as_numpy().flatten()[0]


class TritonPythonModel:
    def initialize(self, args):
        self.accumulators = {}

    def execute(self, requests):
        if ${options.delaySeconds ?? 0} > 0:
            time.sleep(${options.delaySeconds ?? 0})
        responses = []
        for request in requests:
            value = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            out = np.zeros(value.shape, dtype=np.int32)
            if int(_scalar(request, "READY")) != 0:
                corrid = _scalar(request, "CORRID")
                key = corrid.decode() if isinstance(corrid, bytes) else int(corrid)
                total = int(value.flatten()[0])
                if int(_scalar(request, "START")) == 0:
                    total += self.accumulators.get(key, 0)
                if int(_scalar(request, "END")) != 0:
                    self.accumulators.pop(key, None)
                else:
                    self.accumulators[key] = total
                out.fill(total)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", out)]))
        return responses
`;
  return { name, files: { 'config.pbtxt': config, '1/model.py': py } };
}
