import { describe, expect, it } from 'vitest';

import { ModelConfigError, parseModelConfigJson, parseModelConfigText } from '../../src/repository/index.js';

const SEED_TEXT = `name: "m" backend: "onnxruntime" max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 3, -1 ] reshape { shape: [ -1 ] } } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] label_filename: 'l.txt' } ]
dynamic_batching { preferred_batch_size: [ 2, 4 ] max_queue_delay_microseconds: 100
  priority_queue_policy { key: 1 value { timeout_action: DELAY } } }
parameters { key: "k" value { string_value: "v\\n\\x41" } }
optimization { graph { level: -1 } execution_accelerators { gpu_execution_accelerator [ { name: "tensorrt" parameters { key: "a" value: "b" } } ] } }
sequence_batching { }  # conflicts on purpose when both survive
`;

const ALPHABET = [
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  '"',
  "'",
  '\\',
  '-',
  '#',
  '\n',
  ' ',
  'x',
  '1',
  '.',
  '<',
  '>',
  'é',
  'TYPE_FP32',
];

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(text: string, random: () => number): string {
  let s = text;
  const edits = 1 + Math.floor(random() * 4);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * (s.length + 1));
    const op = random();
    if (op < 0.4) s = s.slice(0, at) + s.slice(at + 1 + Math.floor(random() * 5));
    else if (op < 0.8)
      s = s.slice(0, at) + (ALPHABET[Math.floor(random() * ALPHABET.length)] as string) + s.slice(at);
    else s = s.slice(0, at);
  }
  return s;
}

describe('parsers never crash on bad input', () => {
  it('answers 1000 mutated config.pbtxt texts with a config or a ModelConfigError', () => {
    const random = rng(12345);
    let failures = 0;
    for (let i = 0; i < 1000; i++) {
      const text = mutate(SEED_TEXT, random);
      try {
        parseModelConfigText(text, { file: 'fuzz.pbtxt' });
      } catch (err) {
        if (!(err instanceof ModelConfigError))
          throw new Error(`non-typed error for ${JSON.stringify(text)}: ${String(err)}`, { cause: err });
        expect(err.code).toBe('MODEL_CONFIG_PARSE_ERROR');
        expect(err.message).toMatch(/^fuzz\.pbtxt:\d+:\d+: /);
        failures++;
      }
    }
    // The seed itself is invalid (two scheduling choices), so most mutants fail — but not all.
    expect(failures).toBeGreaterThan(500);
  });

  it('answers arbitrary JSON values with a config or a ModelConfigError', () => {
    const random = rng(777);
    const leaf = (): unknown =>
      [null, true, 0, -1, 1.5, '', 'x', 'TYPE_FP32', '12', [], {}][Math.floor(random() * 11)];
    const keys = [
      'name',
      'max_batch_size',
      'input',
      'dims',
      'data_type',
      'dynamic_batching',
      'parameters',
      'string_value',
      'bogus',
    ];
    const value = (depth: number): unknown => {
      if (depth > 3 || random() < 0.3) return leaf();
      if (random() < 0.5) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 4) }, () => [
          keys[Math.floor(random() * keys.length)] as string,
          value(depth + 1),
        ]),
      );
    };
    let ok = 0;
    for (let i = 0; i < 2000; i++) {
      const v = value(0);
      try {
        parseModelConfigJson(JSON.stringify(v) ?? 'null');
        ok++;
      } catch (err) {
        if (!(err instanceof ModelConfigError))
          throw new Error(`non-typed error for ${JSON.stringify(v)}: ${String(err)}`, { cause: err });
        expect(err.code).toBe('MODEL_CONFIG_JSON_ERROR');
      }
    }
    expect(ok).toBeGreaterThan(0);
  });
});
