/**
 * `InferenceResponse(output_tensors, parameters={...})`: the parameters reach the client as the
 * HTTP response's JSON `parameters` and the gRPC response's `parameters` map (bool, int64 and
 * string values, int64 beyond 2^53 exact), on a decoupled stream beside `triton_final_response`,
 * and a BLS caller reads them with `response.parameters()`. Keys and values Triton refuses are
 * refused with its messages.
 */
import type { InferParameter, ModelInferResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { GeneratedPythonModel } from '../../src/testing/index.js';
import { responseParametersPythonModel } from '../../src/testing/index.js';
import { GrpcTestClient } from '../grpc/helpers.js';
import { inferJson, outputData, startPythonServer, type PythonTestServer } from './helpers.js';

/** BLS: calls `rp` with its PARAMETERS and answers OUTPUT = the callee's `response.parameters()`. */
const blsCaller: GeneratedPythonModel = {
  name: 'rp_bls',
  files: {
    'config.pbtxt': `name: "rp_bls"\nbackend: "python"\nmax_batch_size: 0\ninput [ { name: "PARAMETERS" data_type: TYPE_STRING dims: [ 1 ] } ]\noutput [ { name: "OUTPUT" data_type: TYPE_STRING dims: [ 1 ] } ]\ninstance_group [ { kind: KIND_CPU count: 1 } ]\n`,
    '1/model.py': `import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            call = pb_utils.InferenceRequest(
                model_name="rp",
                inputs=[pb_utils.get_input_tensor_by_name(request, "PARAMETERS")],
                requested_output_names=["OUTPUT"],
            )
            answer = call.exec()
            text = answer.error().message() if answer.has_error() else answer.parameters()
            out = pb_utils.Tensor("OUTPUT", np.array([text.encode()], dtype=np.object_))
            responses.append(pb_utils.InferenceResponse([out]))
        return responses
`,
  },
};

let server: PythonTestServer;
let client: GrpcTestClient;

beforeAll(async () => {
  server = await startPythonServer(
    [
      responseParametersPythonModel('rp'),
      responseParametersPythonModel('rp_decoupled', { decoupled: true }),
      blsCaller,
    ],
    { grpcPort: 0 },
  );
  client = new GrpcTestClient(server.running.grpcUrl);
}, 60_000);

afterAll(async () => {
  client.close();
  await server.close();
});

const json = (text: string) => ({
  inputs: [{ name: 'PARAMETERS', datatype: 'BYTES', shape: [1], data: [text] }],
});

function grpcRequest(model: string, text: string): object {
  const bytes = Buffer.from(text, 'utf8');
  const element = Buffer.alloc(4 + bytes.byteLength);
  element.writeUInt32LE(bytes.byteLength, 0);
  bytes.copy(element, 4);
  return {
    modelName: model,
    inputs: [{ name: 'PARAMETERS', datatype: 'BYTES', shape: [1n] }],
    rawInputContents: [element],
  };
}

/** A gRPC parameters map as plain values. */
function plain(parameters: Record<string, InferParameter>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(parameters).map(([k, p]) => [k, p.parameterChoice.value]));
}

const WANTED = {
  bool: true,
  str: 'Hello World!',
  int: 1024,
  negative: -7,
  empty: '',
  big: 9007199254740993n,
};
const WANTED_TEXT =
  '{"bool": true, "str": "Hello World!", "int": 1024, "negative": -7, "empty": "", "big": 9007199254740993}';

