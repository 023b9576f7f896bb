// Helper of the TEST STAND-IN NodeBridgeModel (called_models.py): runs a real ONNX file with
// onnxruntime-node, so food_classifier's BLS calls to food_classifier_onnx can be answered by the
// real food model under plain python3. Not shipped.
//
//   node ort_node_bridge.mjs describe <model.onnx>
//     -> {"inputs": ["input"], "outputs": ["output"]}
//   node ort_node_bridge.mjs run <model.onnx> <input name> <input.f32> <d0,d1,...> <output name> <output.f32>
//     -> {"dims": [N, 11]}   (the output written as little-endian float32 to <output.f32>)
import { readFileSync, writeFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';

const [command, model, ...rest] = process.argv.slice(2);
const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'] });
if (command === 'describe') {
  process.stdout.write(JSON.stringify({ inputs: session.inputNames, outputs: session.outputNames }));
} else if (command === 'run') {
  const [inputName, inputFile, dimsText, outputName, outputFile] = rest;
  const bytes = readFileSync(inputFile);
  const data = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const dims = dimsText.split(',').map(Number);
  const results = await session.run({ [inputName]: new ort.Tensor('float32', data, dims) });
  const output = results[outputName];
  if (!output) throw new Error(`the model has no output ${outputName}`);
  const values = output.data;
  writeFileSync(outputFile, Buffer.from(values.buffer, values.byteOffset, values.byteLength));
  process.stdout.write(JSON.stringify({ dims: output.dims }));
} else {
  throw new Error(`unknown command ${command}`);
}
