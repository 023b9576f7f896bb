/**
 * A decoupled model over `ModelStreamInfer`: every response of each request, with its final flag.
 *
 *   npx tsx examples/decoupled-stream.ts localhost:8001 py_decoupled
 *
 * The model (`decoupledPythonModel()` of `@tritonserver-ts/server/testing`, or any model with the same
 * interface) takes INT32 `IN` [1] = n and answers n responses `OUT` = 0 … n−1, then the final flag.
 */
import { createGrpcClient } from '@tritonserver-ts/client/grpc';

const url = process.argv[2] ?? 'localhost:8001';
const model = process.argv[3] ?? 'py_decoupled';
const count = (n: number) => [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(n) }] as const;

const client = createGrpcClient({ url });
const stream = client.transport.openStream();
try {
  // inferAll: one request's responses until the one flagged final (an empty final response is asked for).
  for (const r of await stream.inferAll(model, count(3), { requestId: 'three' })) {
    if (r.error !== undefined) console.log(r.id, 'error', r.error.message);
    else console.log(r.id, r.empty ? '(empty)' : r.result?.asTypedArray('OUT', 'INT32')[0], 'final', r.final);
  }
  // A model error arrives in-band; the stream goes on.
  const [failed] = await stream.inferAll(model, count(-1), { requestId: 'negative' });
  console.log(failed?.id, 'error', failed?.error?.message, 'final', failed?.final);
} finally {
  stream.end();
  await client.close();
}
