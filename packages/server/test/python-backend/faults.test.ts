import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { faultPythonModel, finalizePythonModel } from '../../src/testing/index.js';
import { alive, inferJson, outputData, startPythonServer, type PythonTestServer } from './helpers.js';

const int = (v: number) => ({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1], data: [v] }] });

/** Waits up to 2 s for `pid` to be gone (a killed process is reaped asynchronously). */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 40 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

async function stubPid(url: string): Promise<number> {
  const r = await inferJson(url, 'py_fault', int(0));
  expect(r.status).toBe(200);
  return (outputData(r.body, 'PID') as number[])[0] as number;
}

describe('python backend: stub faults, finalize and process cleanup', () => {
  let server: PythonTestServer;
  let marker: string;
  beforeAll(async () => {
    marker = join(process.env.TMPDIR ?? '/tmp', `py-finalize-${process.pid}-${Date.now()}.txt`);
    server = await startPythonServer([faultPythonModel(), finalizePythonModel(marker)], {
      modelControlMode: 'explicit',
      loadModels: ['*'],
      python: { executeTimeoutSeconds: 1.5 },
    });
  }, 30_000);
  afterAll(async () => {
    await server.close();
  });

  it('fails the requests of a stub that exits in execute, and restarts it', async () => {
    const before = await stubPid(server.url);
    const crashed = await inferJson(server.url, 'py_fault', int(1));
    expect(crashed.status).toBe(500);
    expect(crashed.body.error).toBe(
      "Failed to process the request(s) for model instance 'py_fault_0_0', message: Stub process 'py_fault_0_0' is not healthy: it exited (exit code 3).",
    );
    const after = await stubPid(server.url);
    expect(after).not.toBe(before);
    expect(await gone(before)).toBe(true);
    expect(
      server.logs.some((l) => l.includes("python stub of model instance 'py_fault_0_0' is being restarted")),
    ).toBe(true);
  });

  it('kills a stub whose execute runs past the execute timeout, fails its request and restarts it', async () => {
    const before = await stubPid(server.url);
    const started = Date.now();
    const hung = await inferJson(server.url, 'py_fault', int(2));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(hung.status).toBe(500);
    expect(hung.body.error).toContain('execute did not finish within 1.5 s');
    expect(await gone(before)).toBe(true);
    const after = await stubPid(server.url);
    expect(after).not.toBe(before);
  });

  it('runs finalize on unload and leaves no stub process behind', async () => {
    const pid = await stubPid(server.url);
    const unload = await fetch(`${server.url}/v2/repository/models/py_finalize/unload`, { method: 'POST' });
    expect(unload.status).toBe(200);
    expect(await readFile(marker, 'utf8')).toBe('finalized py_finalize\n');
    // The server's close (in afterAll of a second server below) is checked for the fault model here.
    await server.close();
    expect(await gone(pid)).toBe(true);
    server = await startPythonServer([finalizePythonModel(marker)]);
    await server.close();
    expect(await readFile(marker, 'utf8')).toBe('finalized py_finalize\nfinalized py_finalize\n');
    server = await startPythonServer([]);
  }, 30_000);
});
