/**
 * Errors of Python models as a Triton user meets them: every `TritonError` code reaches the client
 * as its HTTP status and gRPC code, an exception raised in `execute` or `initialize` shows in the
 * server log with its text (as Triton logs it), and a model that makes itself decoupled in
 * `auto_complete_config` and checks `pb_utils.using_decoupled_model_transaction_policy` loads.
 */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  decoupledPolicyPythonModel,
  errorCodePythonModel,
  initFailPythonModel,
} from '../../src/testing/index.js';
import { GrpcTestClient, int32Bytes, int32Values } from '../grpc/helpers.js';
import { inferJson, outputData, startPythonServer, type PythonTestServer } from './helpers.js';

let server: PythonTestServer;
let client: GrpcTestClient;

beforeAll(async () => {
  server = await startPythonServer(
    [
      errorCodePythonModel('py_codes'),
      initFailPythonModel('py_init_fail'),
      decoupledPolicyPythonModel('py_policy'),
    ],
    { grpcPort: 0 },
  );
  client = new GrpcTestClient(server.running.grpcUrl);
}, 60_000);

afterAll(async () => {
  client.close();
  await server.close();
});

const code = (n: number) => ({ inputs: [{ name: 'CODE', datatype: 'INT32', shape: [1], data: [n] }] });

/** Waits up to 5 s for a server log line matching `pattern`. */
async function logLine(pattern: RegExp): Promise<string | undefined> {
  for (let i = 0; i < 100; i++) {
    const line = server.logs.find((l) => pattern.test(l));
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

describe('TritonError codes', () => {
  it.each([
    [0, 'UNKNOWN', 400, GrpcStatus.UNKNOWN],
    [1, 'INTERNAL', 500, GrpcStatus.INTERNAL],
    [2, 'NOT_FOUND', 404, GrpcStatus.NOT_FOUND],
    [3, 'INVALID_ARG', 400, GrpcStatus.INVALID_ARGUMENT],
    [4, 'UNAVAILABLE', 503, GrpcStatus.UNAVAILABLE],
    [5, 'UNSUPPORTED', 501, GrpcStatus.UNIMPLEMENTED],
    [6, 'ALREADY_EXISTS', 400, GrpcStatus.ALREADY_EXISTS],
    [7, 'CANCELLED', 400, GrpcStatus.CANCELLED],
  ])('TritonError code %i (%s): HTTP %i, gRPC %i, the model’s message', async (n, _, http, grpc) => {
    const r = await inferJson(server.url, 'py_codes', code(n));
    expect(r.status).toBe(http);
    expect(r.body).toEqual({ error: `error code ${n}` });
    const error = await client
      .call('ModelInfer', {
        modelName: 'py_codes',
        inputs: [{ name: 'CODE', datatype: 'INT32', shape: [1n] }],
        rawInputContents: [int32Bytes([n])],
      })
      .then(
        () => undefined,
        (e: ServiceError) => e,
      );
    expect(error?.code).toBe(grpc);
    expect(error?.details).toBe(`error code ${n}`);
  });

  it('a plain answer still works', async () => {
    const r = await inferJson(server.url, 'py_codes', code(42));
    expect(outputData(r.body, 'OUT')).toEqual([42]);
  });
});

describe('exceptions in the server log', () => {
  it('execute: the client gets INTERNAL with the exception; the log has Triton’s line with it', async () => {
    const r = await inferJson(server.url, 'py_codes', code(-1));
    expect(r.status).toBe(500);
    expect(String(r.body.error)).toMatch(
      /^Failed to process the request\(s\) for model instance 'py_codes_0_0', message: RuntimeError: execute raised for code -1\n\nAt:\n {2}.*model\.py\(\d+\): execute\n$/,
    );
    const grpc = await client
      .call('ModelInfer', {
        modelName: 'py_codes',
        inputs: [{ name: 'CODE', datatype: 'INT32', shape: [1n] }],
        rawInputContents: [int32Bytes([-1])],
      })
      .then(
        () => undefined,
        (e: ServiceError) => e,
      );
    expect(grpc?.code).toBe(GrpcStatus.INTERNAL);
    expect(grpc?.details).toContain('RuntimeError: execute raised for code -1');
    const line = await logLine(
      /Failed to process the request\(s\) for model 'py_codes_0_0', message: RuntimeError/,
    );
    expect(line).toMatch(
      /^E.* Failed to process the request\(s\) for model 'py_codes_0_0', message: RuntimeError: execute raised for code -1\n/,
    );
    expect(line).toMatch(/model\.py\(\d+\): execute/);
  });

  it('initialize: the model is UNAVAILABLE and the log has the exception with its frame', async () => {
    const line = await logLine(/ValueError: initialize refused: py_init_fail/);
    expect(line).toMatch(/^E/);
    expect(line).toMatch(
      /ValueError: initialize refused: py_init_fail\n\nAt:\n {2}.*model\.py\(3\): initialize/,
    );
    const ready = await fetch(`${server.url}/v2/models/py_init_fail/ready`);
    expect(ready.status).toBe(400);
  });
});

describe('using_decoupled_model_transaction_policy', () => {
  it('a model made decoupled by auto_complete_config loads, reports decoupled and streams', async () => {
    const config = (await (await fetch(`${server.url}/v2/models/py_policy/config`)).json()) as {
      model_transaction_policy?: { decoupled?: boolean };
    };
    expect(config.model_transaction_policy?.decoupled).toBe(true);
    const { stream, answers, done } = client.collectingStream();
    stream.write({
      modelName: 'py_policy',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1n] }],
      rawInputContents: [int32Bytes([2])],
    });
    stream.end();
    await done;
    expect(answers.map((a) => int32Values(a.inferResponse?.rawOutputContents[0] as Uint8Array))).toEqual([
      [2],
      [2],
    ]);
  });
});
