/**
 * Python gRPC stubs for the independent-client tests: grpcio and grpc_tools for /usr/bin/python3
 * from Debian (python3-grpc-tools, installed with apt once when missing, as the web tests install
 * chromium), and `grpc_tools.protoc` run on our own .proto files into a temporary directory.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PROTO_DIR, PROTO_FILES } from '@tritonserver-ts/protocol/grpc';

/** The interpreter with grpcio (Debian's), not the `python3` on PATH. */
export const PYTHON = '/usr/bin/python3';

function hasGrpcTools(): boolean {
  return spawnSync(PYTHON, ['-c', 'import grpc, grpc_tools.protoc'], { stdio: 'ignore' }).status === 0;
}

/** grpcio and grpc_tools for {@link PYTHON}, from Debian (installed once when missing). */
export function ensureGrpcTools(): void {
  if (hasGrpcTools()) return;
  const apt = (args: string[]): boolean =>
    spawnSync('apt-get', args, { stdio: 'inherit', timeout: 600_000 }).status === 0;
  const args = ['install', '-y', '--no-install-recommends', 'python3-grpc-tools'];
  if (process.getuid?.() === 0 && (apt(args) || (apt(['update']) && apt(args))) && hasGrpcTools()) return;
  throw new Error(
    'The Python gRPC client test needs grpcio and grpc_tools for /usr/bin/python3: sudo apt-get install -y python3-grpc-tools',
  );
}

/** Compiles the stubs into a fresh temporary directory (the caller removes it) and returns it. */
export async function compilePythonStubs(): Promise<string> {
  ensureGrpcTools();
  const stubs = await mkdtemp(join(tmpdir(), 'grpc-py-stubs-'));
  execFileSync(PYTHON, [
    '-m',
    'grpc_tools.protoc',
    `-I${PROTO_DIR}`,
    `--python_out=${stubs}`,
    `--grpc_python_out=${stubs}`,
    ...PROTO_FILES.map((f) => join(PROTO_DIR, f)),
  ]);
  return stubs;
}

/**
 * Runs a Python client script asynchronously (the server runs in this process and must keep
 * answering) and returns its exit status and output.
 */
export function runPythonClient(
  script: string,
  args: readonly string[],
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, [script, ...args], { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ status: error === null ? 0 : 1, stdout, stderr }),
    );
  });
}
