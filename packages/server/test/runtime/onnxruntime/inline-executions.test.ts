/**
 * Tiny executions of worker-hosted onnxruntime instances skip the worker hop (issue 11): the inline
 * policy's decisions, and a real `simple` instance that moves its small executions to a main-thread
 * session once its worker's compute times proved them short, with correct outputs either way.
 * Where an execution ran is read from `lastExecution`, which only worker executions update.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BytesList, type PackedTensor } from '@tritonserver-ts/protocol';

import { listRepositoryModels } from '../../../src/repository/index.js';
import type { ModelInstanceGroup } from '../../../src/repository/model-config.js';
import type { ModelDefinition } from '../../../src/repository/types.js';
import {
  INLINE_COMPUTE_MAX_NS,
  INLINE_WINDOW,
  InlinePolicy,
  inputBytes,
} from '../../../src/runtime/onnxruntime/inline-policy.js';
import type { WorkerModelInstance } from '../../../src/runtime/onnxruntime/worker-instances.js';
import { createWorkerInstances, resolveModel } from '../../../src/runtime/index.js';
import { writeTestModelRepository } from '../../../src/testing/index.js';

const SHORT = INLINE_COMPUTE_MAX_NS / 2n;
const LONG = INLINE_COMPUTE_MAX_NS * 2n;

describe('InlinePolicy', () => {
  it('allows inline runs up to the largest short size once a window of worker executions has a short median', () => {
    const policy = new InlinePolicy();
    for (let i = 0; i < INLINE_WINDOW - 1; i++) policy.record(128, SHORT);
    expect(policy.proven).toBe(false);
    expect(policy.allows(128)).toBe(false);
    policy.record(64, SHORT);
    expect(policy.proven).toBe(true);
    expect(policy.allows(128)).toBe(true);
    expect(policy.allows(129)).toBe(false);
  });

  it('does not qualify a window whose median is long, and never lowers a proven size', () => {
    const policy = new InlinePolicy();
    for (let i = 0; i < INLINE_WINDOW; i++) policy.record(256, i < INLINE_WINDOW / 2 - 1 ? SHORT : LONG);
    expect(policy.proven).toBe(false);
    for (let i = 0; i < INLINE_WINDOW; i++) policy.record(128, SHORT);
    expect(policy.allows(128)).toBe(true);
    // Larger executions keep going to the worker; a long window there leaves the bound as it was.
    for (let i = 0; i < INLINE_WINDOW; i++) policy.record(1024, LONG);
    expect(policy.allows(128)).toBe(true);
    expect(policy.allows(1024)).toBe(false);
    // A short window of larger executions raises it.
    for (let i = 0; i < INLINE_WINDOW; i++) policy.record(512, SHORT);
    expect(policy.allows(512)).toBe(true);
  });

  it('allows nothing once disabled', () => {
    const policy = new InlinePolicy();
    for (let i = 0; i < INLINE_WINDOW; i++) policy.record(128, SHORT);
    policy.disable();
    expect(policy.allows(128)).toBe(false);
    for (let i = 0; i < INLINE_WINDOW; i++) policy.record(128, SHORT);
    expect(policy.proven).toBe(false);
  });

  it('counts input bytes of fixed-size and BYTES tensors (BYTES: serialized, 4 bytes per element too)', () => {
    expect(
      inputBytes(
        new Map([
          ['A', { data: new Int32Array(16) }],
          ['B', { data: BytesList.from([new Uint8Array(3), new Uint8Array(5)]) }],
        ]),
      ),
    ).toBe(64 + 4 + 3 + 4 + 5);
  });
});

let dir: string;
let simple: ModelDefinition;

function inputs(rows: number, base: number): Map<string, PackedTensor> {
  const a = new Int32Array(rows * 16).map((_, i) => base + i);
  const b = new Int32Array(rows * 16).fill(1);
  return new Map<string, PackedTensor>([
    ['INPUT0', { name: 'INPUT0', datatype: 'INT32', shape: [rows, 16], data: a }],
    ['INPUT1', { name: 'INPUT1', datatype: 'INT32', shape: [rows, 16], data: b }],
  ]);
}

async function executeChecked(instance: WorkerModelInstance, rows: number, base: number): Promise<void> {
  const result = await instance.execute(inputs(rows, base));
  expect([...(result.outputs.get('OUTPUT0')?.data as Int32Array)]).toEqual(
    Array.from({ length: rows * 16 }, (_, i) => base + i + 1),
  );
  expect([...(result.outputs.get('OUTPUT1')?.data as Int32Array)]).toEqual(
    Array.from({ length: rows * 16 }, (_, i) => base + i - 1),
  );
  expect(result.outputs.get('OUTPUT0')?.shape).toEqual([rows, 16]);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'inline-exec-'));
  await writeTestModelRepository(dir, { only: ['simple'] });
  const [entry] = await listRepositoryModels([dir]);
  if (entry === undefined) throw new Error('no test model written');
  const resolved = await resolveModel(entry);
  if (!resolved.ok) throw resolved.error;
  simple = {
    ...resolved.model,
    config: {
      ...resolved.model.config,
      instance_group: [
        { ...(resolved.model.config.instance_group[0] as ModelInstanceGroup), count: 1, kind: 'KIND_CPU' },
      ],
    },
  };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('worker instances with inline executions', () => {
  it('runs proven-short sizes on the main thread and larger ones in the worker, with correct outputs', async () => {
    // A bound no execution misses, so the test does not depend on the host's speed.
    const [instance] = (await createWorkerInstances(simple, 1, {}, { inlineComputeMaxNs: 10n ** 10n })) as [
      WorkerModelInstance,
    ];
    try {
      for (let i = 0; i < INLINE_WINDOW; i++) await executeChecked(instance, 1, i * 100);
      // The main-thread session is created in the background; worker executions go on meanwhile.
      let inline = false;
      for (let i = 0; i < 500 && !inline; i++) {
        const before = instance.lastExecution;
        await executeChecked(instance, 1, 7000 + i);
        inline = instance.lastExecution === before;
      }
      expect(inline).toBe(true);
      const before = instance.lastExecution;
      for (let i = 0; i < 10; i++) await executeChecked(instance, 1, 9000 + i);
      expect(instance.lastExecution).toBe(before);
      // Two rows are more bytes than any proven-short execution: to the worker.
      await executeChecked(instance, 2, 500);
      expect(instance.lastExecution).not.toBe(before);
      // The worker test hook sends the next execution to the worker again.
      instance.crashWorkerForTesting();
      await expect(instance.execute(inputs(1, 0))).rejects.toMatchObject({ code: 'EXECUTION_FAILED' });
    } finally {
      await instance.dispose();
    }
  });

  it('keeps every execution in the worker with inline: false', async () => {
    const [instance] = (await createWorkerInstances(
      simple,
      1,
      {},
      { inline: false, inlineComputeMaxNs: 10n ** 10n },
    )) as [WorkerModelInstance];
    try {
      for (let i = 0; i < INLINE_WINDOW * 3; i++) {
        const before = instance.lastExecution;
        await executeChecked(instance, 1, i);
        expect(instance.lastExecution).not.toBe(before);
      }
    } finally {
      await instance.dispose();
    }
  });
});
