/**
 * A decoupled model's responses over either wire, consumed the same way: an async iterable. Over
 * HTTP through Triton's generate extension (`client.generateStream`, Server-Sent Events), over gRPC
 * through `ModelStreamInfer` (the stream API).
 *
 *   npx tsx examples/decoupled-both.ts localhost:8000 localhost:8001 py_decoupled
 *
 * The model (`decoupledPythonModel()` of `@tritonserver-ts/server/testing`, or any model with the same
 * interface) takes INT32 `IN` [1] = n and answers n responses `OUT` = 0 … n−1, then the final flag.
 */
import { TritonClient } from '@tritonserver-ts/client';
import { createGrpcClient, type GrpcTransport } from '@tritonserver-ts/client/grpc';

const [httpUrl = 'localhost:8000', grpcUrl = 'localhost:8001', model = 'py_decoupled'] =
  process.argv.slice(2);

/** Every `OUT` of one request for n responses, as they arrive, whatever the client's wire. */
async function* outs(client: TritonClient, n: number, signal?: AbortSignal): AsyncGenerator<number> {
  if (client.transport.kind === 'http') {
    // One event per response; single-element outputs come as scalars.
    for await (const response of client.generateStream(model, { IN: n }, signal ? { signal } : {})) {
      yield Number(response.values.OUT);
    }
    return;
  }
  const stream = (client.transport as GrpcTransport).openStream(signal ? { signal } : {});
  try {
    const input = { name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(n) } as const;
    stream.send(model, [input], { enableEmptyFinalResponse: true });
    for await (const response of stream) {
      if (response.error !== undefined) throw response.error; // the model's in-band error
      if (!response.empty) yield response.result?.asTypedArray('OUT', 'INT32')[0] ?? NaN;
      if (response.final) break;
    }
  } finally {
    stream.end();
  }
}

const http = new TritonClient({ url: httpUrl });
const grpc = createGrpcClient({ url: grpcUrl });
try {
  for (const client of [http, grpc]) {
    const seen: number[] = [];
    for await (const out of outs(client, 3)) seen.push(out);
    console.log(client.transport.kind, seen.join(' '));
  }
} finally {
  await http.close();
  await grpc.close();
}
