/**
 * A decoupled Python-backend model from an independent client: Python grpcio with stubs compiled from
 * our .proto files (see `python-stubs.ts`) reads every response of each request on
 * `ModelStreamInfer` with `triton_final_response`, and sees `ModelInfer` refuse the model.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { decoupledPythonModel } from '../../src/testing/index.js';
import { startPythonServer, type PythonTestServer } from '../python-backend/helpers.js';
import { compilePythonStubs, runPythonClient } from './python-stubs.js';

const CLIENT = fileURLToPath(new URL('./python/triton_grpc_decoupled_client.py', import.meta.url));

let server: PythonTestServer;
let stubs: string;

beforeAll(async () => {
  stubs = await compilePythonStubs();
  server = await startPythonServer([decoupledPythonModel()], { grpcPort: 0 });
}, 600_000);

afterAll(async () => {
  await server.close();
  await rm(stubs, { recursive: true, force: true });
});

describe('a Python grpcio client on a decoupled model', () => {
  it('gets n responses per request flagged final false, the empty final response on request, errors in-band', async () => {
    const r = await runPythonClient(CLIENT, [stubs, server.running.grpcUrl, 'py_decoupled']);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      stream: { id: string; error: string; out: number[]; final: boolean | null }[];
      unary: { code: string; details: string };
    };
    const of = (id: string) => out.stream.filter((m) => m.id === id);
    expect(of('three')).toEqual([
      { id: 'three', error: '', out: [0], final: false },
      { id: 'three', error: '', out: [1], final: false },
      { id: 'three', error: '', out: [2], final: false },
      { id: 'three', error: '', out: [], final: true },
    ]);
    expect(of('zero')).toEqual([{ id: 'zero', error: '', out: [], final: true }]);
    expect(of('negative')).toEqual([{ id: 'negative', error: 'n must be >= 0', out: [], final: true }]);
    expect(out.stream).toHaveLength(6);
    expect(out.unary).toEqual({
      code: 'UNIMPLEMENTED',
      details: "ModelInfer RPC doesn't support models with decoupled transaction policy",
    });
  });
});
