/**
 * The ensemble tests' model repository, generated here: ONNX step models built with
 * `@tritonserver-ts/onnx-builder`, identity-backend step models, and ensembles over them.
 *
 * - `double` (ONNX): `INPUT0` FP32 [4] → `OUTPUT0 = 2·INPUT0`; batches (8).
 * - `plus_one` (ONNX): `X` FP32 [4] → `Y = X + 1`; batches (8).
 * - `add` (ONNX): `A`, `B` FP32 [4] → `SUM = A + B`; batches (8).
 * - `slow_ident` (identity): `INPUT0` FP32 [4] → `OUTPUT0`, 150 ms per execution, dynamic batching.
 * - `chain`: IN → double → plus_one → OUT (= 2·IN + 1).
 * - `diamond`: IN → double → D and IN → plus_one → P at once, then add(D, P) → SUM (= 3·IN + 1);
 *   D is an output too (`DOUBLED`), so a request for `DOUBLED` alone runs one step.
 * - `loose`: like `chain` but its input dims are [-1] (a request with 3 values fails in `double`).
 * - `flat`: like `chain` but not batching, dims [-1, 4]: its rows become the steps' batch.
 * - `batched`: IN → slow_ident → OUT, over the dynamic batcher.
 * - `par`: two independent steps on `slow_ident` (IN → A, IN → B).
 * - `nested`: IN → chain → OUT (an ensemble step).
 * - `bad`: an empty model directory whose config each validation test gives as a load override.
 * - `broken` (its instances fail), `invalid` (its config fails), `cyc_a` ⇄ `cyc_b` (a cycle),
 *   `dec_ident` (a decoupled identity model).
 * @packageDocumentation
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';

function binaryModel(name: string, op: 'Add' | 'Mul', constant: number | undefined): Uint8Array {
  const g = new OnnxGraphBuilder({ name });
  if (constant === undefined) {
    g.addInput('A', 'FLOAT', ['batch', 4]);
    g.addInput('B', 'FLOAT', ['batch', 4]);
    g.addNode(op, ['A', 'B'], ['SUM']);
    g.addOutput('SUM', 'FLOAT', ['batch', 4]);
    return g.toBytes();
  }
  const input = name === 'double' ? 'INPUT0' : 'X';
  const output = name === 'double' ? 'OUTPUT0' : 'Y';
  g.addInput(input, 'FLOAT', ['batch', 4]);
  g.addInitializer('C', { type: 'FLOAT', dims: [1], data: new Float32Array([constant]) });
  g.addNode(op, [input, 'C'], [output]);
  g.addOutput(output, 'FLOAT', ['batch', 4]);
  return g.toBytes();
}

const onnxConfig = (name: string, inputs: string[], outputs: string[]): string => `name: "${name}"
backend: "onnxruntime"
max_batch_size: 8
input [ ${inputs.map((i) => `{ name: "${i}" data_type: TYPE_FP32 dims: [ 4 ] }`).join(', ')} ]
output [ ${outputs.map((o) => `{ name: "${o}" data_type: TYPE_FP32 dims: [ 4 ] }`).join(', ')} ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;

/** Text of an ensemble config (`steps` are pbtxt step bodies). */
export function ensembleConfig(
  name: string,
  io: { inputs: string[]; outputs: string[]; dims?: string; maxBatchSize?: number },
  steps: string[],
): string {
  const dims = io.dims ?? '4';
  return `name: "${name}"
platform: "ensemble"
max_batch_size: ${io.maxBatchSize ?? 8}
input [ ${io.inputs.map((i) => `{ name: "${i}" data_type: TYPE_FP32 dims: [ ${dims} ] }`).join(', ')} ]
output [ ${io.outputs.map((o) => `{ name: "${o}" data_type: TYPE_FP32 dims: [ ${dims} ] }`).join(', ')} ]
ensemble_scheduling { step [ ${steps.join(',\n')} ] }
`;
}

/** One step body: `model_name`, `model_version: -1` and the maps (step tensor → ensemble tensor). */
export function step(model: string, inputs: Record<string, string>, outputs: Record<string, string>): string {
  const map = (kind: string, m: Record<string, string>): string =>
    Object.entries(m)
      .map(([k, v]) => `${kind} { key: "${k}" value: "${v}" }`)
      .join(' ');
  return `{ model_name: "${model}" model_version: -1 ${map('input_map', inputs)} ${map('output_map', outputs)} }`;
}

