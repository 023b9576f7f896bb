/**
 * An independent client against the gRPC front end: Python grpcio (Debian python3-grpcio, run by
 * /usr/bin/python3) with stubs grpc_tools.protoc compiles from our .proto files at test time. When
 * grpc_tools is missing it is installed with apt (Debian python3-grpc-tools), as the web tests
 * install chromium.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { PROTO_DIR, PROTO_FILES } from '@tritonserver-ts/client/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { TestServer } from '../helpers/server.js';
import { startGrpcTestServer } from './helpers.js';

const PYTHON = '/usr/bin/python3';
const CLIENT = fileURLToPath(new URL('./python/triton_grpc_client.py', import.meta.url));

function hasGrpcTools(): boolean {
  return spawnSync(PYTHON, ['-c', 'import grpc, grpc_tools.protoc'], { stdio: 'ignore' }).status === 0;
}

/** grpcio and grpc_tools for /usr/bin/python3, from Debian (installed once when missing). */
function ensureGrpcTools(): void {
  if (hasGrpcTools()) return;
  const apt = (args: string[]): boolean =>
    spawnSync('apt-get', args, { stdio: 'inherit', timeout: 600_000 }).status === 0;
  const args = ['install', '-y', '--no-install-recommends', 'python3-grpc-tools'];
  if (process.getuid?.() === 0 && (apt(args) || (apt(['update']) && apt(args))) && hasGrpcTools()) return;
  throw new Error(
    'The Python gRPC client test needs grpcio and grpc_tools for /usr/bin/python3: sudo apt-get install -y python3-grpc-tools',
  );
}

let server: TestServer & { grpcTarget: string };
let stubs: string;

beforeAll(async () => {
  ensureGrpcTools();
  stubs = await mkdtemp(join(tmpdir(), 'grpc-py-stubs-'));
  execFileSync(PYTHON, [
    '-m',
    'grpc_tools.protoc',
    `-I${PROTO_DIR}`,
    `--python_out=${stubs}`,
    `--grpc_python_out=${stubs}`,
    ...PROTO_FILES.map((f) => join(PROTO_DIR, f)),
  ]);
  server = await startGrpcTestServer({ only: ['simple'] });
}, 600_000);

afterAll(async () => {
  await server.close();
  await rm(stubs, { recursive: true, force: true });
});

describe('a Python grpcio client with stubs from our .proto files', () => {
  it('calls ServerLive, ModelMetadata and ModelInfer, and reads the error status', async () => {
    // Asynchronously: the server runs in this process and must keep answering.
    const r = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(PYTHON, [CLIENT, stubs, server.grpcTarget], { timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : 1, stdout, stderr }),
      );
    });
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
