import { mkdtemp, readFile, rm, stat, symlink, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ModelDefinition, ModelResolution, RepositoryEntry } from '../../src/repository/index.js';
import {
  ModelRepositoryError,
  listRepositoryModels,
  listVersionDirectories,
  modelConfigToJson,
  selectVersions,
} from '../../src/repository/index.js';
import { resolveModel, type ResolveModelOptions } from '../../src/runtime/index.js';
import {
  CLASSIFIER_LABELS,
  TEST_MODELS,
  buildAddSubOnnx,
  writeTestModelRepository,
} from '../../src/testing/index.js';

let root: string;
let repo: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'repo-test-'));
  repo = join(root, 'models');
  const started = performance.now();
  await writeTestModelRepository(repo);
  // Generation must stay fast: every suite writes its own copy.
  expect(performance.now() - started).toBeLessThan(1000);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function entry(name: string, directory = join(repo, name)): RepositoryEntry {
  return { name, directory, repository: repo };
}

async function resolveOk(name: string, options: ResolveModelOptions = {}): Promise<ModelDefinition> {
  const r = await resolveModel(entry(name), options);
  if (!r.ok) throw new Error(`expected ${name} to resolve, got: ${r.reason}`);
  return r.model;
}

async function resolveFail(
  name: string,
  options: ResolveModelOptions = {},
  e = entry(name),
): Promise<ModelResolution & { ok: false }> {
  const r = await resolveModel(e, options);
  if (r.ok) throw new Error(`expected ${name} to fail`);
  return r;
}

describe('repository scan', () => {
  it('lists every generated model directory by name', async () => {
    const entries = await listRepositoryModels([repo]);
    expect(entries.map((e) => e.name)).toEqual(TEST_MODELS.map((m) => m.name).sort());
    expect(entries[0]?.directory).toBe(join(repo, entries[0]?.name ?? ''));
  });

  it('reads a repository given twice (or through a link) once, as Triton', async () => {
    const link = join(root, 'models-link');
    await symlink(repo, link);
    try {
      const entries = await listRepositoryModels([repo, `${repo}/`, link]);
      expect(entries.map((e) => e.name)).toEqual(TEST_MODELS.map((m) => m.name).sort());
    } finally {
      await rm(link);
    }
  });

  it('rejects a missing repository with a typed error', async () => {
    await expect(listRepositoryModels([join(root, 'nope')])).rejects.toMatchObject({
      code: 'REPOSITORY_NOT_FOUND',
    });
    await expect(listRepositoryModels([join(root, 'nope')])).rejects.toBeInstanceOf(ModelRepositoryError);
  });

  it('resolves every READY test model and refuses every UNAVAILABLE one', async () => {
    for (const m of TEST_MODELS) {
      const r = await resolveModel(entry(m.name));
      expect({ name: m.name, ok: r.ok }).toEqual({ name: m.name, ok: m.expectedState === 'READY' });
    }
  });
});