/** Writes the repository into a fresh temporary directory and returns its path. */
export async function writeEnsembleRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ensemble-test-'));
  const files = new Map<string, string | Uint8Array>();
  files.set('double/config.pbtxt', onnxConfig('double', ['INPUT0'], ['OUTPUT0']));
  files.set('double/1/model.onnx', binaryModel('double', 'Mul', 2));
  files.set('plus_one/config.pbtxt', onnxConfig('plus_one', ['X'], ['Y']));
  files.set('plus_one/1/model.onnx', binaryModel('plus_one', 'Add', 1));
  files.set('add/config.pbtxt', onnxConfig('add', ['A', 'B'], ['SUM']));
  files.set('add/1/model.onnx', binaryModel('add', 'Add', undefined));
  files.set(
    'slow_ident/config.pbtxt',
    `name: "slow_ident"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
dynamic_batching { max_queue_delay_microseconds: 100000 }
parameters { key: "execute_delay_ms" value: { string_value: "150" } }
`,
  );
  files.set('slow_ident/1/.keep', '');
  const chainSteps = [
    step('double', { INPUT0: 'IN' }, { OUTPUT0: 'doubled' }),
    step('plus_one', { X: 'doubled' }, { Y: 'OUT' }),
  ];
  files.set('chain/config.pbtxt', ensembleConfig('chain', { inputs: ['IN'], outputs: ['OUT'] }, chainSteps));
  files.set('chain/1/.keep', '');
  files.set(
    'loose/config.pbtxt',
    ensembleConfig('loose', { inputs: ['IN'], outputs: ['OUT'], dims: '-1' }, chainSteps),
  );
  files.set('loose/1/.keep', '');
  files.set(
    'flat/config.pbtxt',
    ensembleConfig('flat', { inputs: ['IN'], outputs: ['OUT'], dims: '-1, 4', maxBatchSize: 0 }, chainSteps),
  );
  files.set('flat/1/.keep', '');
  files.set(
    'diamond/config.pbtxt',
    ensembleConfig('diamond', { inputs: ['IN'], outputs: ['SUM', 'DOUBLED'] }, [
      step('double', { INPUT0: 'IN' }, { OUTPUT0: 'DOUBLED' }),
      step('plus_one', { X: 'IN' }, { Y: 'plus' }),
      step('add', { A: 'DOUBLED', B: 'plus' }, { SUM: 'SUM' }),
    ]),
  );
  files.set('diamond/1/.keep', '');
  files.set(
    'batched/config.pbtxt',
    ensembleConfig('batched', { inputs: ['IN'], outputs: ['OUT'] }, [
      step('slow_ident', { INPUT0: 'IN' }, { OUTPUT0: 'OUT' }),
    ]),
  );
  files.set('batched/1/.keep', '');
  files.set(
    'par/config.pbtxt',
    ensembleConfig('par', { inputs: ['IN'], outputs: ['A', 'B'] }, [
      step('slow_ident', { INPUT0: 'IN' }, { OUTPUT0: 'A' }),
      step('slow_ident', { INPUT0: 'IN' }, { OUTPUT0: 'B' }),
    ]),
  );
  files.set('par/1/.keep', '');
  files.set(
    'nested/config.pbtxt',
    ensembleConfig('nested', { inputs: ['IN'], outputs: ['OUT'] }, [
      step('chain', { IN: 'IN' }, { OUT: 'OUT' }),
    ]),
  );
  files.set('nested/1/.keep', '');
  files.set('bad/1/.keep', '');
  // A composing model whose instances cannot be created (identity needs as many inputs as outputs).
  files.set(
    'broken/config.pbtxt',
    `name: "broken"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
`,
  );
  files.set('broken/1/.keep', '');
  // A composing model whose config is invalid.
  files.set('invalid/config.pbtxt', 'name: "invalid"\nbackend: "identity"\nmax_batch_size: -1\n');
  files.set('invalid/1/.keep', '');
  // A decoupled model (the identity backend sends its one response either way).
  files.set(
    'dec_ident/config.pbtxt',
    `name: "dec_ident"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
model_transaction_policy { decoupled: true }
`,
  );
  files.set('dec_ident/1/.keep', '');
  // Two ensembles that use each other.
  files.set(
    'cyc_a/config.pbtxt',
    ensembleConfig('cyc_a', { inputs: ['IN'], outputs: ['OUT'] }, [
      step('cyc_b', { IN: 'IN' }, { OUT: 'OUT' }),
    ]),
  );
  files.set('cyc_a/1/.keep', '');
  files.set(
    'cyc_b/config.pbtxt',
    ensembleConfig('cyc_b', { inputs: ['IN'], outputs: ['OUT'] }, [
      step('cyc_a', { IN: 'IN' }, { OUT: 'OUT' }),
    ]),
  );
  files.set('cyc_b/1/.keep', '');
  for (const [path, content] of files) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}
