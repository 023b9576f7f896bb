/**
 * The conformance model repository: the test models of `@tritonserver-ts/server/testing`
 * (`writeTestModelRepository`) plus generated Python-backend models: `py_decoupled`
 * (`decoupledPythonModel`: INT32 IN [1] = n → n responses OUT = 0..n-1, then the final flag) that
 * the `ModelStreamInfer` cases use, and the models of `test/python-backend.test.ts` (response
 * senders, response parameters, `async def execute`, `TritonError` codes, a decoupled policy set in
 * `auto_complete_config`), and `py_word_stream` (`wordStreamPythonModel`: one response per word of
 * BYTES `text_input`) that the generate-extension cases use, and the sequence-batching models of
 * `test/sequence-batcher.test.ts`: `py_sequence_accumulator` (`sequenceAccumulatorPythonModel`: a
 * running sum per sequence keyed by its CORRID control) and `onnx_implicit_state`
 * (`implicitStateAccumulatorModel`: the running sum kept as Triton's implicit state). The same
 * files serve a real Triton (its Python and onnxruntime backends).
 */
import {
  asyncExecutePythonModel,
  decoupledPolicyPythonModel,
  decoupledPythonModel,
  errorCodePythonModel,
  implicitStateAccumulatorModel,
  responseParametersPythonModel,
  responseSenderPythonModel,
  sequenceAccumulatorPythonModel,
  wordStreamPythonModel,
  writePythonModels,
  writeSequenceModels,
  writeTestModelRepository,
  type GeneratedPythonModel,
  type GeneratedSequenceModel,
} from '@tritonserver-ts/server/testing';

/** The Python-backend models of the suite, beside the server's test models. */
export function conformancePythonModels(): GeneratedPythonModel[] {
  return [
    decoupledPythonModel(),
    responseSenderPythonModel('py_response_sender', { decoupled: false, async: false }),
    responseSenderPythonModel('py_response_sender_decoupled', { decoupled: true, async: false }),
    responseSenderPythonModel('py_response_sender_decoupled_async', { decoupled: true, async: true }),
    responseParametersPythonModel('py_response_parameters'),
    responseParametersPythonModel('py_response_parameters_decoupled', { decoupled: true }),
    asyncExecutePythonModel('py_async_execute'),
    errorCodePythonModel('py_error_code'),
    decoupledPolicyPythonModel('py_decoupled_policy'),
    wordStreamPythonModel('py_word_stream'),
  ];
}

/** The sequence-batching models of the suite (Triton-loadable: the state model resets at START). */
export function conformanceSequenceModels(): GeneratedSequenceModel[] {
  return [
    sequenceAccumulatorPythonModel({ name: 'py_sequence_accumulator', maxBatchSize: 4 }),
    implicitStateAccumulatorModel({ name: 'onnx_implicit_state', initial: 'zero', resetOnStart: true }),
  ];
}

/** Writes the repository into `dir`; returns the model names. */
export async function writeConformanceRepository(dir: string): Promise<string[]> {
  const repo = await writeTestModelRepository(dir);
  const python = conformancePythonModels();
  await writePythonModels(dir, python);
  const sequence = conformanceSequenceModels();
  await writeSequenceModels(dir, sequence);
  return [...repo.models.map((m) => m.name), ...python.map((m) => m.name), ...sequence.map((m) => m.name)];
}
