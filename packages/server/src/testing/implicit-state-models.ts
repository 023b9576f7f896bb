/**
 * Generated implicit-state test models (`sequence_batching.state`, issue 28), loadable by this
 * server and (the ONNX ones) by real Triton:
 *
 * - {@link implicitStateAccumulatorModel}: ONNX accumulator in the manner of Triton's QA implicit
 *   models: INT32 INPUT [1] and the state INPUT_STATE [1] → OUTPUT_STATE = INPUT + INPUT_STATE
 *   (with a START control, INPUT_STATE is ignored at START: × (1 − START)), OUTPUT = OUTPUT_STATE.
 *   Direct or Oldest; initial state none, `zero_data` or a `data_file`; OUTPUT_STATE optionally
 *   listed as an output (so clients may request it); `stateFields` replaces the state description
 *   (load-error tests).
 * - {@link implicitStatePythonModel}: a Python model reading its state with
 *   `pb_utils.get_input_tensor_by_name(request, "INPUT_STATE")` and returning the new state as the
 *   `OUTPUT_STATE` tensor of its response (this server's extension: Triton's Python backend has no
 *   implicit state writes).
 * @packageDocumentation
 */
import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';

import type { GeneratedSequenceModel } from './sequence-models.js';

/** Options of {@link implicitStateAccumulatorModel}. */
export interface ImplicitStateAccumulatorOptions {
  readonly name: string;
  readonly strategy?: 'direct' | 'oldest';
  /** `max_batch_size` (Direct: slots per instance). Default 4. */
  readonly maxBatchSize?: number;
  readonly instances?: number;
  /** Extra fields inside the strategy block. */
  readonly strategyFields?: string;
  /** `none` (default), `zero` (`zero_data`) or the INT32 value of a `data_file` (`initial_state/start`). */
  readonly initial?: 'none' | 'zero' | number;
  /** A START control (INT32) that makes the model ignore INPUT_STATE at START. Default false. */
  readonly resetOnStart?: boolean;
  /** List OUTPUT_STATE among the config's outputs (clients may then request it). Default false. */
  readonly listOutputState?: boolean;
  /** Replaces the `state [ … ]` entries' text (load-error tests). */
  readonly stateFields?: string;
  /** Extra files (paths relative to the model directory). */
  readonly files?: Readonly<Record<string, string | Uint8Array>>;
}

function int32Bytes(value: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, value, true);
  return b;
}

/** The ONNX accumulator with implicit state (see the module documentation). */
export function implicitStateAccumulatorModel(
  options: ImplicitStateAccumulatorOptions,
): GeneratedSequenceModel {
  const { name } = options;
  const mbs = options.maxBatchSize ?? 4;
  const dims = mbs > 0 ? ['batch', 1] : [1];
  const g = new OnnxGraphBuilder({ name });
  g.addInput('INPUT', 'INT32', dims);
  g.addInput('INPUT_STATE', 'INT32', dims);
  if (options.resetOnStart === true) {
    g.addInput('START', 'INT32', dims);
    g.addNode('Mul', ['INPUT_STATE', 'START'], ['STATE_AT_START']);
    g.addNode('Sub', ['INPUT_STATE', 'STATE_AT_START'], ['KEPT_STATE']);
    g.addNode('Add', ['INPUT', 'KEPT_STATE'], ['OUTPUT_STATE']);
  } else {
    g.addNode('Add', ['INPUT', 'INPUT_STATE'], ['OUTPUT_STATE']);
  }
  g.addNode('Identity', ['OUTPUT_STATE'], ['OUTPUT']);
  g.addOutput('OUTPUT', 'INT32', dims);
  g.addOutput('OUTPUT_STATE', 'INT32', dims);
  const initial = options.initial ?? 'none';
  const initialText =
    initial === 'none'
      ? ''
      : initial === 'zero'
        ? ' initial_state: { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true name: "zeros" }'
        : ' initial_state: { data_type: TYPE_INT32 dims: [ 1 ] data_file: "start" name: "from file" }';
  const state =
    options.stateFields ??
    `{ input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_INT32 dims: [ 1 ]${initialText} }`;
  const config = `name: "${name}"
backend: "onnxruntime"
max_batch_size: ${mbs}
sequence_batching {
  ${options.strategy ?? 'direct'} { ${options.strategyFields ?? ''} }
${
  options.resetOnStart === true
    ? '  control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ]\n'
    : ''
}  state [ ${state} ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [
  { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] }${
    options.listOutputState === true ? ',\n  { name: "OUTPUT_STATE" data_type: TYPE_INT32 dims: [ 1 ] }' : ''
  }
]
instance_group [ { kind: KIND_CPU count: ${options.instances ?? 1} } ]
`;
  const files: Record<string, string | Uint8Array> = {
    'config.pbtxt': config,
    '1/model.onnx': g.toBytes(),
    ...(typeof initial === 'number' ? { 'initial_state/start': int32Bytes(initial) } : {}),
    ...options.files,
  };
  return { name, files };
}

/** Options of {@link implicitStatePythonModel}. */
export interface ImplicitStatePythonOptions {
  readonly name?: string;
  readonly strategy?: 'direct' | 'oldest';
  /** Default 4. */
  readonly maxBatchSize?: number;
}

/** The Python accumulator with implicit state (see the module documentation). */
export function implicitStatePythonModel(options: ImplicitStatePythonOptions = {}): GeneratedSequenceModel {
  const name = options.name ?? 'py_implicit_state';
  const config = `name: "${name}"
backend: "python"
max_batch_size: ${options.maxBatchSize ?? 4}
sequence_batching {
  ${options.strategy ?? 'direct'} { }
  state [
    {
      input_name: "INPUT_STATE"
      output_name: "OUTPUT_STATE"
      data_type: TYPE_INT32
      dims: [ 1 ]
      initial_state: { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true name: "zeros" }
    }
  ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;
  const py = `import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            value = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            state = pb_utils.get_input_tensor_by_name(request, "INPUT_STATE").as_numpy()
            total = (value + state).astype(np.int32)
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[pb_utils.Tensor("OUTPUT", total), pb_utils.Tensor("OUTPUT_STATE", total)]
                )
            )
        return responses
`;
  return { name, files: { 'config.pbtxt': config, '1/model.py': py } };
}
