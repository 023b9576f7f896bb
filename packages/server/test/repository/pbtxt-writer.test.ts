import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { modelConfigToText, parseModelConfigText } from '../../src/repository/index.js';
import { resolveModel } from '../../src/runtime/index.js';
import { TEST_MODELS, writeTestModelRepository } from '../../src/testing/index.js';

describe('config.pbtxt writer', () => {
  it('round-trips every test model config, before and after normalization', async () => {
    const root = await mkdtemp(join(tmpdir(), 'writer-test-'));
    try {
      await writeTestModelRepository(root);
      for (const m of TEST_MODELS.filter((t) => t.expectedState === 'READY')) {
        const r = await resolveModel({ name: m.name, directory: join(root, m.name), repository: root });
        if (!r.ok) throw new Error(r.reason);
        const text = modelConfigToText(r.model.config);
        expect(parseModelConfigText(text)).toEqual(r.model.config);
        if (r.model.configFile !== undefined) {
          const original = parseModelConfigText(await readFile(r.model.configFile, 'utf8'));
          expect(parseModelConfigText(modelConfigToText(original))).toEqual(original);
        }
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('writes strings with escapes, oneof members at default values, special floats and map keys', () => {
    const c = parseModelConfigText(
      `
      name: "quote\\" back\\\\slash \\n é"
      version_policy { latest { num_versions: 0 } }
      model_warmup [ { name: "w" inputs { key: "x" value { data_type: TYPE_FP32 dims: [ 1 ] zero_data: false } } } ]
      sequence_batching { direct { minimum_slot_utilization: inf } }
      dynamic_batching { priority_queue_policy { key: 18 value { } } }`.replace(
        'dynamic_batching { priority_queue_policy { key: 18 value { } } }',
        '',
      ),
    );
    const text = modelConfigToText(c);
    expect(text).toContain('latest {');
    expect(text).toContain('zero_data: false');
    expect(text).toContain('minimum_slot_utilization: inf');
    expect(parseModelConfigText(text)).toEqual(c);
    const db = parseModelConfigText(
      'dynamic_batching { priority_queue_policy { key: 18 value { max_queue_size: 2 } } }',
    );
    expect(parseModelConfigText(modelConfigToText(db))).toEqual(db);
    expect(modelConfigToText(parseModelConfigText(''))).toBe('');
  });
});
