/**
 * The repository of the ensemble tests modelled on Triton's own QA (`qa/L0_simple_ensemble`, the
 * ensemble legs of `qa/L0_infer`), generated here (never copied): ensembles over the `classifier`
 * test model, an identity model, and Python models written by `src/testing`.
 *
 * - `cls_ens`: FP32 IN [5] → `classifier` → OUT, whose `label_filename` (`ens_labels.txt`, E0…E4)
 *   is the ensemble's own; `cls_plain` is the same ensemble without one; `cls_flat` the same not
 *   batching (max_batch_size 0, dims [1, 5]).
 * - `ident4` (identity, FP32 [4], batching) and `rs_ens`: IN dims [2, 2] reshape [4] → `ident4` →
 *   OUT dims [2, 2] reshape [4].
 * - `py_partial` (Python): FP32 INPUT0, INPUT1 [4] → OUTPUT0 = sum; OUTPUT1 is declared and never
 *   produced (Triton's `partial_add_sub`); `partial_ens` asks both of it.
 * - `py_add` (`addSubPythonModel`, echoes id | correlation id | flags | parameters in INFO);
 *   `seq_ens` (A, B → INFO) over it and `seq_nested` (an ensemble over `seq_ens`).
 * - `py_dec` (`decoupledPythonModel`: IN = n → n responses OUT = i) and `slow_i32` (identity,
 *   INT32 [1], 4 instances, 150 ms per execution): `dec_ens` IN → py_dec → mid → slow_i32 → OUT;
 *   `dec_lim1` the same with `max_inflight_requests: 1`.
 * - `lim_neg`, `lim_str`, `lim_big`: `dec_ens` with `max_inflight_requests` -5, "invalid_value" and
 *   12345678901 (Triton's invalid values: the config does not parse).
 * @packageDocumentation
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  addSubPythonModel,
  decoupledPythonModel,
  writePythonModels,
  writeTestModelRepository,
  type GeneratedPythonModel,
} from '../../src/testing/index.js';
import { step } from './fixtures.js';

/** Labels of `cls_ens` (line N = class N). */
export const ENSEMBLE_LABELS = ['E0', 'E1', 'E2', 'E3', 'E4'] as const;

/** Execution time of `slow_i32` (ms). */
export const SLOW_I32_DELAY_MS = 150;

/** Ensembles whose `max_inflight_requests` does not parse, with the value written. */
export const INVALID_LIMITS = [
  ['lim_neg', '-5'],
  ['lim_str', '"invalid_value"'],
  ['lim_big', '12345678901'],
] as const;

/** Triton's `partial_add_sub`, written here: OUTPUT1 is declared but never sent. */
function partialModel(): GeneratedPythonModel {
  return {
    name: 'py_partial',
    files: {
      'config.pbtxt': `name: "py_partial"
backend: "python"
max_batch_size: 0
input [
  { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] },
  { name: "INPUT1" data_type: TYPE_FP32 dims: [ 4 ] }
]
output [
  { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] },
  { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 4 ] }
]
instance_group [ { kind: KIND_CPU count: 1 } ]
`,
      '1/model.py': `import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            b = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy()
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", a + b)]))
        return responses
`,
    },
  };
}

/** An ensemble config from its io lines and steps. */
function ensemble(
  name: string,
  maxBatchSize: number,
  inputs: string,
  outputs: string,
  steps: string[],
  extra = '',
): string {
  return `name: "${name}"
platform: "ensemble"
max_batch_size: ${maxBatchSize}
input [ ${inputs} ]
output [ ${outputs} ]
ensemble_scheduling { ${extra}step [ ${steps.join(',\n')} ] }
`;
}

/** The config of a decoupled ensemble over `py_dec` → `slow_i32` (`extra`: scheduling fields). */
export function decoupledEnsembleConfig(name: string, extra = ''): string {
  return ensemble(
    name,
    0,
    '{ name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }',
    '{ name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }',
    [step('py_dec', { IN: 'IN' }, { OUT: 'mid' }), step('slow_i32', { INPUT0: 'mid' }, { OUTPUT0: 'OUT' })],
    extra,
  );
}