describe('response parameters', () => {
  it('HTTP: the JSON `parameters` of the response (int64 beyond 2^53 exact)', async () => {
    const response = await fetch(`${server.url}/v2/models/rp/infer`, {
      method: 'POST',
      body: JSON.stringify(json(WANTED_TEXT)),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain(
      '"parameters":{"bool":true,"str":"Hello World!","int":1024,"negative":-7,"empty":"","big":9007199254740993}',
    );
    const body = JSON.parse(text) as Record<string, unknown>;
    // What the model read back from response.parameters(): Python's json.dumps of the dict.
    expect(outputData(body, 'OUTPUT')).toEqual([WANTED_TEXT]);
  });

  it('HTTP binary outputs: the parameters are in the JSON header', async () => {
    const response = await fetch(`${server.url}/v2/models/rp/infer`, {
      method: 'POST',
      body: JSON.stringify({
        ...json('{"n": 1}'),
        outputs: [{ name: 'OUTPUT', parameters: { binary_data: true } }],
      }),
    });
    const length = Number(response.headers.get('inference-header-content-length'));
    const header = JSON.parse(
      Buffer.from(await response.arrayBuffer())
        .subarray(0, length)
        .toString(),
    ) as {
      parameters?: unknown;
    };
    expect(header.parameters).toEqual({ n: 1 });
  });

  it('HTTP: no parameters, no `parameters` member', async () => {
    const r = await inferJson(server.url, 'rp', json('{}'));
    expect(r.status).toBe(200);
    expect(r.body.parameters).toBeUndefined();
    expect(outputData(r.body, 'OUTPUT')).toEqual(['{}']);
  });

  it('gRPC ModelInfer: the response `parameters` map (bool_param, int64_param, string_param)', async () => {
    const r = await client.call<ModelInferResponse>('ModelInfer', grpcRequest('rp', WANTED_TEXT));
    expect(plain(r.parameters)).toEqual({ ...WANTED, int: 1024n, negative: -7n });
    expect(r.parameters.bool?.parameterChoice.case).toBe('boolParam');
    expect(r.parameters.int?.parameterChoice.case).toBe('int64Param');
    expect(r.parameters.str?.parameterChoice.case).toBe('stringParam');
  });

  it('gRPC stream, decoupled: each response its own parameters beside triton_final_response', async () => {
    const { stream, answers, done } = client.collectingStream();
    stream.write(grpcRequest('rp_decoupled', '[{"bool": false, "int": 2048}, {"str": "second"}]'));
    stream.end();
    await done;
    expect(answers.map((a) => a.errorMessage)).toEqual(['', '']);
    expect(answers.map((a) => plain(a.inferResponse?.parameters ?? {}))).toEqual([
      { bool: false, int: 2048n, triton_final_response: false },
      { str: 'second', triton_final_response: false },
    ]);
  });

  it('BLS: the caller reads the callee’s parameters with response.parameters()', async () => {
    const r = await inferJson(server.url, 'rp_bls', json('{"from": "callee", "n": 3}'));
    expect(r.status).toBe(200);
    expect(outputData(r.body, 'OUTPUT')).toEqual(['{"from": "callee", "n": 3}']);
  });

  it.each([
    ['a list instead of a dict', '[]', ", got <class 'list'>"],
    ['an int key', '{"#1": "int key"}', "Expect parameters keys to have type str, found type <class 'int'>"],
    [
      'a float value',
      '{"int": 2, "float": 0.5}',
      "Expect parameters values to have type bool/int/str, found type <class 'float'>",
    ],
    [
      'a None value',
      '{"bool": true, "null": null}',
      "Expect parameters values to have type bool/int/str, found type <class 'NoneType'>",
    ],
    [
      'a nested list',
      '{"str": "", "list": ["variable"]}',
      "Expect parameters values to have type bool/int/str, found type <class 'list'>",
    ],
  ])('refuses %s with Triton’s message (HTTP 400, gRPC INVALID_ARGUMENT)', async (_, text, message) => {
    const http = await inferJson(server.url, 'rp', json(text));
    expect(http.status).toBe(400);
    expect(String(http.body.error)).toContain(message);
    const grpc = await client.call('ModelInfer', grpcRequest('rp', text)).then(
      () => undefined,
      (error: { code: number; details: string }) => error,
    );
    expect(grpc?.code).toBe(3);
    expect(grpc?.details).toContain(message);
  });
});
