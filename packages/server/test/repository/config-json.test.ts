import { describe, expect, it } from 'vitest';

import {
  ModelConfigError,
  createModelConfig,
  modelConfigToJson,
  parseModelConfigJson,
  parseModelConfigText,
} from '../../src/repository/index.js';

describe('model config JSON rendering (GET .../config)', () => {
  const config = parseModelConfigText(
    `
    name: "simple" backend: "onnxruntime" max_batch_size: 8
    version_policy { specific { versions: [ 2 ] } }
    input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] reshape { shape: [ 4, 4 ] } } ]
    output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
    dynamic_batching {
      max_queue_delay_microseconds: 100 priority_levels: 3 default_priority_level: 1
      default_queue_policy { default_timeout_microseconds: 50 }
      priority_queue_policy { key: 2 value { default_timeout_microseconds: 70 } }
    }
    instance_group [ { kind: KIND_CPU count: 1 } ]
    model_warmup [ { name: "w" batch_size: 1 inputs { key: "INPUT0" value { data_type: TYPE_INT32 dims: [ 16 ] random_data: true } } } ]
    sequence_batching { }
  `.replace('sequence_batching { }', ''),
  );
  const json = modelConfigToJson(config);

  it('prints every primitive, repeated and map field with its default and proto field names', () => {
    expect(json['platform']).toBe('');
    expect(json['runtime']).toBe('');
    expect(json['batch_input']).toEqual([]);
    expect(json['cc_model_filenames']).toEqual({});
    expect(json['parameters']).toEqual({});
    expect(json['default_model_filename']).toBe('');
    const input = (json['input'] as Record<string, unknown>[])[0];
    expect(input).toEqual({
      name: 'INPUT0',
      data_type: 'TYPE_INT32',
      format: 'FORMAT_NONE',
      dims: [16],
      reshape: { shape: [4, 4] },
      is_shape_tensor: false,
      allow_ragged_batch: false,
      optional: false,
      is_non_linear_format_io: false,
    });
    expect((json['instance_group'] as Record<string, unknown>[])[0]).toEqual({
      name: '',
      kind: 'KIND_CPU',
      count: 1,
      gpus: [],
      secondary_devices: [],
      profile: [],
      passive: false,
      host_policy: '',
    });
  });

  it('omits unset messages and oneof members', () => {
    expect('optimization' in json).toBe(false);
    expect('sequence_batching' in json).toBe(false);
    expect('ensemble_scheduling' in json).toBe(false);
    expect(json['version_policy']).toEqual({ specific: { versions: [2] } });
    const warmInput = (json['model_warmup'] as { inputs: Record<string, Record<string, unknown>> }[])[0]
      ?.inputs['INPUT0'];
    expect(warmInput).toEqual({ data_type: 'TYPE_INT32', dims: [16], random_data: true });
  });

  it('prints the 64-bit fields Triton rewrites as numbers, and other 64-bit fields as strings', () => {
    const db = json['dynamic_batching'] as Record<string, unknown>;
    expect(db['max_queue_delay_microseconds']).toBe(100);
    expect(db['priority_levels']).toBe('3');
    expect(db['default_priority_level']).toBe('1');
    expect((db['default_queue_policy'] as Record<string, unknown>)['default_timeout_microseconds']).toBe(50);
    expect(db['priority_queue_policy']).toEqual({
      '2': {
        timeout_action: 'REJECT',
        default_timeout_microseconds: 70,
        allow_timeout_override: false,
        max_queue_size: 0,
      },
    });
    expect((json['output'] as { dims: unknown }[])[0]?.dims).toEqual([-1]);
    expect(JSON.stringify(json)).toContain('"max_batch_size":8');
  });

  it('round-trips through the load-override parser', () => {
    expect(parseModelConfigJson(JSON.stringify(json))).toEqual(config);
  });
});