/** Writes the repository into a fresh temporary directory and returns its path. */
export async function writeQaEnsembleRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ensemble-qa-'));
  await writeTestModelRepository(root, { only: ['classifier'] });
  await writePythonModels(root, [
    addSubPythonModel('py_add'),
    decoupledPythonModel('py_dec'),
    partialModel(),
  ]);
  const files = new Map<string, string>();
  const clsStep = [step('classifier', { input: 'IN' }, { probs: 'OUT' })];
  files.set(
    'cls_ens/config.pbtxt',
    ensemble(
      'cls_ens',
      8,
      '{ name: "IN" data_type: TYPE_FP32 dims: [ 5 ] }',
      '{ name: "OUT" data_type: TYPE_FP32 dims: [ 5 ] label_filename: "ens_labels.txt" }',
      clsStep,
    ),
  );
  files.set('cls_ens/ens_labels.txt', `${ENSEMBLE_LABELS.join('\n')}\n`);
  files.set(
    'cls_plain/config.pbtxt',
    ensemble(
      'cls_plain',
      8,
      '{ name: "IN" data_type: TYPE_FP32 dims: [ 5 ] }',
      '{ name: "OUT" data_type: TYPE_FP32 dims: [ 5 ] }',
      clsStep,
    ),
  );
  files.set(
    'cls_flat/config.pbtxt',
    ensemble(
      'cls_flat',
      0,
      '{ name: "IN" data_type: TYPE_FP32 dims: [ 1, 5 ] }',
      '{ name: "OUT" data_type: TYPE_FP32 dims: [ 1, 5 ] label_filename: "ens_labels.txt" }',
      clsStep,
    ),
  );
  files.set('cls_flat/ens_labels.txt', `${ENSEMBLE_LABELS.join('\n')}\n`);
  files.set(
    'ident4/config.pbtxt',
    `name: "ident4"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
`,
  );
  files.set(
    'rs_ens/config.pbtxt',
    ensemble(
      'rs_ens',
      8,
      '{ name: "IN" data_type: TYPE_FP32 dims: [ 2, 2 ] reshape: { shape: [ 4 ] } }',
      '{ name: "OUT" data_type: TYPE_FP32 dims: [ 2, 2 ] reshape: { shape: [ 4 ] } }',
      [step('ident4', { INPUT0: 'IN' }, { OUTPUT0: 'OUT' })],
    ),
  );
  files.set(
    'partial_ens/config.pbtxt',
    ensemble(
      'partial_ens',
      0,
      '{ name: "A" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "B" data_type: TYPE_FP32 dims: [ 4 ] }',
      '{ name: "SUM" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "DIFF" data_type: TYPE_FP32 dims: [ 4 ] }',
      [step('py_partial', { INPUT0: 'A', INPUT1: 'B' }, { OUTPUT0: 'SUM', OUTPUT1: 'DIFF' })],
    ),
  );
  const seqIo = [
    '{ name: "A" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "B" data_type: TYPE_FP32 dims: [ 4 ] }',
    '{ name: "INFO" data_type: TYPE_STRING dims: [ 1 ] }',
  ] as const;
  files.set(
    'seq_ens/config.pbtxt',
    ensemble('seq_ens', 0, ...seqIo, [step('py_add', { INPUT0: 'A', INPUT1: 'B' }, { INFO: 'INFO' })]),
  );
  files.set(
    'seq_nested/config.pbtxt',
    ensemble('seq_nested', 0, ...seqIo, [step('seq_ens', { A: 'A', B: 'B' }, { INFO: 'INFO' })]),
  );
  files.set(
    'slow_i32/config.pbtxt',
    `name: "slow_i32"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 4 } ]
parameters { key: "execute_delay_ms" value: { string_value: "${SLOW_I32_DELAY_MS}" } }
`,
  );
  files.set('dec_ens/config.pbtxt', decoupledEnsembleConfig('dec_ens'));
  files.set('dec_lim1/config.pbtxt', decoupledEnsembleConfig('dec_lim1', 'max_inflight_requests: 1\n'));
  for (const [name, value] of INVALID_LIMITS) {
    files.set(`${name}/config.pbtxt`, decoupledEnsembleConfig(name, `max_inflight_requests: ${value}\n`));
  }
  for (const name of [
    'cls_ens',
    'cls_plain',
    'cls_flat',
    'ident4',
    'rs_ens',
    'partial_ens',
    'seq_ens',
    'seq_nested',
    'slow_i32',
    'dec_ens',
    'dec_lim1',
    ...INVALID_LIMITS.map(([name]) => name),
  ]) {
    files.set(`${name}/1/.keep`, '');
  }
  for (const [path, content] of files) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}
