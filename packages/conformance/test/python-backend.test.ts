import { afterAll, describe, expect, it } from 'vitest';
import type { InferInput } from '@tritonserver-ts/client';
import type { GrpcTransport } from '@tritonserver-ts/client/grpc';
import { newClient, transports } from './target.js';
import { differsOver, expectServerError, type TritonErrorKind } from './transport-differences.js';

/**
 * The Python backend as Triton's own Python-backend tests use it, with the generated models of
 * scripts/repository.ts: response parameters, `TritonError` codes and an exception in `execute`,
 * the response sender before and after `execute` returns, `async def execute` and a model made
 * decoupled by `auto_complete_config`. Wire-visible results only, so a real Triton answers the same.
 */

/** PLAN of the response-sender models: [before, final before, return one, after, final after]. */
const plan = (p: readonly number[]): InferInput[] => [
  { name: 'PLAN', datatype: 'INT32', shape: [1, 5], data: Int32Array.from(p) },
];
const text = (value: string): InferInput[] => [
  { name: 'PARAMETERS', datatype: 'BYTES', shape: [1], data: [value] },
];
const code = (n: number): InferInput[] => [
  { name: 'CODE', datatype: 'INT32', shape: [1], data: Int32Array.of(n) },
];
/** Eight rows (the model's max_batch_size), so no two requests share an `execute` call. */
const wait = (seconds: number): InferInput[] => [
  { name: 'WAIT_SECONDS', datatype: 'FP32', shape: [8, 1], data: new Float32Array(8).fill(seconds) },
];

const KINDS: readonly TritonErrorKind[] = [
  'UNKNOWN',
  'INTERNAL',
  'NOT_FOUND',
  'INVALID_ARG',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'ALREADY_EXISTS',
  'CANCELLED',
];

describe.each(transports)('%s: Python backend', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it('InferenceResponse(parameters=…) reaches the client as the response parameters', async () => {
    const result = await client.infer(
      'py_response_parameters',
      text('{"bool": true, "str": "Hello World!", "int": 1024, "neg": -5}'),
    );
    expect(result.parameters).toEqual({ bool: true, str: 'Hello World!', int: 1024, neg: -5 });
    // What the model read back with response.parameters().
    expect(result.asStrings('OUTPUT')).toEqual([
      '{"bool": true, "str": "Hello World!", "int": 1024, "neg": -5}',
    ]);
  });

  it.each([
    ['a list', '[]', ", got <class 'list'>"],
    ['an int key', '{"#1": "x"}', "Expect parameters keys to have type str, found type <class 'int'>"],
    [
      'a float value',
      '{"f": 0.5}',
      "Expect parameters values to have type bool/int/str, found type <class 'float'>",
    ],
    [
      'a null value',
      '{"n": null}',
      "Expect parameters values to have type bool/int/str, found type <class 'NoneType'>",
    ],
  ])('response parameters with %s are refused with Triton’s message', async (_, value, message) => {
    const error = await expectServerError(
      client.infer('py_response_parameters', text(value)),
      transport,
      'INVALID_ARG',
    );
    expect(error.message).toContain(message);
  });

  it.each(KINDS.map((kind, n) => [n, kind] as const))(
    'TritonError code %i is the client’s %s with the model’s message',
    async (n, kind) => {
      const error = await expectServerError(client.infer('py_error_code', code(n)), transport, kind);
      expect(error.message).toBe(`error code ${n}`);
    },
  );

  it('an exception raised in execute is INTERNAL with its type, message and frame', async () => {
    const error = await expectServerError(client.infer('py_error_code', code(-1)), transport, 'INTERNAL');
    expect(error.message).toMatch(
      /^Failed to process the request\(s\) for model instance 'py_error_code_0_0', message: RuntimeError: execute raised for code -1\n\nAt:\n.*model\.py\(\d+\): execute\n$/,
    );
  });

  it.each([
    ['returned by execute', [0, 0, 1, 0, 0], 0],
    ['sent with the final flag before execute returns', [1, 1, 0, 0, 0], 1000],
    ['sent after execute returned', [0, 0, 0, 1, 1], 2000],
  ])('a non-decoupled model’s one response %s', async (_, p, index) => {
    const result = await client.infer('py_response_sender', plan(p));
    expect(Array.from(result.asTypedArray('INDEX', 'UINT16'))).toEqual([index]);
  });

  it('a model made decoupled by auto_complete_config (using_decoupled_model_transaction_policy) loads', async () => {
    expect(await client.isModelReady('py_decoupled_policy')).toBe(true);
    const config = await client.getModelConfig('py_decoupled_policy');
    expect(config.model_transaction_policy?.decoupled).toBe(true);
  });

  if (!differsOver(transport, 'model-stream-infer')) return;

  it('decoupled response sender: before, after and around execute returning, several requests in one execute', async () => {
    for (const model of ['py_response_sender_decoupled', 'py_response_sender_decoupled_async']) {
      const stream = (client.transport as GrpcTransport).openStream();
      const cases = [
        [0, 0, 0, 0, 1],
        [1, 1, 0, 0, 0],
        [0, 0, 0, 1, 1],
        [0, 0, 0, 2, 1],
        [1, 0, 0, 3, 1],
      ];
      const all = await Promise.all(
        cases.map((p, i) => stream.inferAll(model, plan(p), { requestId: `r${i}` })),
      );
      stream.end();
      const indexes = all.map((responses) =>
        responses.filter((r) => !r.empty).map((r) => r.result?.asTypedArray('INDEX', 'UINT16')[0]),
      );
      expect(indexes, model).toEqual([[], [1000], [2000], [2000, 2001], [1000, 2000, 2001, 2002]]);
      expect(
        all.map((responses) => responses.at(-1)?.final),
        model,
      ).toEqual([true, true, true, true, true]);
    }
  });

  it('decoupled response parameters come with triton_final_response', async () => {
    const stream = (client.transport as GrpcTransport).openStream();
    const responses = await stream.inferAll(
      'py_response_parameters_decoupled',
      text('[{"bool": false, "int": 2048}, {"str": "Hello World!"}]'),
    );
    stream.end();
    const sent = responses.filter((r) => !r.empty);
    expect(sent.map((r) => r.result?.parameters)).toEqual([
      { bool: false, int: 2048, triton_final_response: false },
      { str: 'Hello World!', triton_final_response: false },
    ]);
  });

  it('async def execute of a decoupled model serves requests in flight concurrently', async () => {
    const stream = (client.transport as GrpcTransport).openStream();
    const t0 = Date.now();
    const all = await Promise.all(
      [0, 1, 2, 3].map((i) => stream.inferAll('py_async_execute', wait(1), { requestId: `w${i}` })),
    );
    stream.end();
    // One after the other they need 4 s.
    expect(Date.now() - t0).toBeLessThan(2500);
    expect(all.map((responses) => responses.filter((r) => !r.empty).length)).toEqual([1, 1, 1, 1]);
  });
});
