import { describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs } from '../../src/cli-args.js';
import { FrameReader, PayloadBuilder, decodeTensors, encodeFrame } from '../../src/runtime/python/frames.js';
import { findPythonInterpreter } from '../../src/runtime/python/settings.js';

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

  it('finds an interpreter that imports numpy (on this machine /usr/bin/python3; PATH python3 has none)', async () => {
    const found = await findPythonInterpreter({});
    expect(found.ok).toBe(true);
    const missing = await findPythonInterpreter({ interpreter: '/bin/true-python-missing' });
    expect(missing).toEqual({
      ok: false,
      reason:
        "the python backend needs a Python 3 interpreter with numpy: '/bin/true-python-missing': not found",
    });
  });

  it('frames tensors as raw bytes (BYTES length-prefixed), split across chunks', () => {
    const payload = new PayloadBuilder();
    const refs = [
      payload.add({ name: 'A', datatype: 'FP32', shape: [2, 2], data: Float32Array.from([1, 2, 3, 4]) }),
      payload.add({ name: 'S', datatype: 'BYTES', shape: [2], data: [Buffer.from('hi'), Buffer.from('')] }),
    ];
    expect(refs[1]).toEqual({ name: 'S', datatype: 'BYTES', shape: [2], offset: 16, size: 10 });
    const bytes = Buffer.concat(encodeFrame({ type: 't', refs }, payload.chunks));
    const reader = new FrameReader();
    expect(reader.push(bytes.subarray(0, 3))).toEqual([]);
    const [frame] = reader.push(bytes.subarray(3));
    expect(frame?.header.type).toBe('t');
    const [a, s] = decodeTensors(frame?.header.refs, frame?.payload ?? new Uint8Array(), 'tensor');
    expect(Array.from(a?.data as Float32Array)).toEqual([1, 2, 3, 4]);
    expect((s?.data as Uint8Array[]).map((e) => Buffer.from(e).toString())).toEqual(['hi', '']);
  });
});
