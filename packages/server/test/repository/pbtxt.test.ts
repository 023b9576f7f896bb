import { describe, expect, it } from 'vitest';

import { ModelConfigError, parseModelConfigText } from '../../src/repository/index.js';

const FOOD_CONFIG = `
# A realistic config: every construct a Triton user writes.
name: "food_classifier_onnx"
backend: "onnxruntime"
max_batch_size: 16
version_policy: { specific: { versions: [1, 3] } }
input [
  {
    name: "input"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 3, 224, 224 ]
  }
]
output [
  {
    name: "output"
    data_type: TYPE_FP32
    dims: [ 11 ]
    label_filename: "labels.txt"
  }
]
instance_group [
  { count: 2 kind: KIND_CPU },
  { name: "gpu_group" count: 1 kind: KIND_GPU gpus: [ 0, 1 ] }
]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 100
  priority_levels: 2
  default_priority_level: 2
  default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 5000 max_queue_size: 32 }
  priority_queue_policy { key: 1 value: { timeout_action: REJECT allow_timeout_override: true } }
}
parameters { key: "resize_mode" value: { string_value: "bilinear" } }
parameters: { key: "mean" value { string_value: '0.485,0.456,0.406' } }
optimization {
  execution_accelerators {
    gpu_execution_accelerator : [ {
      name : "tensorrt"
      parameters { key: "precision_mode" value: "FP16" }
      parameters { key: "max_workspace_size_bytes" value: "1073741824" }
    } ]
  }
  graph: { level: -1 }
}
model_warmup [
  {
    name: "zeros"
    batch_size: 1
    inputs { key: "input" value: { data_type: TYPE_FP32 dims: [ 3, 224, 224 ] zero_data: true } }
  }
]
`;

