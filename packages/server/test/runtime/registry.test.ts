import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { PackedTensor } from '@tritonserver-ts/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ModelDefinition } from '../../src/repository/index.js';
import type { BackendInstanceSpec } from '../../src/runtime/index.js';
import {
  BackendError,
  BackendRegistry,
  SUPPORTED_BACKENDS,
  builtinBackends,
  createInstances,
  resolveModel,
} from '../../src/runtime/index.js';
import { writeTestModelRepository } from '../../src/testing/index.js';

let root: string;
let identity: ModelDefinition;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'registry-test-'));
  await writeTestModelRepository(root, { only: ['identity_bf16'] });
  const r = await resolveModel({
    name: 'identity_bf16',
    directory: join(root, 'identity_bf16'),
    repository: root,
  });
  if (!r.ok) throw new Error(r.reason);
  identity = r.model;
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function backendError(promise: Promise<unknown>): Promise<BackendError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BackendError);
  return err as BackendError;
}

describe('backend registry', () => {
  it('registers exactly the backends the repository checks early, in the same order', () => {
    expect(builtinBackends.names()).toEqual([...SUPPORTED_BACKENDS]);
    expect(builtinBackends.get('onnxruntime')).toBeTypeOf('function');
    expect(builtinBackends.get('python')).toBeTypeOf('function');
    expect(builtinBackends.get('tensorrt')).toBeUndefined();
  });

  it('refuses an empty or duplicate name', () => {
    const registry = new BackendRegistry();
    const factory = () => Promise.reject(new Error('unused'));
    registry.register('x', factory);
    expect(() => registry.register('x', factory)).toThrow("backend 'x' is already registered");
    expect(() => registry.register('', factory)).toThrow('a backend needs a name');
  });

  it('creates instances through the factory registered for the model backend', async () => {
    const specs: BackendInstanceSpec[] = [];
    const builtinIdentity = builtinBackends.get('identity');
    if (builtinIdentity === undefined) throw new Error('identity is not registered');
    const registry = new BackendRegistry().register('identity', (spec, options) => {
      specs.push(spec);
      return builtinIdentity(spec, options);
    });
    const model = {
      ...identity,
      config: {
        ...identity.config,
        instance_group: [
          { ...identity.config.instance_group[0]!, name: 'g', count: 2, kind: 'KIND_CPU' as const },
        ],
      },
    };
    const list = await createInstances(model, 1, { backends: registry });
    try {
      expect(specs.map((s) => [s.name, s.groupName, s.index, s.version, s.modelVersion.version])).toEqual([
        ['g_0', 'g', 0, 1, 1],
        ['g_1', 'g', 1, 1, 1],
      ]);
      const data = Uint16Array.of(0x3f80, 0xc000, 0x7f80, 0x0001);
      const out = await list[1]!.execute(
        new Map<string, PackedTensor>([
          ['INPUT0', { name: 'INPUT0', datatype: 'BF16', shape: [2, 2], data }],
        ]),
      );
      expect(Array.from(out.outputs.get('OUTPUT0')?.data as Uint16Array)).toEqual([
        0x3f80, 0xc000, 0x7f80, 0x0001,
      ]);
    } finally {
      await Promise.all(list.map((i) => i.dispose()));
    }
  });

  it('keeps the UNAVAILABLE reasons for a backend or platform it cannot run', async () => {
    const tensorrt = { ...identity, config: { ...identity.config, backend: 'tensorrt' } };
    const err = await backendError(createInstances(tensorrt, 1));
    expect(err.code).toBe('BACKEND_UNAVAILABLE');
    expect(err.message).toBe(
      "backend 'tensorrt' is not supported by tritonserver-ts (supported: onnxruntime, identity, python)",
    );
    const ensemble = { ...identity, config: { ...identity.config, backend: '', platform: 'ensemble' } };
    const err2 = await backendError(createInstances(ensemble, 1));
    expect(err2.code).toBe('BACKEND_UNAVAILABLE');
    expect(err2.message).toBe(
      "platform 'ensemble' is not supported by tritonserver-ts (supported: onnxruntime, identity, python)",
    );
  });

  it('answers UNAVAILABLE when the given registry lacks the model backend', async () => {
    const onlyOnnx = new BackendRegistry().register('onnxruntime', () => Promise.reject(new Error('unused')));
    const err = await backendError(createInstances(identity, 1, { backends: onlyOnnx }));
    expect(err.code).toBe('BACKEND_UNAVAILABLE');
    expect(err.message).toBe(
      "backend 'identity' is not supported by tritonserver-ts (supported: onnxruntime)",
    );
  });
});
