import { afterAll, describe, expect, it } from 'vitest';
import { TritonServerError, type InferInput } from '@tritonserver-ts/client';
import { GrpcTransport, type StreamRequest, type StreamResponse } from '@tritonserver-ts/client/grpc';
import { newClient, transports } from './target.js';
import { differsOver, expectServerError } from './transport-differences.js';

const ones = new Int32Array(16).fill(1);
const inputs = (x: number): InferInput[] => [
  { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(x) },
  { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: ones },
];

/** `py_decoupled` (see scripts/repository.ts): IN = n → n responses OUT = 0..n-1, then the final flag. */
const count = (n: number): InferInput[] => [
  { name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(n) },
];

describe.each(transports)('%s: ModelStreamInfer', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it('infer refuses a decoupled model (UNSUPPORTED) over either protocol', async () => {
    const error = await expectServerError(client.infer('py_decoupled', count(1)), transport, 'UNSUPPORTED');
    // HTTP: "HTTP end point doesn't …"; gRPC: "ModelInfer RPC doesn't …".
    expect(error.message).toMatch(/ doesn't support models with decoupled transaction policy$/);
  });

  if (!differsOver(transport, 'model-stream-infer')) {
    it('has no stream over HTTP: the HTTP transport offers no streamInfer', () => {
      expect(client.transport).not.toBeInstanceOf(GrpcTransport);
      expect('streamInfer' in client.transport).toBe(false);
    });
    return;
  }

  it('answers each request on one stream, a failed one in-band, the others unaffected', async () => {
    const grpc = client.transport as GrpcTransport;
    const requests: StreamRequest[] = [
      { modelName: 'simple', inputs: inputs(5), options: { requestId: 's1' } },
      { modelName: 'no_such_model', inputs: inputs(1), options: { requestId: 's2' } },
      {
        modelName: 'simple',
        inputs: inputs(9),
        options: { requestId: 's3', outputs: [{ name: 'OUTPUT1' }] },
      },
    ];
    const responses: StreamResponse[] = [];
    for await (const response of grpc.streamInfer(requests)) responses.push(response);
    const byId = new Map(responses.map((r) => [r.id, r]));
    expect([...byId.keys()].sort()).toEqual(['s1', 's2', 's3']);
    expect(responses).toHaveLength(3);

    const s1 = byId.get('s1');
    expect(s1?.error).toBeUndefined();
    expect(s1?.final).toBe(true);
    expect(Array.from(s1?.result?.asTypedArray('OUTPUT0', 'INT32') ?? [])).toEqual(new Array(16).fill(6));
    expect(Array.from(s1?.result?.asTypedArray('OUTPUT1', 'INT32') ?? [])).toEqual(new Array(16).fill(4));

    const s2 = byId.get('s2');
    expect(s2?.result).toBeUndefined();
    expect(s2?.error).toBeInstanceOf(TritonServerError);
    expect(s2?.error?.message).toMatch(/^Request for unknown model: 'no_such_model' is not found/);

    const s3 = byId.get('s3');
    expect(s3?.result?.outputNames).toEqual(['OUTPUT1']);
    expect(Array.from(s3?.result?.asTypedArray('OUTPUT1', 'INT32') ?? [])).toEqual(new Array(16).fill(8));
    expect(await client.isServerLive()).toBe(true);
  });

  it("the Python client's startStream / asyncStreamInfer / stopStream deliver every response to the callback", async () => {
    const grpc = client.transport as GrpcTransport;
    const seen: { id: string; sum: number[] | undefined; error: string | undefined }[] = [];
    grpc.startStream((result, error, response) => {
      seen.push({
        id: response?.id ?? '',
        sum: result === undefined ? undefined : Array.from(result.asTypedArray('OUTPUT0', 'INT32')),
        error: error?.message,
      });
    });
    grpc.asyncStreamInfer('simple', inputs(2), { requestId: 'p1' });
    grpc.asyncStreamInfer('simple', inputs(3), { requestId: 'p2' });
    await grpc.stopStream();
    expect(seen.sort((x, y) => x.id.localeCompare(y.id))).toEqual([
      { id: 'p1', sum: new Array(16).fill(3), error: undefined },
      { id: 'p2', sum: new Array(16).fill(4), error: undefined },
    ]);
  });
  it('a decoupled model: every response with triton_final_response, the empty final response on request, errors in-band', async () => {
    const grpc = client.transport as GrpcTransport;
    const stream = grpc.openStream();
    const [three, zero, negative] = await Promise.all([
      stream.inferAll('py_decoupled', count(3), { requestId: 'd3' }),
      stream.inferAll('py_decoupled', count(0), { requestId: 'd0' }),
      stream.inferAll('py_decoupled', count(-1), { requestId: 'dn', enableEmptyFinalResponse: false }),
    ]);
    stream.end();
    expect(three.map((r) => [r.id, r.final, r.empty])).toEqual([
      ['d3', false, false],
      ['d3', false, false],
      ['d3', false, false],
      ['d3', true, true],
    ]);
    expect(three.slice(0, 3).map((r) => r.result?.asTypedArray('OUT', 'INT32')[0])).toEqual([0, 1, 2]);
    expect(three[0]?.result?.parameters.triton_final_response).toBe(false);
    expect(zero.map((r) => [r.id, r.final, r.empty, r.error])).toEqual([['d0', true, true, undefined]]);
    expect(negative).toHaveLength(1);
    expect(negative[0]?.final).toBe(true);
    expect(negative[0]?.error?.message).toBe('n must be >= 0');

    // Without triton_enable_empty_final_response nothing marks the end but the stream's end.
    const plain: StreamResponse[] = [];
    for await (const r of grpc.streamInfer([
      { modelName: 'py_decoupled', inputs: count(2), options: { requestId: 'p' } },
    ])) {
      plain.push(r);
    }
    expect(plain.map((r) => [r.id, r.final, r.result?.asTypedArray('OUT', 'INT32')[0]])).toEqual([
      ['p', false, 0],
      ['p', false, 1],
    ]);
  });
});
