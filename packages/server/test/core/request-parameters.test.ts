/**
 * The request parameters a model sees, as in Triton's `qa/L0_parameters`, on the real server over
 * HTTP and gRPC (`py_add` echoes them in its INFO output, directly and as an ensemble step): the
 * front ends' own parameters (`binary_data_output`, `triton_enable_empty_final_response`, the
 * sequence / priority / timeout fields) never reach it; `--http-header-forward-pattern` and
 * `--grpc-header-forward-pattern` add matching headers as string parameters, case-insensitively
 * unless the pattern starts with `(?-i)`; a forwarded header with a reserved name is refused with
 * 400 / INVALID_ARGUMENT.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { Metadata } from '@grpc/grpc-js';
import { encodeInferRequest } from '@tritonserver-ts/protocol/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs } from '../../src/cli-args.js';
import { compileHeaderForwardPattern } from '../../src/core/header-forward.js';
import { addSubPythonModel, writePythonModels } from '../../src/testing/index.js';
import { step } from '../ensemble/fixtures.js';
import { GrpcStatus, GrpcTestClient, grpcError } from '../grpc/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PYTHON = '/usr/bin/python3';

/** py_add plus `ens` (A, B → py_add → INFO), so the parameters are seen through an ensemble too. */
async function fill(root: string): Promise<void> {
  await writePythonModels(root, [addSubPythonModel('py_add')]);
  await mkdir(join(root, 'ens', '1'), { recursive: true });
  await writeFile(
    join(root, 'ens', 'config.pbtxt'),
    `name: "ens"
platform: "ensemble"
max_batch_size: 0
input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "B" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "INFO" data_type: TYPE_STRING dims: [ 1 ] } ]
ensemble_scheduling { step [ ${step('py_add', { INPUT0: 'A', INPUT1: 'B' }, { INFO: 'INFO' })} ] }
`,
  );
}

async function start(pattern: string | undefined): Promise<TestServer> {
  const compiled = pattern === undefined ? undefined : compileHeaderForwardPattern(pattern, 'test');
  return startTestServer({
    fill,
    grpcPort: 0,
    python: { interpreter: PYTHON },
    ...(compiled !== undefined
      ? { httpHeaderForwardPattern: compiled, grpc: { headerForwardPattern: compiled } }
      : {}),
  });
}

const inputs = [
  { name: 'INPUT0', datatype: 'FP32' as const, shape: [4], data: new Float32Array([1, 2, 3, 4]) },
  { name: 'INPUT1', datatype: 'FP32' as const, shape: [4], data: new Float32Array([1, 1, 1, 1]) },
];

/** The request parameters the model saw (INFO is "<id>|<correlation id>|<flags>|<parameters>"). */
function seenParameters(info: string): Record<string, unknown> {
  const json = info.split('|').slice(3).join('|');
  return JSON.parse(json) as Record<string, unknown>;
}

/** A JSON HTTP request to `model` (py_add or ens); returns the status and the parameters seen. */
async function httpSeen(
  server: TestServer,
  model: 'py_add' | 'ens',
  parameters: Record<string, unknown>,
  headers: [string, string][] = [],
  listOutputs = model === 'py_add',
): Promise<{ status: number; seen?: Record<string, unknown>; error?: string }> {
  const names = model === 'ens' ? ['A', 'B'] : ['INPUT0', 'INPUT1'];
  const body = {
    parameters,
    inputs: inputs.map((i, k) => ({ name: names[k], datatype: 'FP32', shape: [4], data: [...i.data] })),
    // A listed output is answered in JSON whatever binary_data_output says.
    ...(listOutputs ? { outputs: [{ name: 'INFO' }] } : {}),
  };
  const response = await fetch(`${server.url}/v2/models/${model}/infer`, {
    method: 'POST',
    headers: [['content-type', 'application/json'], ...headers],
    body: JSON.stringify(body),
  });
  const parsed = (await response.json()) as { outputs?: { name: string; data: string[] }[]; error?: string };
  const info = parsed.outputs?.find((o) => o.name === 'INFO')?.data[0];
  return {
    status: response.status,
    ...(info !== undefined ? { seen: seenParameters(info) } : {}),
    ...(parsed.error !== undefined ? { error: parsed.error } : {}),
  };
}

