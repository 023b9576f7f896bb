/**
 * A real server over a temp repository of generated Python models (plus the ONNX identity model
 * for BLS), run with `/usr/bin/python3` (the interpreter with numpy on the test machines).
 */
import type { StartServerOptions } from '../../src/index.js';
import {
  writePythonModels,
  writeTestModelRepository,
  type GeneratedPythonModel,
} from '../../src/testing/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

export const PYTHON = '/usr/bin/python3';

/** A running test server over generated Python models. */
export type PythonTestServer = TestServer;

/** Starts a server on port 0 over `models` (+ `onnx` test models), Python settings merged in. */
export async function startPythonServer(
  models: readonly GeneratedPythonModel[],
  options: Partial<StartServerOptions> & { onnx?: readonly string[] } = {},
): Promise<PythonTestServer> {
  const { onnx, python, ...rest } = options;
  return startTestServer({
    ...rest,
    python: { interpreter: PYTHON, ...python },
    fill: async (repository) => {
      if (onnx !== undefined && onnx.length > 0) await writeTestModelRepository(repository, { only: onnx });
      await writePythonModels(repository, models);
    },
  });
}

/** POSTs a JSON inference request; returns the status and parsed body. */
export async function inferJson(
  url: string,
  model: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/v2/models/${model}/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The `data` of output `name` in a JSON response body. */
export function outputData(body: Record<string, unknown>, name: string): unknown[] | undefined {
  const outputs = body.outputs as { name: string; data: unknown[] }[] | undefined;
  return outputs?.find((o) => o.name === name)?.data;
}

/** Whether process `pid` exists (signal 0 probes without killing). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
