import { afterAll, describe, expect, it } from 'vitest';
import { httpBase, newClient, transports } from './target.js';
import { expectServerError } from './transport-differences.js';

describe.each(transports)('%s: health', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it('reports the server live', async () => {
    expect(await client.isServerLive()).toBe(true);
  });

  it('reports readiness exactly as the status code of GET v2/health/ready says', async () => {
    const status = (await fetch(`${httpBase}/v2/health/ready`)).status;
    expect(await client.isServerReady()).toBe(status === 200);
  });

  it('reports model readiness per model and version', async () => {
    expect(await client.isModelReady('simple')).toBe(true);
    expect(await client.isModelReady('versioned', 2)).toBe(true);
    expect(await client.isModelReady('versioned', 9)).toBe(false);
    expect(await client.isModelReady('tensorrt_model')).toBe(false);
    expect(await client.isModelReady('no_such_model')).toBe(false);
  });
});

describe.each(transports)('%s: metadata and configuration', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it('returns server metadata with the extensions the client relies on', async () => {
    const meta = await client.getServerMetadata();
    expect(meta.name).toBe('triton');
    // The release the suite targets (the embedded server follows it; a real Triton under test must be it).
    expect(meta.version).toBe('2.73.0');
    expect(meta.extensions).toEqual(
      expect.arrayContaining(['binary_tensor_data', 'classification', 'model_repository', 'statistics']),
    );
  });

  it('returns model metadata with the batch dimension as -1', async () => {
    const meta = await client.getModelMetadata('simple');
    expect(meta.name).toBe('simple');
    expect(meta.versions).toContain('1');
    expect(meta.inputs).toEqual([
      { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
      { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
    ]);
    expect(meta.outputs.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
  });

  it('returns metadata of a specific version', async () => {
    const meta = await client.getModelMetadata('versioned', '3');
    expect(meta.versions).toEqual(expect.arrayContaining(['3']));
    expect(meta.inputs[0]?.datatype).toBe('INT32');
  });

  it('returns the model configuration with proto field names and numeric dims', async () => {
    const config = await client.getModelConfig('simple');
    expect(config.name).toBe('simple');
    expect(config.max_batch_size).toBe(8);
    expect(config.input?.[0]).toMatchObject({ name: 'INPUT0', data_type: 'TYPE_INT32', dims: [16] });
    const classifier = await client.getModelConfig('classifier', 1);
    expect(classifier.output?.[0]?.label_filename).toBe('labels.txt');
  });

  it("reports an unknown model with Triton's status and message", async () => {
    const error = await expectServerError(client.getModelMetadata('no_such_model'), transport, 'INVALID_ARG');
    expect(error.message).toMatch(/^Request for unknown model: 'no_such_model' is not found/);
  });
});
