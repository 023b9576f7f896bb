import { afterAll, describe, expect, it } from 'vitest';
import { TritonServerError, type InferInput } from '@tritonserver-ts/client';
import { GrpcTransport, type StreamRequest, type StreamResponse } from '@tritonserver-ts/client/grpc';
import { newClient, transports } from './target.js';
import { differsOver } from './transport-differences.js';

const ones = new Int32Array(16).fill(1);
const inputs = (x: number): InferInput[] => [
  { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(x) },
  { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: ones },
];

describe.each(transports)('%s: ModelStreamInfer', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

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
});
