import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BytesList } from '@tritonserver-ts/protocol';
import { describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs } from '../../src/cli-args.js';
import { FrameReader, PayloadBuilder, decodeTensors, encodeFrame } from '../../src/runtime/python/frames.js';
import { findPythonInterpreter } from '../../src/runtime/python/settings.js';
import { addSubPythonModel } from '../../src/testing/index.js';
import { startPythonServer } from './helpers.js';

/** A fake interpreter: a shell script that fails like a Python without numpy (or, `works`, prints a version). */
async function fakeInterpreter(dir: string, works: boolean): Promise<string> {
  const path = join(dir, 'python3');
  const body = works
    ? 'printf 9.9.9\n'
    : 'echo "ModuleNotFoundError: No module named \'numpy\'" >&2\nexit 1\n';
  await writeFile(path, `#!/bin/sh\n${body}`);
  await chmod(path, 0o755);
  return path;
}

const base = ['--model-repository=/tmp/none'];

describe('python backend settings', () => {
  it('parses --backend-config=python,… into the server options', () => {
    const o = parseArgs([
      ...base,
      '--backend-config=python,python-interpreter=/usr/bin/python3',
      '--backend-config=python,execute-timeout-seconds=12.5',
      '--backend-config=python,stub-timeout-seconds=5',
      '--backend-config=python,shm-default-byte-size=1048576',
    ]);
    expect(o.server.python).toEqual({
      interpreter: '/usr/bin/python3',
      executeTimeoutSeconds: 12.5,
      stubTimeoutSeconds: 5,
    });
    expect(o.warnings).toContain(
      '--backend-config=python,shm-default-byte-size has no effect in tritonserver-ts (stubs exchange tensors over pipes, not a shared-memory pool)',
    );
  });

  it('refuses unknown keys, bad values, other backends and malformed values', () => {
    const fails = (flag: string): string => {
      try {
        parseArgs([...base, flag]);
      } catch (error) {
        expect(error).toBeInstanceOf(CliUsageError);
        return (error as Error).message;
      }
      throw new Error(`${flag} was accepted`);
    };
    expect(fails('--backend-config=python,no-such-key=1')).toMatch(
      /^unknown --backend-config key 'no-such-key' for backend 'python' \(supported: python-interpreter, /,
    );
    expect(fails('--backend-config=python,execute-timeout-seconds=soon')).toBe(
      "invalid value 'soon' for --backend-config=python,execute-timeout-seconds: expected a number of seconds >= 0",
    );
    expect(fails('--backend-config=tensorrt,x=1')).toBe(
      "--backend-config for backend 'tensorrt' is not supported by tritonserver-ts (supported: python)",
    );
    expect(fails('--backend-config=python')).toBe(
      "invalid --backend-config value 'python': expected <backend>,<setting>=<value>",
    );
  });

  it('finds an interpreter that imports numpy (on this machine both PATH python3 and /usr/bin/python3 do; only /usr/bin/python3 has Pillow)', async () => {
    const found = await findPythonInterpreter({});
    expect(found.ok).toBe(true);
    const missing = await findPythonInterpreter({ interpreter: '/bin/true-python-missing' });
    expect(missing).toEqual({
      ok: false,
      reason:
        "the python backend needs a Python 3 interpreter with numpy: '/bin/true-python-missing': not found",
    });
  });

  it('caches a successful interpreter probe, not a failed one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-fake-python-'));
    try {
      const path = await fakeInterpreter(dir, false);
      const first = await findPythonInterpreter({ interpreter: path });
      expect(first).toEqual({
        ok: false,
        reason: `the python backend needs a Python 3 interpreter with numpy: '${path}': cannot import numpy`,
      });
      // numpy gets installed: the next look-up probes again and finds it.
      await fakeInterpreter(dir, true);
      expect(await findPythonInterpreter({ interpreter: path })).toEqual({
        ok: true,
        path,
        numpyVersion: '9.9.9',
      });
      // The success is cached: breaking the interpreter afterwards is not noticed.
      await fakeInterpreter(dir, false);
      expect(await findPythonInterpreter({ interpreter: path })).toEqual({
        ok: true,
        path,
        numpyVersion: '9.9.9',
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('lists a python model UNAVAILABLE, naming numpy, when the interpreter cannot import numpy', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-fake-python-'));
    const interpreter = await fakeInterpreter(dir, false);
    const server = await startPythonServer([addSubPythonModel()], { python: { interpreter } });
    try {
      const r = await fetch(`${server.url}/v2/repository/index`, { method: 'POST' });
      const entry = ((await r.json()) as { name: string; state?: string; reason?: string }[]).find(
        (e) => e.name === 'py_add',
      );
      expect(entry?.state).toBe('UNAVAILABLE');
      expect(entry?.reason).toContain(
        `the python backend needs a Python 3 interpreter with numpy: '${interpreter}': cannot import numpy`,
      );
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('frames tensors as raw bytes (BYTES length-prefixed), split across chunks', () => {
    const payload = new PayloadBuilder();
    const refs = [
      payload.add({ name: 'A', datatype: 'FP32', shape: [2, 2], data: Float32Array.from([1, 2, 3, 4]) }),
      payload.add({ name: 'S', datatype: 'BYTES', shape: [2], data: BytesList.from(['hi', '']) }),
    ];
    expect(refs[1]).toEqual({ name: 'S', datatype: 'BYTES', shape: [2], offset: 16, size: 10 });
    const bytes = Buffer.concat(encodeFrame({ type: 't', refs }, payload.chunks));
    const reader = new FrameReader();
    expect(reader.push(bytes.subarray(0, 3))).toEqual([]);
    const [frame] = reader.push(bytes.subarray(3));
    expect(frame?.header.type).toBe('t');
    const [a, s] = decodeTensors(frame?.header.refs, frame?.payload ?? new Uint8Array(), 'tensor');
    expect(Array.from(a?.data as Float32Array)).toEqual([1, 2, 3, 4]);
    expect((s?.data as BytesList).toStrings()).toEqual(['hi', '']);
  });
});
