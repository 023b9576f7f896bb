import { TritonClient } from '@tritonserver-ts/client';
import { createGrpcClient } from '@tritonserver-ts/client/grpc';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PerfError } from '../src/errors.js';
import { quoteText, writeModelConfigPbtxt } from '../src/tune/pbtxt-writer.js';
import { startEmbedded, type Embedded } from './helpers/embedded.js';

/** A hand-written config using many kinds of field: scalars, enums, nested and repeated messages, maps, oneofs. */
const SOURCE = String.raw`name: "rt_src"
backend: "identity"
max_batch_size: 8
version_policy: { specific { versions: [ 1 ] } }
input [
  { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] },
  { name: "INPUT1" data_type: TYPE_INT32 dims: [ 2, 3 ] optional: true }
]
output [
  { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] },
  { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 2, 3 ] }
]
instance_group [ { kind: KIND_CPU count: 2 }, { name: "extra" kind: KIND_CPU count: 1 } ]
dynamic_batching {
  preferred_batch_size: [ 2, 4 ]
  max_queue_delay_microseconds: 100
  priority_levels: 2
  default_priority_level: 1
  default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 5000 allow_timeout_override: true max_queue_size: 7 }
}
parameters { key: "execute_delay_ms" value { string_value: "0" } }
parameters { key: "odd \"key\"" value { string_value: "back\\slash, tab\t, newline\n, unicode \u00e9\u4e2d" } }
`;

describe('config.pbtxt writer', () => {
  let e: Embedded;
  let client: TritonClient;

  beforeAll(async () => {
    e = await startEmbedded({});
    client = new TritonClient({ url: e.url });
  });
  afterAll(async () => {
    await client?.close();
    await e?.close();
  });

  async function writeModel(name: string, pbtxt: string): Promise<void> {
    await mkdir(join(e.repository, name, '1'), { recursive: true });
    await writeFile(join(e.repository, name, 'config.pbtxt'), pbtxt);
    await writeFile(join(e.repository, name, '1', '.keep'), '');
  }

  it("writes a config the server's parser reads back to the same config (HTTP and gRPC JSON)", async () => {
    await writeModel('rt_src', SOURCE);
    await client.loadModel('rt_src');
    const original = await client.getModelConfig('rt_src');
    expect(original.dynamic_batching?.preferred_batch_size).toEqual([2, 4]);
    expect(original.parameters?.['odd "key"']?.string_value).toBe(
      'back\\slash, tab\t, newline\n, unicode é中',
    );

    const written = writeModelConfigPbtxt({ ...original, name: 'rt_copy' });
    await writeModel('rt_copy', written);
    await client.loadModel('rt_copy');
    const copy = await client.getModelConfig('rt_copy');
    expect({ ...copy, name: 'rt_src' }).toEqual(original);

    // The same text from the config as the gRPC endpoint returns it.
    const grpc = createGrpcClient({ url: e.grpcUrl });
    try {
      const viaGrpc = await grpc.getModelConfig('rt_src');
      expect(writeModelConfigPbtxt({ ...viaGrpc, name: 'rt_copy' })).toBe(written);
    } finally {
      await grpc.close();
    }
  });

  it('writes text format: enums by name, quoted strings, nested blocks, lists, map entries', () => {
    const text = writeModelConfigPbtxt({
      name: 'm',
      backend: 'identity',
      max_batch_size: 4,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      instance_group: [{ kind: 'KIND_CPU', count: 2 }],
      dynamic_batching: {},
      parameters: { k: { string_value: 'v' } },
    });
    expect(text).toBe(
      [
        'name: "m"',
        'backend: "identity"',
        'max_batch_size: 4',
        'input [',
        '  {',
        '    name: "INPUT0"',
        '    data_type: TYPE_FP32',
        '    dims: [ -1 ]',
        '  }',
        ']',
        'output [',
        '  {',
        '    name: "OUTPUT0"',
        '    data_type: TYPE_FP32',
        '    dims: [ -1 ]',
        '  }',
        ']',
        'dynamic_batching { }',
        'instance_group [',
        '  {',
        '    kind: KIND_CPU',
        '    count: 2',
        '  }',
        ']',
        'parameters {',
        '  key: "k"',
        '  value {',
        '    string_value: "v"',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    expect(quoteText('a"b\\c\n\x01')).toBe('"a\\"b\\\\c\\n\\001"');
  });

  it('refuses JSON that is not a ModelConfig with a TUNE error', () => {
    let error: unknown;
    try {
      writeModelConfigPbtxt({ name: 'm', no_such_field: 1 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PerfError);
    expect((error as PerfError).code).toBe('TUNE');
    expect((error as PerfError).message).toMatch(/no_such_field/);
  });
});
