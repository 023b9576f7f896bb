/**
 * BYTES elements that are not valid UTF-8, sent to an ONNX string model (`identity_string`, loaded
 * with a dynamic batcher that waits 300 ms so that concurrent requests share one execution) on the
 * real server: onnxruntime-node takes strings as text, so they are refused as bad input (HTTP 400,
 * gRPC INVALID_ARGUMENT) naming the input and the element, per request, before batching: the valid
 * requests batched with it are answered (a refusal at execution failed the whole batch with 500).
 */
import type { ModelInferResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { GrpcStatus, GrpcTestClient, grpcError, startGrpcTestServer } from '../grpc/helpers.js';
import { infer, type TestServer } from '../helpers/server.js';

let srv: TestServer & { grpcTarget: string };
let client: GrpcTestClient;

beforeAll(async () => {
  srv = await startGrpcTestServer({ only: ['identity_string'], modelControlMode: 'explicit' });
  await fetch(`${srv.url}/v2/repository/models/identity_string/load`, { method: 'POST', body: '{}' });
  const config = (await (await fetch(`${srv.url}/v2/models/identity_string/config`)).json()) as Record<
    string,
    unknown
  >;
  const batched = JSON.stringify({ ...config, dynamic_batching: { max_queue_delay_microseconds: 300_000 } });
  const load = await fetch(`${srv.url}/v2/repository/models/identity_string/load`, {
    method: 'POST',
    body: JSON.stringify({ parameters: { config: batched } }),
  });
  if (load.status !== 200) throw new Error(`load with a dynamic batcher: ${await load.text()}`);
  client = new GrpcTestClient(srv.grpcTarget);
});

afterAll(async () => {
  client.close();
  await srv.close();
});

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** `execution_count` of identity_string (executions of the model, one per batch). */
async function executions(): Promise<number> {
  const stats = (await (await fetch(`${srv.url}/v2/models/identity_string/stats`)).json()) as {
    model_stats: { execution_count: number }[];
  };
  return stats.model_stats[0]?.execution_count ?? 0;
}
const BAD = Uint8Array.of(0x70, 0xff, 0xfe); // 'p', then bytes no UTF-8 sequence starts with
const MESSAGE =
  "element 1 of BYTES input 'INPUT0' for model 'identity_string' is not valid UTF-8: the onnxruntime backend of tritonserver-ts passes strings to ONNX Runtime as text, so it accepts UTF-8 only";

function httpInfer(elements: Uint8Array[], id?: string): ReturnType<typeof infer> {
  return infer(
    srv.url,
    'identity_string',
    [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, elements.length], data: elements }],
    id === undefined ? {} : { requestId: id },
  );
}

function grpcRequest(elements: Uint8Array[], raw: boolean): object {
  const input = { name: 'INPUT0', datatype: 'BYTES', shape: [1n, BigInt(elements.length)] };
  if (!raw)
    return { modelName: 'identity_string', inputs: [{ ...input, contents: { bytesContents: elements } }] };
  const framed = Buffer.concat(
    elements.flatMap((e) => {
      const length = Buffer.alloc(4);
      length.writeUInt32LE(e.length);
      return [length, Buffer.from(e)];
    }),
  );
  return { modelName: 'identity_string', inputs: [input], rawInputContents: [new Uint8Array(framed)] };
}

describe('non-UTF-8 BYTES to an ONNX string model', () => {
  it('HTTP (binary data): 400 naming the input and the element', async () => {
    const r = await httpInfer([text('ok'), BAD]);
    expect(r.status).toBe(400);
    expect(r.error).toBe(MESSAGE);
    const withId = await httpInfer([text('ok'), BAD], 'req-7');
    expect(withId.error).toBe(`[request id: req-7] ${MESSAGE}`);
  });

  it.each([
    ['raw_input_contents', true],
    ['bytes_contents', false],
  ])('gRPC (%s): INVALID_ARGUMENT naming the input and the element', async (_, raw) => {
    const e = await grpcError(client.call('ModelInfer', grpcRequest([text('ok'), BAD], raw)));
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(e.details).toBe(MESSAGE);
  });

  it('refuses only the bad request: valid ones batched with it are answered', async () => {
    const before = await executions();
    const good = (i: number): Uint8Array[] => [text(`row ${i}`), text('crème brûlée')];
    const results = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => httpInfer(good(i))),
      httpInfer([text('ok'), BAD]),
      ...Array.from({ length: 6 }, (_, i) =>
        client.call<ModelInferResponse>('ModelInfer', grpcRequest(good(i), true)),
      ),
      grpcError(client.call('ModelInfer', grpcRequest([text('ok'), BAD], true))),
    ]);
    const http = results.slice(0, 7) as Awaited<ReturnType<typeof infer>>[];
    expect(http.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 400]);
    const grpc = results.slice(7, 13) as ModelInferResponse[];
    for (const response of grpc) expect(response.rawOutputContents).toHaveLength(1);
    expect((results[13] as { code: number }).code).toBe(GrpcStatus.INVALID_ARGUMENT);
    // The 12 valid requests were batched: fewer executions than requests.
    expect((await executions()) - before).toBeLessThan(12);
  });
});
