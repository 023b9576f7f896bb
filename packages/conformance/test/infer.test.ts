import { credentials, makeGenericClientConstructor, Metadata, type ServiceError } from '@grpc/grpc-js';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import {
  encodeRawBinaryRequest,
  generateRequestBody,
  InferResult,
  parseResponseBody,
  TritonInvalidArgumentError,
  type InferInput,
} from '@tritonserver-ts/client';
import {
  fromModelInferResponse,
  serviceDefinition,
  toModelInferRequest,
  type ModelInferRequest,
  type ModelInferResponse,
} from '@tritonserver-ts/protocol/grpc';
import { httpBase, newClient, transports, tritonGrpcUrl } from './target.js';
import { differsOver } from './transport-differences.js';

const a = Int32Array.from({ length: 16 }, (_, i) => i);
const b = Int32Array.from({ length: 16 }, (_, i) => 2 * i + 1);
const simpleInputs: InferInput[] = [
  { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a },
  { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: b },
];
const sum = Array.from(a, (v, i) => v + (b[i] as number));
const diff = Array.from(a, (v, i) => v - (b[i] as number));

describe.each(transports)('%s: infer on simple (INT32 add/sub)', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it('returns every output binary when no outputs are requested', async () => {
    const result = await client.infer('simple', simpleInputs);
    expect(result.modelName).toBe('simple');
    expect(result.modelVersion).toBe('1');
    expect(result.outputNames.sort()).toEqual(['OUTPUT0', 'OUTPUT1']);
    expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual(sum);
    expect(Array.from(result.asTypedArray('OUTPUT1', 'INT32'))).toEqual(diff);
    if (!differsOver(transport, 'binary-data-size')) {
      expect(result.outputParameters('OUTPUT0').binary_data_size).toBe(64);
    }
  });

  it('returns only the requested outputs, each binary or JSON as asked, and echoes the request id', async () => {
    const result = await client.infer('simple', simpleInputs, {
      requestId: 'conformance-1',
      outputs: [{ name: 'OUTPUT1', binaryData: false }],
    });
    expect(result.id).toBe('conformance-1');
    expect(result.outputNames).toEqual(['OUTPUT1']);
    if (!differsOver(transport, 'json-outputs')) expect(result.response.outputs[0]?.data).toHaveLength(16);
    expect(Array.from(result.asTypedArray('OUTPUT1', 'INT32'))).toEqual(diff);
  });

  it('sends JSON inputs and mixes them with binary ones', async () => {
    const mixed = client.infer('simple', [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from(a), binaryData: false },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: b },
    ]);
    if (differsOver(transport, 'mixed-input-encodings')) {
      await expect(mixed).rejects.toBeInstanceOf(TritonInvalidArgumentError);
      // Every input typed is fine (typed contents, no raw entries).
      const typed = await client.infer('simple', simpleInputs, { binaryData: false });
      expect(Array.from(typed.asTypedArray('OUTPUT0', 'INT32'))).toEqual(sum);
      return;
    }
    expect(Array.from((await mixed).asTypedArray('OUTPUT0', 'INT32'))).toEqual(sum);
  });

  it('handles a batch of 2 and exposes it through the ndarray view', async () => {
    const two = (x: Int32Array) => Int32Array.from([...x, ...x]);
    const result = await client.infer('simple', [
      { name: 'INPUT0', datatype: 'INT32', shape: [2, 16], data: two(a) },
      { name: 'INPUT1', datatype: 'INT32', shape: [2, 16], data: two(b) },
    ]);
    const view = result.view<'INT32'>('OUTPUT0');
    expect(view.shape).toEqual([2, 16]);
    expect(view.strides).toEqual([16, 1]);
    expect(view.get(1, 15)).toBe(sum[15]);
  });

  it('serves a model without a batch dimension', async () => {
    const result = await client.infer('simple_no_batch', [
      { name: 'INPUT0', datatype: 'INT32', shape: [16], data: a },
      { name: 'INPUT1', datatype: 'INT32', shape: [16], data: b },
    ]);
    expect(result.shape('OUTPUT0')).toEqual([16]);
  });

  it('selects model versions', async () => {
    for (const version of [1, 2, 3]) {
      const result = await client.infer(
        'versioned',
        [{ name: 'INPUT0', datatype: 'INT32', shape: [2], data: [10, 20] }],
        {
          modelVersion: version,
        },
      );
      expect(result.modelVersion).toBe(String(version));
      expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual([10 + version, 20 + version]);
    }
  });

  it.each(['gzip', 'deflate'] as const)(
    'compresses the request (and over HTTP the response) with %s',
    async (algorithm) => {
      const result = await client.infer('simple', simpleInputs, {
        requestCompression: algorithm,
        responseCompression: algorithm,
      });
      expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual(sum);
    },
  );

  it('accepts priority, a server-side timeout and sequence parameters (number and string ids)', async () => {
    for (const sequenceId of [42, 'session-7']) {
      const result = await client.infer('simple', simpleInputs, {
        priority: 1,
        timeout: 5_000_000,
        sequenceId,
        sequenceStart: true,
        sequenceEnd: true,
      });
      expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual(sum);
    }
  });

  it('sends a raw binary request through the client (rawBinaryRequest)', async () => {
    const result = await client.infer(
      'identity_fp32',
      [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], data: [1.5, 2.5, 3.5] }],
      { rawBinaryRequest: true },
    );
    // Over gRPC there is no header-less request: the option is ignored, the request names its input.
    if (!differsOver(transport, 'raw-binary-request')) {
      expect(result.outputParameters('OUTPUT0').binary_data_size).toBe(12);
    }
    expect(Array.from(result.asTypedArray('OUTPUT0', 'FP32'))).toEqual([1.5, 2.5, 3.5]);
  });

  it('passes custom request parameters through', async () => {
    const result = await client.infer('simple', simpleInputs, {
      parameters: { tenant: 'gg', weight: 2, flag: true },
    });
    expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual(sum);
  });
});

