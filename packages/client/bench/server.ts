/**
 * Bench helper: makes sure the embedded server and the food model are built, and runs the server in
 * a child process (`server-child.mjs`) with HTTP and gRPC on free ports.
 * The server is imported from the workspace (`@tritonserver-ts/server`, built by turbo when its dist
 * is missing); it is not a dependency of the client package.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The food model's directory in models_staging (config, labels and the generated 1/model.onnx). */
export const FOOD_MODEL_DIR = join(root, 'models_staging', 'food_classifier_onnx');

function run(command: string, args: string[], what: string): void {
  console.log(`${what}…`);
  const r = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`${what} failed`);
}

/** Builds the embedded server (and what it depends on) and the demo food model when missing. */
export function ensureBuilt(): void {
  if (!existsSync(join(root, 'packages/server/dist/grpc/server.js'))) {
    run(
      'npx',
      ['turbo', 'run', 'build', '--filter=@tritonserver-ts/server...', '--output-logs=errors-only'],
      'building @tritonserver-ts/server',
    );
  }
  if (!existsSync(join(FOOD_MODEL_DIR, '1', 'model.onnx'))) {
    run('npm', ['run', 'model:ensure', '-w', '@gourmetgram/food-model'], 'building the demo food model');
  }
}

/** The server child process. */
export interface ServerChild {
  readonly url: string;
  /** host:port of its gRPC endpoint. */
  readonly grpcUrl: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** Options of {@link startServerChild}. */
export interface ServerChildOptions {
  /**
   * Serve the decoupled Python test model `py_decoupled` (with /usr/bin/python3) instead of
   * `simple` and the food model.
   */
  readonly decoupled?: boolean;
}

/** Starts the embedded server in its own process on `simple` and the food model (or `py_decoupled`). */
export async function startServerChild(options: ServerChildOptions = {}): Promise<ServerChild> {
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('./server-child.mjs', import.meta.url)),
      ...(options.decoupled === true ? ['--decoupled'] : [FOOD_MODEL_DIR]),
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const ready = await new Promise<{ url: string; grpcUrl: string }>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => resolve(JSON.parse(line) as never));
    child.once('exit', (code) => reject(new Error(`the server exited with code ${code}`)));
  });
  return {
    ...ready,
    pid: child.pid ?? -1,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