describe('sequence and ensemble configs', () => {
  it('parses and renders sequence batching controls, states and ensemble steps', () => {
    const seq = parseModelConfigText(`
      name: "seq" backend: "onnxruntime" max_batch_size: 4
      sequence_batching {
        max_sequence_idle_microseconds: 5000000
        oldest { max_candidate_sequences: 4 preferred_batch_size: [ 2, 4 ] }
        control_input [
          { name: "START" control [ { kind: CONTROL_SEQUENCE_START fp32_false_true: [ 0, 1 ] } ] },
          { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }
        ]
        state [ { input_name: "IN_STATE" output_name: "OUT_STATE" data_type: TYPE_FP32 dims: [ -1 ]
                  initial_state: { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "zeros" } } ]
      }`);
    const sb = seq.sequence_batching;
    expect(sb?.oldest?.preferred_batch_size).toEqual([2, 4]);
    expect(sb?.control_input[0]?.control[0]).toEqual({
      kind: 'CONTROL_SEQUENCE_START',
      int32_false_true: [],
      fp32_false_true: [0, 1],
      bool_false_true: [],
      data_type: 'TYPE_INVALID',
    });
    expect(sb?.state[0]?.initial_state[0]?.zero_data).toBe(true);
    const seqJson = modelConfigToJson(seq)['sequence_batching'] as Record<string, unknown>;
    expect(seqJson['max_sequence_idle_microseconds']).toBe(5000000);
    expect(seqJson['oldest']).toMatchObject({ max_queue_delay_microseconds: 0, max_candidate_sequences: 4 });

    const ens = parseModelConfigText(`
      name: "pipeline" platform: "ensemble" max_batch_size: 8
      ensemble_scheduling {
        step [
          { model_name: "preprocess" model_version: -1 input_map { key: "RAW" value: "IMAGE" } output_map { key: "OUT" value: "tensor" } },
          { model_name: "classifier" model_version: 2 input_map { key: "input" value: "tensor" } output_map { key: "probs" value: "PROBS" } }
        ]
      }`);
    expect(ens.ensemble_scheduling?.step.map((s) => [s.model_name, s.model_version, s.input_map])).toEqual([
      ['preprocess', -1, { RAW: 'IMAGE' }],
      ['classifier', 2, { input: 'tensor' }],
    ]);
    const steps = (modelConfigToJson(ens)['ensemble_scheduling'] as { step: Record<string, unknown>[] }).step;
    expect(steps.map((s) => s['model_version'])).toEqual([-1, 2]);
  });
});

describe('model config JSON parsing (POST .../load config override)', () => {
  it('accepts numeric strings, case-insensitive enums, camelCase names and null', () => {
    const c = parseModelConfigJson(
      '{"name":"m","max_batch_size":"16","input":[{"name":"x","data_type":"type_fp32","dims":["3",224]}],' +
        '"instance_group":[{"kind":"kind_cpu","count":2}],"dynamicBatching":{"maxQueueDelayMicroseconds":"500"},"output":null}',
    );
    expect(c.max_batch_size).toBe(16);
    expect(c.input[0]?.data_type).toBe('TYPE_FP32');
    expect(c.input[0]?.dims).toEqual([3, 224]);
    expect(c.instance_group[0]?.kind).toBe('KIND_CPU');
    expect(c.dynamic_batching?.max_queue_delay_microseconds).toBe(500);
    expect(c.output).toEqual([]);
  });

  const bad: [string, string, RegExp][] = [
    ['malformed JSON', '{"name": ', /invalid model config JSON: .*JSON/],
    ['an unknown field', '{"name":"m","maxBatch":3}', /has no field named 'maxBatch'/],
    [
      'an unknown nested field',
      '{"input":[{"name":"x","dimz":[1]}]}',
      /has no field named 'dimz' \(field 'input\[0\]'\)/,
    ],
    ['an unknown enum', '{"input":[{"data_type":"TYPE_F32"}]}', /unknown enumeration value 'TYPE_F32'/],
    [
      'a fractional integer',
      '{"max_batch_size":1.5}',
      /expected an integer for field 'max_batch_size', got 1.5/,
    ],
    ['a non-numeric string', '{"max_batch_size":"lots"}', /expected an integer/],
    ['a string for a bool', '{"input":[{"optional":"true"}]}', /expected true or false/],
    [
      'two oneof members',
      '{"dynamic_batching":{},"sequence_batching":{}}',
      /another member of oneof 'scheduling_choice'/,
    ],
    ['a non-object root', '[1]', /expected an object for message 'inference.ModelConfig'/],
    [
      'an unsafe integer',
      '{"dynamic_batching":{"max_queue_delay_microseconds":"18446744073709551615"}}',
      /2\^53/,
    ],
  ];
  for (const [what, text, message] of bad) {
    it(`rejects ${what} with MODEL_CONFIG_JSON_ERROR`, () => {
      let caught: unknown;
      try {
        parseModelConfigJson(text);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ModelConfigError);
      expect((caught as ModelConfigError).code).toBe('MODEL_CONFIG_JSON_ERROR');
      expect((caught as ModelConfigError).message).toMatch(message);
    });
  }

  it('builds complete configs from partial objects in code', () => {
    const c = createModelConfig({ name: 'x', input: [{ name: 'a', dims: [2] }] });
    expect(c.input[0]).toMatchObject({
      name: 'a',
      data_type: 'TYPE_INVALID',
      format: 'FORMAT_NONE',
      dims: [2],
    });
    expect(c.instance_group).toEqual([]);
    expect(() => createModelConfig({ input: [{ data_type: 'type_fp32' as never }] })).toThrow(
      ModelConfigError,
    );
  });
});
