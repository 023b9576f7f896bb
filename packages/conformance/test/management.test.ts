import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { buildAddSubOnnx } from '@tritonserver-ts/server/testing';
import { newClient, transports } from './target.js';
import { expectServerError } from './transport-differences.js';

const simpleInputs = [
  { name: 'INPUT0', datatype: 'INT32' as const, shape: [1, 16], data: new Int32Array(16).fill(3) },
  { name: 'INPUT1', datatype: 'INT32' as const, shape: [1, 16], data: new Int32Array(16).fill(1) },
];

describe.each(transports)('%s: model repository', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it('lists every model with its state, unavailable ones with a reason', async () => {
    const index = await client.getModelRepositoryIndex();
    const byName = new Map(index.map((e) => [e.name, e]));
    expect(byName.get('simple')?.state).toBe('READY');
    expect(byName.get('identity_string')?.state).toBe('READY');
    expect(byName.get('tensorrt_model')?.state).toBe('UNAVAILABLE');
    expect(byName.get('tensorrt_model')?.reason).not.toBe('');
  });

  it('unloads and reloads a model', async () => {
    await client.unloadModel('versioned', { unloadDependents: true });
    expect(await client.isModelReady('versioned')).toBe(false);
    await client.loadModel('versioned');
    expect(await client.isModelReady('versioned', 3)).toBe(true);
  });

  it('loads a new model from a config override and base64 file contents', async () => {
    const config = {
      name: 'simple_override',
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
    await client.loadModel('simple_override', {
      config,
      files: { 'file:1/model.onnx': buildAddSubOnnx(true) },
    });
    const result = await client.infer('simple_override', simpleInputs);
    expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual(new Array(16).fill(4));
    await client.unloadModel('simple_override');
  });

  it('sends a raw binary BYTES request as the one element, without a length prefix', async () => {
    await client.loadModel('raw_string', {
      config: {
        name: 'raw_string',
        backend: 'identity',
        max_batch_size: 0,
        input: [{ name: 'INPUT0', data_type: 'TYPE_STRING', dims: [1] }],
        output: [{ name: 'OUTPUT0', data_type: 'TYPE_STRING', dims: [1] }],
      },
      files: { 'file:1/README.txt': new TextEncoder().encode('identity backend: no model file') },
    });
    const text = 'crème brûlée: 4 bytes of prefix must not leak into the element';
    const result = await client.infer(
      'raw_string',
      [{ name: 'INPUT0', datatype: 'BYTES', shape: [1], data: [text] }],
      { rawBinaryRequest: true },
    );
    expect(result.asStrings('OUTPUT0')).toEqual([text]);
    await client.unloadModel('raw_string');
  });

  it('reports a load failure as a server error', async () => {
    const error = await expectServerError(client.loadModel('no_such_model'), transport, 'INTERNAL');
    expect(error.message).toContain("failed to load 'no_such_model'");
  });
});

describe.each(transports)('%s: statistics', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it('counts requests per model with exact counters', async () => {
    const before = await client.getInferenceStatistics('simple', 1);
    await client.infer('simple', simpleInputs);
    const after = await client.getInferenceStatistics('simple', 1);
    const b = before.model_stats[0];
    const a = after.model_stats[0];
    expect(a?.name).toBe('simple');
    expect(Number(a?.inference_stats.queue.count) - Number(b?.inference_stats.queue.count)).toBe(1);
    expect(Number(a?.inference_stats.success.count) - Number(b?.inference_stats.success.count)).toBe(1);
    expect(['number', 'bigint']).toContain(typeof a?.inference_stats.compute_infer.ns);
  });

  it('returns statistics of every model', async () => {
    const all = await client.getInferenceStatistics();
    expect(all.model_stats.map((s) => s.name)).toEqual(expect.arrayContaining(['simple', 'classifier']));
  });
});

describe.each(transports)('%s: trace and log settings', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it('updates a model trace setting and clears it back to the global value with null', async () => {
    const global = await client.getTraceSettings();
    const updated = await client.updateTraceSettings({ trace_rate: '7' }, 'simple');
    expect(updated.trace_rate).toBe('7');
    expect((await client.getTraceSettings('simple')).trace_rate).toBe('7');
    const cleared = await client.updateTraceSettings({ trace_rate: null }, 'simple');
    expect(cleared.trace_rate).toBe(global.trace_rate);
  });

  it('updates a global trace setting and restores it', async () => {
    const before = await client.getTraceSettings();
    const updated = await client.updateTraceSettings({ log_frequency: '5' });
    expect(updated.log_frequency).toBe('5');
    await client.updateTraceSettings({ log_frequency: before.log_frequency ?? '0' });
    expect((await client.getTraceSettings()).log_frequency).toBe(before.log_frequency);
  });

  it('updates log settings and returns the full settings object', async () => {
    const before = await client.getLogSettings();
    const after = await client.updateLogSettings({ log_verbose_level: 1 });
    expect(after.log_verbose_level).toBe(1);
    expect(after.log_info).toBe(before.log_info);
    await client.updateLogSettings({ log_verbose_level: before.log_verbose_level ?? 0 });
  });
});

describe.each(transports)('%s: shared memory', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it('registers a system region, infers through it, reports it, and unregisters it', async () => {
    const key = `/conformance_${transport}_${process.pid}_${randomBytes(4).toString('hex')}`;
    const file = `/dev/shm${key}`;
    const region = `conf_region_${transport}`;
    const bytes = Buffer.alloc(256);
    bytes.set(new Uint8Array(new Int32Array(16).fill(5).buffer), 0);
    bytes.set(new Uint8Array(new Int32Array(16).fill(2).buffer), 64);
    writeFileSync(file, bytes);
    try {
      await client.registerSystemSharedMemory(region, key, 256);
      const status = await client.getSystemSharedMemoryStatus(region);
      expect(status).toEqual([{ name: region, key, offset: 0, byte_size: 256 }]);
      const result = await client.infer(
        'simple',
        [
          {
            name: 'INPUT0',
            datatype: 'INT32',
            shape: [1, 16],
            sharedMemory: { region, byteSize: 64 },
          },
          {
            name: 'INPUT1',
            datatype: 'INT32',
            shape: [1, 16],
            sharedMemory: { region, byteSize: 64, offset: 64 },
          },
        ],
        {
          outputs: [
            { name: 'OUTPUT0', sharedMemory: { region, byteSize: 64, offset: 128 } },
            { name: 'OUTPUT1' },
          ],
        },
      );
      expect(Array.from(result.asTypedArray('OUTPUT1', 'INT32'))).toEqual(new Array(16).fill(3));
      const written = readFileSync(file);
      expect(Array.from({ length: 16 }, (_, i) => written.readInt32LE(128 + 4 * i))).toEqual(
        new Array(16).fill(7),
      );
      await client.unregisterSystemSharedMemory(region);
      expect(await client.getSystemSharedMemoryStatus()).toEqual([]);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('reports CUDA shared memory status and refuses registration without a GPU', async () => {
    expect(await client.getCudaSharedMemoryStatus()).toEqual([]);
    await expectServerError(
      client.registerCudaSharedMemory('cuda_region', new Uint8Array(64), 0, 1024),
      transport,
    );
    await client.unregisterCudaSharedMemory();
  });
});
