/**
 * The conformance model repository: the test models of `@tritonserver-ts/server/testing`
 * (`writeTestModelRepository`) plus `py_decoupled`, the generated decoupled Python-backend model
 * (`decoupledPythonModel`: INT32 IN [1] = n → n responses OUT = 0..n-1, then the final flag) that
 * the `ModelStreamInfer` cases use. The same files serve a real Triton (its Python backend).
 */
import {
  decoupledPythonModel,
  writePythonModels,
  writeTestModelRepository,
} from '@tritonserver-ts/server/testing';

/** Writes the repository into `dir`; returns the model names. */
export async function writeConformanceRepository(dir: string): Promise<string[]> {
  const repo = await writeTestModelRepository(dir);
  const decoupled = decoupledPythonModel();
  await writePythonModels(dir, [decoupled]);
  return [...repo.models.map((m) => m.name), decoupled.name];
}