function grpcRequest(model: 'py_add' | 'ens', parameters: Record<string, object> = {}): object {
  const names = model === 'ens' ? ['A', 'B'] : ['INPUT0', 'INPUT1'];
  return {
    modelName: model,
    parameters,
    inputs: inputs.map((i, k) => ({
      name: names[k],
      datatype: 'FP32',
      shape: [4n],
      contents: { fp32Contents: [...i.data] },
    })),
    outputs: [{ name: 'INFO' }],
  };
}

function grpcInfo(response: { rawOutputContents: Uint8Array[] }): Record<string, unknown> {
  const raw = response.rawOutputContents[0] as Uint8Array;
  return seenParameters(Buffer.from(raw.subarray(4)).toString());
}

function metadata(pairs: Record<string, string>): Metadata {
  const m = new Metadata();
  for (const [k, v] of Object.entries(pairs)) m.set(k, v);
  return m;
}

const FORWARD_HEADERS: Record<string, string> = {
  header_1: 'value_1',
  my_header_1: 'my_value_1',
  // Triton's value ends in a space too; Node's HTTP/1 and HTTP/2 parsers trim a value's outer
  // whitespace (RFC 9110 / 9113), so it is left out here.
  my_header_2: 'This is a "quoted" string with a backslash\\',
};

describe('parameters of the front ends never reach the model', () => {
  let server: TestServer;
  let client: GrpcTestClient;
  beforeAll(async () => {
    server = await start(undefined);
    client = new GrpcTestClient(server.running.grpcUrl);
  }, 60_000);
  afterAll(async () => {
    client.close();
    await server.close();
  });

  it('HTTP: binary_data_output (JSON and binary bodies) and the sequence/priority/timeout fields are not request parameters', async () => {
    const json = await httpSeen(server, 'py_add', {
      binary_data_output: false,
      key1: 'value1',
      key2: 2,
      sequence_id: 5,
      sequence_start: true,
      priority: 1,
      timeout: 100000000,
    });
    expect(json.status).toBe(200);
    expect(json.seen).toEqual({ key1: 'value1', key2: 2 });

    // The binary codec sets binary_data_output itself when no outputs are listed.
    const encoded = encodeInferRequest(inputs, { parameters: { key1: true } });
    const response = await fetch(`${server.url}/v2/models/py_add/infer`, {
      method: 'POST',
      headers:
        encoded.headerLength !== undefined
          ? { 'Inference-Header-Content-Length': String(encoded.headerLength) }
          : {},
      body: encoded.body,
    });
    expect(response.status).toBe(200);
    const text = Buffer.from(await response.arrayBuffer()).toString('latin1');
    expect(text).toContain('|{"key1":true}');
    expect(text).not.toContain('binary_data_output');
  });

  it('through an ensemble the step sees the same parameters', async () => {
    const r = await httpSeen(server, 'ens', { binary_data_output: true, key1: 'x' }, [], true);
    expect(r.status).toBe(200);
    expect(r.seen).toEqual({ key1: 'x' });
  });

  it('gRPC: triton_enable_empty_final_response (stream) and the sequence fields are not request parameters', async () => {
    const unary = await client.call<{ rawOutputContents: Uint8Array[] }>(
      'ModelInfer',
      grpcRequest('py_add', {
        key1: { parameterChoice: { case: 'stringParam', value: 'value1' } },
        sequence_id: { parameterChoice: { case: 'int64Param', value: 3n } },
      }),
    );
    expect(grpcInfo(unary)).toEqual({ key1: 'value1' });
    const { stream, answers, done } = client.collectingStream();
    stream.write(
      grpcRequest('py_add', {
        triton_enable_empty_final_response: { parameterChoice: { case: 'boolParam', value: true } },
      }),
    );
    stream.end();
    await done;
    const first = answers[0]?.inferResponse;
    expect(first).toBeDefined();
    expect(grpcInfo(first as { rawOutputContents: Uint8Array[] })).toEqual({});
  });
});

