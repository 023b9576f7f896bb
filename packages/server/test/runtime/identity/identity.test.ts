import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BytesList, type PackedTensor } from '@tritonserver-ts/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ModelDefinition } from '../../../src/repository/index.js';
import { createModelConfig } from '../../../src/repository/index.js';
import { resolveModel, type ResolveModelOptions } from '../../../src/runtime/index.js';
import type { RuntimeModelInstance } from '../../../src/runtime/index.js';
import { BackendError, createInstances, identityPairs } from '../../../src/runtime/index.js';
import { SLOW_IDENTITY_DELAY_MS, writeTestModelRepository } from '../../../src/testing/index.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'identity-test-'));
  await writeTestModelRepository(root, { only: ['identity_bf16', 'slow_identity'] });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function definition(name: string, options: ResolveModelOptions = {}): Promise<ModelDefinition> {
  const r = await resolveModel({ name, directory: join(root, name), repository: root }, options);
  if (!r.ok) throw new Error(r.reason);
  return r.model;
}

describe('identity backend', () => {
  it('copies BF16 bits unchanged and does not alias the input', async () => {
    const [inst] = await createInstances(await definition('identity_bf16'), 1);
    const data = Uint16Array.of(0x3f80, 0xc000, 0x7f80, 0x0001);
    const out = await (inst as RuntimeModelInstance).execute(
      new Map<string, PackedTensor>([['INPUT0', { name: 'INPUT0', datatype: 'BF16', shape: [2, 2], data }]]),
    );
    const o = out.outputs.get('OUTPUT0');
    expect(o).toMatchObject({ name: 'OUTPUT0', datatype: 'BF16', shape: [2, 2] });
    expect(Array.from(o?.data as Uint16Array)).toEqual([0x3f80, 0xc000, 0x7f80, 0x0001]);
    data[0] = 0;
    expect((o?.data as Uint16Array)[0]).toBe(0x3f80);
    expect(inst?.kind).toBe('KIND_CPU');
    expect(inst?.name).toBe('identity_bf16_0');
  });

  it('copies BYTES elements', async () => {
    const override = {
      backend: 'identity',
      input: [{ name: 'INPUT0', data_type: 'TYPE_STRING', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_STRING', dims: [-1] }],
    };
    const [inst] = await createInstances(await definition('identity_bf16', { configOverride: override }), 1);
    const bytes = BytesList.from([Uint8Array.of(0xff, 0), new Uint8Array()]);
    const out = await (inst as RuntimeModelInstance).execute(
      new Map<string, PackedTensor>([
        ['INPUT0', { name: 'INPUT0', datatype: 'BYTES', shape: [2], data: bytes }],
      ]),
    );
    expect((out.outputs.get('OUTPUT0')?.data as BytesList).toArray().map((b) => Array.from(b))).toEqual([
      [0xff, 0],
      [],
    ]);
  });

  it('spends execute_delay_ms in compute_infer', async () => {
    const [inst] = await createInstances(await definition('slow_identity'), 1);
    const started = performance.now();
    const out = await (inst as RuntimeModelInstance).execute(
      new Map<string, PackedTensor>([
        ['INPUT0', { name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: Float32Array.of(3) }],
      ]),
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(SLOW_IDENTITY_DELAY_MS - 2);
    expect(out.timings.computeInferNs).toBeGreaterThanOrEqual(BigInt((SLOW_IDENTITY_DELAY_MS - 2) * 1e6));
  });

  it('enforces the identity backend config rules', () => {
    const io = (inputs: object[], outputs: object[]) =>
      identityPairs(createModelConfig({ name: 'm', input: inputs, output: outputs }));
    expect(
      io(
        [
          { name: 'INPUT1', data_type: 'TYPE_FP32', dims: [2] },
          { name: 'INPUT0', data_type: 'TYPE_INT8', dims: [1] },
        ],
        [
          { name: 'OUTPUT0', data_type: 'TYPE_INT8', dims: [1] },
          { name: 'OUTPUT1', data_type: 'TYPE_FP32', dims: [2] },
        ],
      ),
    ).toEqual([
      ['INPUT0', 'OUTPUT0'],
      ['INPUT1', 'OUTPUT1'],
    ]);
    const rule = (inputs: object[], outputs: object[], message: RegExp) => {
      expect(() => io(inputs, outputs)).toThrow(BackendError);
      expect(() => io(inputs, outputs)).toThrow(message);
    };
    rule([{ name: 'INPUT0' }], [], /equal input\/output pairs/);
    rule([{ name: 'X' }], [{ name: 'OUTPUT0' }], /INPUT<index> pattern, got 'X'/);
    rule(
      [{ name: 'INPUT0', data_type: 'TYPE_FP32' }],
      [{ name: 'OUTPUT0', data_type: 'TYPE_FP16' }],
      /datatype to match, got TYPE_FP32 and TYPE_FP16/,
    );
    rule(
      [{ name: 'INPUT0', dims: [2] }],
      [{ name: 'OUTPUT0', dims: [3] }],
      /shape to match, got \[2\] and \[3\]/,
    );
    rule([{ name: 'INPUT0' }], [{ name: 'OUTPUT1' }], /indices to match/);
  });
});