describe('config.pbtxt parser', () => {
  it('parses a realistic config with lists, maps, nested messages, enums and negative numbers', () => {
    const c = parseModelConfigText(FOOD_CONFIG);
    expect(c.name).toBe('food_classifier_onnx');
    expect(c.max_batch_size).toBe(16);
    expect(c.version_policy).toEqual({ specific: { versions: [1, 3] } });
    expect(c.input).toEqual([
      {
        name: 'input',
        data_type: 'TYPE_FP32',
        format: 'FORMAT_NCHW',
        dims: [3, 224, 224],
        is_shape_tensor: false,
        allow_ragged_batch: false,
        optional: false,
        is_non_linear_format_io: false,
      },
    ]);
    expect(c.output[0]?.label_filename).toBe('labels.txt');
    expect(c.instance_group.map((g) => [g.name, g.kind, g.count, g.gpus])).toEqual([
      ['', 'KIND_CPU', 2, []],
      ['gpu_group', 'KIND_GPU', 1, [0, 1]],
    ]);
    expect(c.dynamic_batching?.preferred_batch_size).toEqual([4, 8]);
    expect(c.dynamic_batching?.default_queue_policy).toEqual({
      timeout_action: 'DELAY',
      default_timeout_microseconds: 5000,
      allow_timeout_override: false,
      max_queue_size: 32,
    });
    expect(c.dynamic_batching?.priority_queue_policy['1']?.allow_timeout_override).toBe(true);
    expect(c.parameters).toEqual({
      resize_mode: { string_value: 'bilinear' },
      mean: { string_value: '0.485,0.456,0.406' },
    });
    const trt = c.optimization?.execution_accelerators?.gpu_execution_accelerator[0];
    expect(trt?.name).toBe('tensorrt');
    expect(trt?.parameters).toEqual({ precision_mode: 'FP16', max_workspace_size_bytes: '1073741824' });
    expect(c.optimization?.graph?.level).toBe(-1);
    expect(c.model_warmup[0]?.inputs['input']?.zero_data).toBe(true);
    expect(c.sequence_batching).toBeUndefined();
  });

  it('accepts repeated fields given several times, separators, <> delimiters and string escapes', () => {
    const c = parseModelConfigText(
      [
        'name: "a\\tb\\x41\\101\\u00e9" "-tail";',
        "platform: 'onnxruntime_onnx',",
        'input < name: "x" data_type: TYPE_INT64 dims: 1 dims: -1 dims: 0x10 dims: 010 >',
        'sequence_batching { direct { minimum_slot_utilization: 0.5f } max_sequence_idle_microseconds: 1e0 }',
      ]
        .join('\n')
        .replace('1e0', '7'),
    );
    expect(c.name).toBe('a\tbAAé-tail');
    expect(c.platform).toBe('onnxruntime_onnx');
    expect(c.input[0]?.dims).toEqual([1, -1, 16, 8]);
    expect(c.sequence_batching?.direct?.minimum_slot_utilization).toBe(0.5);
    expect(c.sequence_batching?.max_sequence_idle_microseconds).toBe(7);
  });

  it('accepts every bool spelling of the text format and enum numbers', () => {
    const c = parseModelConfigText(
      'input [ { name: "a" optional: true allow_ragged_batch: t is_shape_tensor: 1 data_type: 11 },' +
        ' { name: "b" optional: False allow_ragged_batch: f is_shape_tensor: 0 } ]',
    );
    expect(c.input.map((i) => [i.optional, i.allow_ragged_batch, i.is_shape_tensor])).toEqual([
      [true, true, true],
      [false, false, false],
    ]);
    expect(c.input[0]?.data_type).toBe('TYPE_FP32');
  });

  it('treats an empty file as the default config', () => {
    const c = parseModelConfigText('# nothing but a comment\n');
    expect(c.name).toBe('');
    expect(c.max_batch_size).toBe(0);
    expect(c.input).toEqual([]);
    expect(c.parameters).toEqual({});
  });

  const bad: [string, string, RegExp][] = [
    [
      'an unknown field',
      'name: "m"\n  max_batch: 4',
      /cfg\.pbtxt:2:3: message type 'inference.ModelConfig' has no field named 'max_batch'/,
    ],
    [
      'an unknown nested field with its path',
      'input [ { name: "x" }, { name: "y" dimz: [1] } ]',
      /1:36: message type 'inference.ModelInput' has no field named 'dimz' \(field 'input\[1\]'\)/,
    ],
    [
      'an unknown enum name',
      'input { data_type: TYPE_FLOAT32 }',
      /unknown enumeration value 'TYPE_FLOAT32'.*\(field 'input\[0\].data_type'\)/,
    ],
    [
      'a float for an integer',
      'max_batch_size: 1.5',
      /expected an integer for field 'max_batch_size', got '1.5'/,
    ],
    ['a string for an integer', 'max_batch_size: "8"', /expected an integer for field 'max_batch_size'/],
    ['an out-of-range int32', 'max_batch_size: 3000000000', /out of range for int32/],
    [
      'a negative unsigned',
      'dynamic_batching { max_queue_delay_microseconds: -1 }',
      /negative value for unsigned field/,
    ],
    ['a bad bool', 'input { optional: yes }', /invalid value for bool field 'optional': 'yes'/],
    [
      'a duplicate singular field',
      'name: "a"\nname: "b"',
      /2:1: non-repeated field 'name' is specified multiple times/,
    ],
    [
      'a second oneof member',
      'version_policy { latest { num_versions: 2 } all { } }',
      /field 'all' is specified along with field 'latest', another member of oneof 'policy_choice'/,
    ],
    [
      'two scheduling choices',
      'dynamic_batching { }\nsequence_batching { }',
      /2:1: field 'sequence_batching' is specified along with field 'dynamic_batching'/,
    ],
    ['a missing colon before a scalar', 'name "x"', /expected ':' after field name 'name'/],
    ['an unterminated string', 'name: "abc\n', /1:7: unterminated string literal/],
    ['an unclosed message', 'input { name: "x"', /unexpected end of file: expected '}'/],
    ['a list for a singular field', 'max_batch_size: [1, 2]', /not repeated and cannot take a list/],
    ['a stray character', 'name: "x" @', /unexpected character '@'/],
    ['a bad escape', 'name: "\\q"', /invalid escape sequence/],
  ];
  for (const [what, text, message] of bad) {
    it(`rejects ${what} with a typed error naming the position`, () => {
      let caught: unknown;
      try {
        parseModelConfigText(text, { file: 'cfg.pbtxt' });
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ModelConfigError);
      const err = caught as ModelConfigError;
      expect(err.code).toBe('MODEL_CONFIG_PARSE_ERROR');
      expect(err.message).toMatch(message);
      expect(err.message.startsWith('cfg.pbtxt:')).toBe(true);
      expect(err.location?.line).toBeGreaterThan(0);
    });
  }
});