describe('model resolution', () => {
  it('normalizes a config the way Triton reports it', async () => {
    const model = await resolveOk('simple');
    const c = model.config;
    expect(model.backend).toBe('onnxruntime');
    expect(c.platform).toBe('onnxruntime_onnx');
    expect(c.default_model_filename).toBe('model.onnx');
    expect(c.version_policy).toEqual({ latest: { num_versions: 1 } });
    expect(c.optimization?.input_pinned_memory).toEqual({ enable: true });
    expect(c.optimization?.output_pinned_memory).toEqual({ enable: true });
    // No instance_group: one group named after the model, KIND_CPU, count 2 (Triton's ORT CPU default).
    expect(c.instance_group.map((g) => [g.name, g.kind, g.count])).toEqual([['simple', 'KIND_CPU', 2]]);
    expect(model.versions).toEqual([
      {
        version: 1,
        directory: join(repo, 'simple', '1'),
        modelPath: join(repo, 'simple', '1', 'model.onnx'),
        displayPath: 'simple/1/model.onnx',
      },
    ]);
    expect(model.configFile).toBe(join(repo, 'simple', 'config.pbtxt'));
    const json = modelConfigToJson(c);
    expect(json['name']).toBe('simple');
    expect(json['max_batch_size']).toBe(8);
  });

  it('auto-completes a model without config.pbtxt from its ONNX file like the onnxruntime backend', async () => {
    const model = await resolveOk('no_config');
    const c = model.config;
    expect(model.configFile).toBeUndefined();
    expect(c.name).toBe('no_config');
    expect(c.backend).toBe('onnxruntime');
    expect(c.max_batch_size).toBe(4);
    expect(c.dynamic_batching?.preferred_batch_size).toEqual([4]);
    expect(c.input.map((i) => [i.name, i.data_type, i.dims])).toEqual([['INPUT0', 'TYPE_FP32', [4]]]);
    expect(c.output.map((o) => [o.name, o.data_type, o.dims])).toEqual([['OUTPUT0', 'TYPE_FP32', [4]]]);
  });

  it('honours --backend-config default-max-batch-size and disabled auto-complete', async () => {
    expect((await resolveOk('no_config', { defaultMaxBatchSize: 1 })).config).toMatchObject({
      max_batch_size: 1,
    });
    expect(
      (await resolveOk('no_config', { defaultMaxBatchSize: 1 })).config.dynamic_batching,
    ).toBeUndefined();
    const r = await resolveFail('no_config', { autoCompleteConfig: false });
    expect(r.reason).toMatch(/config\.pbtxt not found and auto-complete is disabled/);
  });

  it('loads labels per output', async () => {
    const model = await resolveOk('classifier');
    expect(model.labels.get('probs')).toEqual([...CLASSIFIER_LABELS]);
    expect(model.config.instance_group[0]?.name).toBe('classifier_0');
  });

  it('selects versions by version_policy', async () => {
    expect((await resolveOk('versioned')).versions.map((v) => v.version)).toEqual([1, 2, 3]);
    const dir = join(root, 'version-dirs');
    for (const name of ['1', '10', 'abc', '02', '3']) await mkdir(join(dir, name), { recursive: true });
    await writeFile(join(dir, '7'), 'a file, not a version');
    expect(await listVersionDirectories(dir)).toEqual([1, 3, 10]);
    expect(selectVersions(undefined, [3, 1, 2])).toEqual([3]);
    expect(selectVersions({ latest: { num_versions: 2 } }, [1, 2, 10])).toEqual([2, 10]);
    expect(selectVersions({ specific: { versions: [1, 3, 7] } }, [1, 2, 3])).toEqual([1, 3]);
    expect(selectVersions({ all: {} }, [2, 1])).toEqual([1, 2]);
  });

  it('reports an unsupported backend with a clear reason', async () => {
    const r = await resolveFail('tensorrt_model');
    expect(r.reason).toBe(
      "backend 'tensorrt' is not supported by tritonserver-ts (supported: onnxruntime, identity, python)",
    );
  });

  it('reports a broken config with the file, line and column', async () => {
    const r = await resolveFail('broken_config');
    // Relative to the repository: clients never learn absolute host paths.
    expect(r.reason).toContain(`broken_config/config.pbtxt:3:1:`);
    expect(r.reason).not.toContain(repo);
    expect(r.reason).toContain("has no field named 'max_batch'");
    expect((r.error as { code?: string }).code).toBe('MODEL_CONFIG_PARSE_ERROR');
  });

  it('refuses KIND_GPU groups without a GPU unless the CPU fallback is on', async () => {
    const override = JSON.stringify({
      backend: 'identity',
      instance_group: [{ kind: 'KIND_GPU', count: 2 }],
      input: [{ name: 'INPUT0', data_type: 'TYPE_BF16', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_BF16', dims: [-1] }],
    });
    const r = await resolveFail('identity_bf16', { configOverride: override });
    expect(r.reason).toMatch(
      /instance group identity_bf16_0 of model identity_bf16 has kind KIND_GPU but no GPUs are available/,
    );
    const ok = await resolveOk('identity_bf16', { configOverride: override, gpuFallback: 'cpu' });
    expect(ok.config.instance_group[0]).toMatchObject({ kind: 'KIND_GPU', count: 2 });
  });

  it('uses configs/<name>.pbtxt for --model-config-name and falls back to config.pbtxt', async () => {
    const dir = join(root, 'custom', 'simple');
    await mkdir(join(dir, '1'), { recursive: true });
    await mkdir(join(dir, 'configs'), { recursive: true });
    await writeFile(join(dir, '1', 'model.onnx'), buildAddSubOnnx(true));
    await writeFile(join(dir, 'config.pbtxt'), await readFile(join(repo, 'simple', 'config.pbtxt')));
    const custom = (await readFile(join(repo, 'simple', 'config.pbtxt'), 'utf8')).replace(
      'max_batch_size: 8',
      'max_batch_size: 2',
    );
    await writeFile(join(dir, 'configs', 'small.pbtxt'), custom);
    const e = entry('simple', dir);
    const small = await resolveModel(e, { modelConfigName: 'small' });
    expect(small.ok && small.model.config.max_batch_size).toBe(2);
    expect(small.ok && small.model.configFile).toBe(join(dir, 'configs', 'small.pbtxt'));
    const fallback = await resolveModel(e, { modelConfigName: 'missing' });
    expect(fallback.ok && fallback.model.config.max_batch_size).toBe(8);
  });

  const invalid: [string, object, RegExp][] = [
    [
      'a name mismatch',
      { name: 'other' },
      /unexpected directory name 'simple' for model 'other', directory name must equal model name/,
    ],
    [
      'a negative max_batch_size',
      { max_batch_size: -1 },
      /'max_batch_size' must be non-negative value for simple/,
    ],
    [
      'a zero dim',
      { input: [{ name: 'INPUT0', data_type: 'TYPE_INT32', dims: [0] }] },
      /model input 'INPUT0' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for simple/,
    ],
    [
      'a missing data type',
      { input: [{ name: 'INPUT0', dims: [16] }] },
      /model input 'INPUT0' must specify 'data_type' for simple/,
    ],
    [
      'a preferred batch size above the max',
      { max_batch_size: 4, dynamic_batching: { preferred_batch_size: [8] } },
      /dynamic batching preferred size must be <= max batch size for simple/,
    ],
    [
      'a platform/backend mismatch',
      { platform: 'tensorrt_plan', backend: 'onnxruntime' },
      /unexpected 'platform' and 'backend' pair, got:tensorrt_plan, onnxruntime/,
    ],
    [
      'no version under the policy',
      { version_policy: { specific: { versions: [9] } } },
      /at least one version must be available under the version policy of model 'simple'/,
    ],
  ];
  for (const [what, patch, message] of invalid) {
    it(`rejects ${what} with Triton's message`, async () => {
      const base = {
        backend: 'onnxruntime',
        max_batch_size: 8,
        input: [
          { name: 'INPUT0', data_type: 'TYPE_INT32', dims: [16] },
          { name: 'INPUT1', data_type: 'TYPE_INT32', dims: [16] },
        ],
        output: [
          { name: 'OUTPUT0', data_type: 'TYPE_INT32', dims: [16] },
          { name: 'OUTPUT1', data_type: 'TYPE_INT32', dims: [16] },
        ],
      };
      const r = await resolveFail('simple', { configOverride: { ...base, ...patch } });
      expect(r.reason).toMatch(message);
    });
  }

  it('loads a config override with in-memory files into a temporary directory and cleans it up', async () => {
    const files = new Map([['file:1/model.onnx', buildAddSubOnnx(true)]]);
    const override = JSON.stringify({
      backend: 'onnxruntime',
      max_batch_size: 8,
      input: [
        { name: 'INPUT0', data_type: 'TYPE_INT32', dims: [16] },
        { name: 'INPUT1', data_type: 'TYPE_INT32', dims: [16] },
      ],
      output: [
        { name: 'OUTPUT0', data_type: 'TYPE_INT32', dims: [16] },
        { name: 'OUTPUT1', data_type: 'TYPE_INT32', dims: [16] },
      ],
    });
    const model = await resolveOk('uploaded', { configOverride: override, files });
    expect(model.directory).not.toContain(repo);
    expect((await stat(model.versions[0]?.modelPath ?? '')).size).toBeGreaterThan(0);
    await model.cleanup();
    await expect(stat(model.directory)).rejects.toThrow();
  });

  it('refuses files without a config override and paths that escape the model directory', async () => {
    const files = { 'file:1/model.onnx': new Uint8Array([1]) };
    expect((await resolveFail('x', { files })).reason).toBe(
      "Load parameter 'config' must be specified for model file override",
    );
    const escape = await resolveFail('x', {
      configOverride: '{}',
      files: { 'file:../../evil': new Uint8Array([1]) },
    });
    expect(escape.reason).toBe(
      "Invalid file parameter 'file:../../evil' with normalized path '../../evil' must stay within model directory.",
    );
  });
});
