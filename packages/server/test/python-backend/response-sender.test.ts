/**
 * The response sender as Triton's response-sender cases use it: responses and the final flag sent
 * before `execute` returns, returned by it, and sent after it returned (from a thread, or from an
 * asyncio task of an `async def execute`), for decoupled and non-decoupled models, one request or
 * several in one `execute`. Over a gRPC stream (every case), and over HTTP and gRPC `ModelInfer`
 * for the non-decoupled ones. A case that hangs fails on its stream's deadline.
 */
import type { ModelStreamInferResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { responseSenderPythonModel } from '../../src/testing/index.js';
import { GrpcTestClient } from '../grpc/helpers.js';
import { inferJson, outputData, startPythonServer, type PythonTestServer } from './helpers.js';

/** [before, final before, return one, after, final after] (see responseSenderPythonModel). */
type Plan = readonly [number, number, number, number, number];

const ZERO_PRE: Plan = [0, 1, 0, 0, 0];
const ZERO_POST: Plan = [0, 0, 0, 0, 1];
const ONE_PRE: Plan = [1, 1, 0, 0, 0];
const ONE_POST: Plan = [0, 0, 0, 1, 1];
const TWO_PRE: Plan = [2, 1, 0, 0, 0];
const TWO_POST: Plan = [0, 0, 0, 2, 1];
const PRE_AND_POST: Plan = [1, 0, 0, 3, 1];
const ON_RETURN: Plan = [0, 0, 1, 0, 0];
const PRE_AND_ON_RETURN: Plan = [1, 1, 1, 0, 0];
const ON_AND_POST_RETURN: Plan = [0, 0, 1, 1, 1];

/** What one request got on the stream: INDEX values in order, and error messages. */
interface Outcome {
  readonly indexes: number[];
  readonly errors: string[];
}

let server: PythonTestServer;
let client: GrpcTestClient;

beforeAll(async () => {
  server = await startPythonServer(
    [
      responseSenderPythonModel('rs_decoupled', { decoupled: true, async: false }),
      responseSenderPythonModel('rs_decoupled_async', { decoupled: true, async: true }),
      responseSenderPythonModel('rs_plain', { decoupled: false, async: false }),
      responseSenderPythonModel('rs_plain_async', { decoupled: false, async: true }),
    ],
    { grpcPort: 0 },
  );
  client = new GrpcTestClient(server.running.grpcUrl);
}, 60_000);

afterAll(async () => {
  client.close();
  await server.close();
});

function planRequest(model: string, plan: Plan, id: string): object {
  return {
    modelName: model,
    id,
    inputs: [{ name: 'PLAN', datatype: 'INT32', shape: [1n, 5n] }],
    rawInputContents: [new Uint8Array(Int32Array.from(plan).buffer)],
  };
}

function indexOf(answer: ModelStreamInferResponse): number {
  const raw = answer.inferResponse?.rawOutputContents[0] as Uint8Array;
  return new Uint16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))[0] as number;
}

/**
 * Sends `plans` on one stream (requests r0, r1, …), half-closes it and waits for the server to end
 * it, which it does once every request is complete; a request that never completes makes this
 * reject after 6 s.
 */
async function streamPlans(model: string, plans: readonly Plan[]): Promise<Outcome[]> {
  const { stream, answers, done } = client.collectingStream();
  plans.forEach((plan, i) => stream.write(planRequest(model, plan, `r${i}`)));
  stream.end();
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      stream.cancel();
      reject(new Error(`the stream to ${model} did not end within 6 s: a request never completed`));
    }, 6000);
  });
  try {
    await Promise.race([done, hung]);
  } finally {
    clearTimeout(timer);
  }
  const outcomes = plans.map((): Outcome => ({ indexes: [], errors: [] }));
  for (const answer of answers) {
    const outcome = outcomes[Number(answer.inferResponse?.id.slice(1))];
    if (outcome === undefined)
      throw new Error(`an answer for an unknown request: ${answer.inferResponse?.id}`);
    if (answer.errorMessage !== '') outcome.errors.push(answer.errorMessage);
    else if ((answer.inferResponse?.outputs.length ?? 0) > 0) outcome.indexes.push(indexOf(answer));
  }
  return outcomes;
}

const ok = (...indexes: number[]): Outcome => ({ indexes, errors: [] });

