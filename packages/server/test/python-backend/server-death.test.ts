import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect, it } from 'vitest';

import { faultPythonModel, writePythonModels } from '../../src/testing/index.js';
import { PYTHON, alive, inferJson, outputData } from './helpers.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

it('a stub exits by itself when the server process is killed (end of file on its pipe)', async () => {
  if (!existsSync(cli)) throw new Error(`build the package first (${cli} is missing)`);
  const repository = await mkdtemp(join(tmpdir(), 'tritonserver-ts-python-death-'));
  await writePythonModels(repository, [faultPythonModel()]);
  const child = spawn(
    process.execPath,
    [
      cli,
      `--model-repository=${repository}`,
      '--http-port=0',
      '--allow-grpc=false',
      '--allow-metrics=false',
      `--backend-config=python,python-interpreter=${PYTHON}`,
      '--backend-config=python,execute-timeout-seconds=30',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`CLI did not start:\n${err}`)), 20_000);
      child.stderr.on('data', (chunk: Buffer) => {
        err += chunk.toString();
        const m = /Started HTTPService at [^:\s]+:(\d+)/.exec(err);
        if (m !== null) {
          clearTimeout(timer);
          resolve(`http://127.0.0.1:${m[1]}`);
        }
      });
    });
    const r = await inferJson(url, 'py_fault', {
      inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1], data: [0] }],
    });
    expect(r.status).toBe(200);
    const pid = (outputData(r.body, 'PID') as number[])[0] as number;
    expect(alive(pid)).toBe(true);
    child.kill('SIGKILL');
    // The stub is not our child: it is gone (reaped by init) once it has exited.
    let gone = false;
    for (let i = 0; i < 60 && !gone; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      gone = !alive(pid);
    }
    expect(gone).toBe(true);
  } finally {
    child.kill('SIGKILL');
    await rm(repository, { recursive: true, force: true });
  }
}, 30_000);
