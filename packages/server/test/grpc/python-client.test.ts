/**
 * An independent client against the gRPC front end: Python grpcio (Debian python3-grpcio, run by
 * /usr/bin/python3) with stubs grpc_tools.protoc compiles from our .proto files at test time. When
 * grpc_tools is missing it is installed with apt (Debian python3-grpc-tools), as the web tests
 * install chromium.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { TestServer } from '../helpers/server.js';
import { startGrpcTestServer } from './helpers.js';
import { compilePythonStubs, runPythonClient } from './python-stubs.js';

const CLIENT = fileURLToPath(new URL('./python/triton_grpc_client.py', import.meta.url));

let server: TestServer & { grpcTarget: string };
let stubs: string;

beforeAll(async () => {
  stubs = await compilePythonStubs();
  server = await startGrpcTestServer({ only: ['simple'] });
}, 600_000);

afterAll(async () => {
  await server.close();
  await rm(stubs, { recursive: true, force: true });
});

describe('a Python grpcio client with stubs from our .proto files', () => {
  it('calls ServerLive, ModelMetadata and ModelInfer, and reads the error status', async () => {
    const r = await runPythonClient(CLIENT, [stubs, server.grpcTarget]);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      live: boolean;
      metadata: { name: string; versions: string[]; platform: string; inputs: unknown[]; outputs: unknown[] };
      infer: { model_name: string; model_version: string; id: string; outputs: unknown[]; raw: number[][] };
      unknown: { code: string; details: string };
    };
    expect(out.live).toBe(true);
    expect(out.metadata).toEqual({
      name: 'simple',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [
        ['INPUT0', 'INT32', [-1, 16]],
        ['INPUT1', 'INT32', [-1, 16]],
      ],
      outputs: [
        ['OUTPUT0', 'INT32', [-1, 16]],
        ['OUTPUT1', 'INT32', [-1, 16]],
      ],
    });
    const a = Array.from({ length: 16 }, (_, i) => i);
    expect(out.infer).toEqual({
      model_name: 'simple',
      model_version: '1',
      id: 'py-1',
      outputs: [
        ['OUTPUT0', 'INT32', [1, 16]],
        ['OUTPUT1', 'INT32', [1, 16]],
      ],
      raw: [a.map((x) => x + 1), a.map((x) => x - 1)],
    });
    expect(out.unknown).toEqual({
      code: 'INVALID_ARGUMENT',
      details: "Request for unknown model: 'nope' is not found",
    });
  });
});