describe('headers forwarded as parameters (case-insensitive pattern my_header.*)', () => {
  let server: TestServer;
  let client: GrpcTestClient;
  beforeAll(async () => {
    server = await start('my_header.*|^sequence_id$|^headers$|^binary_data_output$|^triton_');
    client = new GrpcTestClient(server.running.grpcUrl);
  }, 60_000);
  afterAll(async () => {
    client.close();
    await server.close();
  });

  it('HTTP: only the matching headers, in any case, as string parameters; also through an ensemble', async () => {
    for (const model of ['py_add', 'ens'] as const) {
      const r = await httpSeen(server, model, { key1: 1 }, [
        ...Object.entries(FORWARD_HEADERS),
        ['MY_HEADER_3', 'upper'],
      ]);
      expect(r.status).toBe(200);
      expect(r.seen).toEqual({
        key1: 1,
        my_header_1: 'my_value_1',
        my_header_2: FORWARD_HEADERS.my_header_2,
        MY_HEADER_3: 'upper',
      });
    }
  });

  it('gRPC: matching metadata, unary and stream', async () => {
    const unary = await client.call<{ rawOutputContents: Uint8Array[] }>(
      'ModelInfer',
      grpcRequest('py_add'),
      metadata(FORWARD_HEADERS),
    );
    expect(grpcInfo(unary)).toEqual({ my_header_1: 'my_value_1', my_header_2: FORWARD_HEADERS.my_header_2 });
    const { stream, answers, done } = client.collectingStream(metadata({ my_header_9: 'streamed' }));
    stream.write(grpcRequest('ens'));
    stream.end();
    await done;
    expect(grpcInfo(answers[0]?.inferResponse as { rawOutputContents: Uint8Array[] })).toEqual({
      my_header_9: 'streamed',
    });
  });

  it('a forwarded header with a reserved name is refused: 400 over HTTP, INVALID_ARGUMENT over gRPC', async () => {
    for (const name of ['sequence_id', 'headers', 'binary_data_output', 'triton_injected_via_header']) {
      const r = await httpSeen(server, 'py_add', {}, [[name, 'dummy-value']]);
      expect(r.status).toBe(400);
      expect(r.error).toContain('reserved for Triton usage');
      const e = await grpcError(
        client.call('ModelInfer', grpcRequest('py_add'), metadata({ [name]: 'dummy-value' })),
      );
      expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(e.details).toContain('reserved for Triton usage');
    }
  });
});

describe('a case-sensitive pattern: (?-i)MY_HEADER.*', () => {
  let server: TestServer;
  let client: GrpcTestClient;
  beforeAll(async () => {
    server = await start('(?-i)MY_HEADER.*');
    client = new GrpcTestClient(server.running.grpcUrl);
  }, 60_000);
  afterAll(async () => {
    client.close();
    await server.close();
  });

  it('HTTP forwards the header written in upper case only; gRPC metadata keys are lower case, so none', async () => {
    const r = await httpSeen(server, 'py_add', {}, [
      ['MY_HEADER_1', 'upper'],
      ['my_header_2', 'lower'],
    ]);
    expect(r.seen).toEqual({ MY_HEADER_1: 'upper' });
    const unary = await client.call<{ rawOutputContents: Uint8Array[] }>(
      'ModelInfer',
      grpcRequest('py_add'),
      metadata(FORWARD_HEADERS),
    );
    expect(grpcInfo(unary)).toEqual({});
  });
});

describe('the flags', () => {
  it('--http-header-forward-pattern and --grpc-header-forward-pattern take Triton patterns, (?-i) included', () => {
    const options = parseArgs([
      '--model-repository=/tmp/none',
      '--http-header-forward-pattern',
      '(?-i)MY_HEADER.*',
      '--grpc-header-forward-pattern',
      '(?-i)MY_HEADER.*',
    ]);
    expect(options.server.httpHeaderForwardPattern?.flags).toBe('');
    expect(options.server.httpHeaderForwardPattern?.test('MY_HEADER_1')).toBe(true);
    expect(options.server.httpHeaderForwardPattern?.test('my_header_1')).toBe(false);
    expect(options.server.grpc?.headerForwardPattern?.flags).toBe('');
    const insensitive = parseArgs(['--model-repository=/tmp/none', '--http-header-forward-pattern=MY_.*']);
    expect(insensitive.server.httpHeaderForwardPattern?.test('my_header')).toBe(true);
    expect(() => parseArgs(['--model-repository=/tmp/none', '--http-header-forward-pattern=('])).toThrow(
      CliUsageError,
    );
  });
});