describe.each(transports)('%s: classification', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());
  const scores = new Float32Array([0.1, 2.0, 0.5, -1, 1.0]);

  it('returns the top-k as value:index:label strings, sorted, binary and JSON', async () => {
    for (const binaryData of [true, false]) {
      const result = await client.infer(
        'classifier',
        [{ name: 'input', datatype: 'FP32', shape: [1, 5], data: scores }],
        {
          outputs: [{ name: 'probs', classCount: 3, binaryData }],
        },
      );
      expect(result.datatype('probs')).toBe('BYTES');
      expect(result.shape('probs')).toEqual([1, 3]);
      const entries = result.classifications('probs');
      expect(entries.map((e) => [e.index, e.label])).toEqual([
        [1, 'Dairy product'],
        [4, 'Fried food'],
        [2, 'Dessert'],
      ]);
      // softmax([0.1, 2, 0.5, -1, 1]) printed with %f, as Triton does (also the README example).
      expect(result.asStrings('probs')).toEqual([
        '0.558545:1:Dairy product',
        '0.205477:4:Fried food',
        '0.124628:2:Dessert',
      ]);
      expect(entries[0]?.value).toBeGreaterThan(entries[1]?.value ?? 1);
    }
  });
});

describe.each(transports)('%s: wire helpers with a separate stack', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  if (differsOver(transport, 'http-wire-helpers')) {
    it('infers with toModelInferRequest / fromModelInferResponse over a plain grpc-js client', async () => {
      const Stub = makeGenericClientConstructor(serviceDefinition, 'GRPCInferenceService');
      const stub = new Stub(tritonGrpcUrl.replace(/^grpc:\/\//, ''), credentials.createInsecure());
      try {
        const message = toModelInferRequest({
          modelName: 'simple',
          inputs: simpleInputs,
          request: { outputs: [{ name: 'OUTPUT0' }], requestId: 'wire-1' },
        });
        const response = await new Promise<ModelInferResponse>((resolve, reject) => {
          const call = stub.ModelInfer as (
            req: ModelInferRequest,
            md: Metadata,
            cb: (e: ServiceError | null, r?: ModelInferResponse) => void,
          ) => void;
          call.call(stub, message, new Metadata(), (error, r) => {
            if (error !== null || r === undefined) reject(error ?? new Error('no response'));
            else resolve(r);
          });
        });
        expect(response.rawOutputContents).toHaveLength(1);
        expect(response.rawOutputContents[0]?.byteLength).toBe(64);
        const result = new InferResult(fromModelInferResponse(response));
        expect(result.id).toBe('wire-1');
        expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual(sum);
      } finally {
        stub.close();
      }
    });
    return;
  }

  it('infers with generateRequestBody and parseResponseBody over undici', async () => {
    const { body, headerLength } = generateRequestBody(simpleInputs, { outputs: [{ name: 'OUTPUT0' }] });
    const res = await request(`${httpBase}/v2/models/simple/infer`, {
      method: 'POST',
      body,
      headers: {
        'inference-header-content-length': String(headerLength),
        'accept-encoding': 'gzip',
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    const raw = new Uint8Array(await res.body.arrayBuffer());
    const result = await parseResponseBody(raw, {
      headerLength: res.headers['inference-header-content-length'] as string,
      contentEncoding: res.headers['content-encoding'] as string,
    });
    expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual(sum);
  });

  it('sends a raw binary request (header length 0) and gets binary outputs', async () => {
    const { body, headerLength } = encodeRawBinaryRequest('FP32', [1.5, 2.5, 3.5]);
    const res = await request(`${httpBase}/v2/models/identity_fp32/infer`, {
      method: 'POST',
      body,
      headers: { 'inference-header-content-length': String(headerLength) },
    });
    const raw = new Uint8Array(await res.body.arrayBuffer());
    expect(res.statusCode).toBe(200);
    const result = await parseResponseBody(raw, {
      headerLength: res.headers['inference-header-content-length'] as string,
    });
    expect(Array.from(result.asTypedArray('OUTPUT0', 'FP32'))).toEqual([1.5, 2.5, 3.5]);
  });
});