describe.each(['rs_decoupled', 'rs_decoupled_async'])('decoupled %s over a gRPC stream', (model) => {
  it.each([
    ['the final flag before return', ZERO_PRE, ok()],
    ['the final flag after return', ZERO_POST, ok()],
    ['one response before return', ONE_PRE, ok(1000)],
    ['one response after return', ONE_POST, ok(2000)],
    ['two responses before return', TWO_PRE, ok(1000, 1001)],
    ['two responses after return', TWO_POST, ok(2000, 2001)],
    ['one response before and three after return', PRE_AND_POST, ok(1000, 2000, 2001, 2002)],
  ] as const)('%s', async (_, plan, expected) => {
    expect(await streamPlans(model, [plan])).toEqual([expected]);
  });

  it('seven requests in one execute, each answered its own way', async () => {
    const plans = [ZERO_PRE, ZERO_POST, ONE_PRE, ONE_POST, TWO_PRE, TWO_POST, PRE_AND_POST];
    expect(await streamPlans(model, plans)).toEqual([
      ok(),
      ok(),
      ok(1000),
      ok(2000),
      ok(1000, 1001),
      ok(2000, 2001),
      ok(1000, 2000, 2001, 2002),
    ]);
  });
});

describe('decoupled model returning responses (Triton: execute must return None)', () => {
  const mustReturnNone = 'using the decoupled mode and the execute function must return None';

  it('a returned response is an error for the request', async () => {
    const [outcome] = await streamPlans('rs_decoupled', [ON_RETURN]);
    expect(outcome?.indexes).toEqual([]);
    expect(outcome?.errors).toHaveLength(1);
    expect(outcome?.errors[0]).toContain(mustReturnNone);
  });

  it('after a response and the final flag, returning one changes nothing for the client', async () => {
    expect(await streamPlans('rs_decoupled', [PRE_AND_ON_RETURN])).toEqual([ok(1000)]);
  });

  it('returning one, then sending after return: only the error reaches the client', async () => {
    const [outcome] = await streamPlans('rs_decoupled', [ON_AND_POST_RETURN]);
    expect(outcome?.indexes).toEqual([]);
    expect(outcome?.errors).toHaveLength(1);
    expect(outcome?.errors[0]).toContain(mustReturnNone);
  });
});

describe.each(['rs_plain', 'rs_plain_async'])('non-decoupled %s', (model) => {
  it.each([
    ['one response returned', ON_RETURN, ok(0)],
    ['one response sent before return', ONE_PRE, ok(1000)],
    ['one response sent after return', ONE_POST, ok(2000)],
    ['two sent before return: the first is the answer, the error after it is dropped', TWO_PRE, ok(1000)],
    ['one sent with the final flag, then one returned: the sent one', PRE_AND_ON_RETURN, ok(1000)],
    ['one returned, then one sent after return: the returned one', ON_AND_POST_RETURN, ok(0)],
  ] as const)('gRPC stream: %s', async (_, plan, expected) => {
    expect(await streamPlans(model, [plan])).toEqual([expected]);
  });

  it('gRPC stream: three requests in one execute (returned, sent before, sent after)', async () => {
    expect(await streamPlans(model, [ON_RETURN, ONE_PRE, ONE_POST])).toEqual([ok(0), ok(1000), ok(2000)]);
  });

  it('gRPC stream: the final flag without a response is an error', async () => {
    const [outcome] = await streamPlans(model, [ZERO_PRE]);
    expect(outcome?.indexes).toEqual([]);
    expect(outcome?.errors[0]).toContain(
      'Non-decoupled model cannot send complete final before sending a response',
    );
  });

  it.each([
    ['returned', ON_RETURN, 0],
    ['sent before return', ONE_PRE, 1000],
    ['sent after return', ONE_POST, 2000],
  ] as const)('HTTP and gRPC ModelInfer: the response %s', async (_, plan, index) => {
    const http = await inferJson(server.url, model, {
      inputs: [{ name: 'PLAN', datatype: 'INT32', shape: [1, 5], data: [...plan] }],
    });
    expect(http.status).toBe(200);
    expect(outputData(http.body, 'INDEX')).toEqual([index]);
    const grpc = await client.call<{ rawOutputContents: Uint8Array[] }>(
      'ModelInfer',
      planRequest(model, plan, 'u'),
    );
    const raw = grpc.rawOutputContents[0] as Uint8Array;
    expect(new Uint16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + 2))[0]).toBe(index);
  });

  it('HTTP: the final flag without a response answers 500 with the sender’s message', async () => {
    const r = await inferJson(server.url, model, {
      inputs: [{ name: 'PLAN', datatype: 'INT32', shape: [1, 5], data: [...ZERO_PRE] }],
    });
    expect(r.status).toBe(500);
    expect(String(r.body.error)).toContain(
      `Failed to process the request(s) for model instance '${model}_0_0', message: TritonModelException: Unable to send response. Non-decoupled model cannot send complete final before sending a response.`,
    );
  });
});
