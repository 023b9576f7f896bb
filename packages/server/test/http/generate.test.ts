/**
 * `POST v2/models/{m}[/versions/{v}]/generate` against the real server (generated ONNX and Python
 * models): the body mapped onto the model's inputs (scalars, arrays spread over the shape, BYTES from
 * strings, parameters beside and inside `parameters`), the response object (key order, single
 * elements as scalars), a decoupled model's one response or tritonserver's error for several, the
 * refusals before the core accepted the request (plain JSON, Triton's statuses and messages), the
 * body limits shared with `/infer`, statistics and metrics counting these requests, and the server
 * metadata's extensions (tritonserver lists no generate extension); traces as for `/infer`.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  addSubPythonModel,
  decoupledPythonModel,
  wordStreamPythonModel,
  writePythonModels,
  writeTestModelRepository,
} from '../../src/testing/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const MAX_INPUT = 64 * 1024;
let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({
    httpMaxInputSize: MAX_INPUT,
    metricsPort: 0,
    fill: async (dir) => {
      await writeTestModelRepository(dir, { only: ['simple', 'identity_fp64'] });
      await writePythonModels(dir, [
        addSubPythonModel('py_add'),
        decoupledPythonModel('py_decoupled'),
        wordStreamPythonModel(),
      ]);
    },
  });
}, 120_000);

afterAll(async () => {
  await srv.close();
});

interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
}

async function generate(model: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const r = await fetch(`${srv.url}/v2/models/${model}/generate`, { method: 'POST', body, headers });
  return { status: r.status, contentType: r.headers.get('content-type'), text: await r.text() };
}

const ones = (n: number, v = 1): number[] => new Array<number>(n).fill(v);

describe('generate: the JSON mapping', () => {
  it('maps arrays onto a batching model (shape [1, 16]) and answers the sorted response object', async () => {
    const a = await generate('simple', JSON.stringify({ INPUT0: [...Array(16).keys()], INPUT1: ones(16) }));
    expect(a.status).toBe(200);
    expect(a.contentType).toBe('application/json');
    expect(a.text).toBe(
      `{"OUTPUT0":${JSON.stringify([...Array(16).keys()].map((i) => i + 1))},"OUTPUT1":${JSON.stringify([...Array(16).keys()].map((i) => i - 1))},"model_name":"simple","model_version":"1"}`,
    );
    // By version, with an id: `id` is the request id, echoed in the response.
    const r = await fetch(`${srv.url}/v2/models/simple/versions/1/generate`, {
      method: 'POST',
      body: JSON.stringify({ id: 'q-1', INPUT0: ones(16), INPUT1: ones(16) }),
    });
    expect(await r.json()).toMatchObject({ id: 'q-1', model_name: 'simple', model_version: '1' });
  });

  it('hands the other members to the model as parameters (also those in `parameters`), single elements as scalars', async () => {
    const a = await generate(
      'py_add',
      '{"INPUT0":[1,2,3,4],"temperature":0.5,"parameters":{"INPUT1":[1,1,1,1],"stop":"x","n":2,"stream":false,"timeout":1,"triton_x":1}}',
    );
    expect(a.status).toBe(200);
    const body = JSON.parse(a.text) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['INFO', 'OUTPUT0', 'OUTPUT1', 'model_name', 'model_version']);
    expect(body.OUTPUT0).toEqual([2, 3, 4, 5]);
    expect(body.OUTPUT1).toEqual([0, 1, 2, 3]);
    // INFO (BYTES [1]) is a scalar: "<id>|<correlation id>|<flags>|<parameters>". As in tritonserver,
    // `timeout` and `triton_` keys are plain parameters here (no 1 µs timeout, no refusal); the
    // Python backend keeps `timeout` from the model as it does for every request (see README).
    const [id, correlation, flags, params] = (body.INFO as string).split('|');
    expect([id, correlation, flags]).toEqual(['', '0', '0']);
    expect(JSON.parse(params as string)).toEqual({
      temperature: 0.5,
      stop: 'x',
      n: 2,
      stream: false,
      triton_x: 1,
    });
  });

  it('spreads an array over a variable dimension and reads strings as BYTES', async () => {
    const a = await generate('identity_fp64', JSON.stringify({ INPUT0: [0.5, 1.5, 2.5] }));
    expect(a.status).toBe(200);
    expect(JSON.parse(a.text)).toEqual({
      OUTPUT0: [0.5, 1.5, 2.5],
      model_name: 'identity_fp64',
      model_version: '1',
    });
    const w = await generate('py_word_stream', '{"text_input":"Seafood"}');
    expect(w.text).toBe(
      '{"index":0,"model_name":"py_word_stream","model_version":"1","text_output":"Seafood"}',
    );
  });
});

describe('generate on a decoupled model', () => {
  it("answers its one response, or tritonserver's error when it sends another number of them", async () => {
    expect(await generate('py_decoupled', '{"IN":1}')).toEqual({
      status: 200,
      contentType: 'application/json',
      text: '{"OUT":0,"model_name":"py_decoupled","model_version":"1"}',
    });
    const several =
      '{"error":"generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses"}';
    // The status is the first response's (tritonserver has sent it by the time it counts them).
    expect(await generate('py_decoupled', '{"IN":3}')).toEqual({
      status: 200,
      contentType: 'application/json',
      text: several,
    });
    expect(await generate('py_decoupled', '{"IN":0}')).toEqual({
      status: 200,
      contentType: 'application/json',
      text: several,
    });
    // A response that is an error gives its status.
    expect(await generate('py_decoupled', '{"IN":-1}')).toEqual({
      status: 400,
      contentType: 'application/json',
      text: '{"error":"n must be >= 0"}',
    });
  });
});

describe('generate: refusals before the request runs', () => {
  const cases: [string, string, Record<string, string>, number, string][] = [
    ['nope', '{}', {}, 400, "Request for unknown model: 'nope' is not found"],
    [
      'py_add',
      '{"INPUT0":[1,2,3]}',
      {},
      400,
      "The schema can not convert input 'INPUT0' to tensor with proper shape",
    ],
    [
      'py_add',
      '{"INPUT0":["a","b","c","d"]}',
      {},
      400,
      "Unable to parse 'data': attempt to access JSON non-number as double",
    ],
    [
      'py_word_stream',
      '{"text_input":5}',
      {},
      400,
      'Unable to parse JSON bytes array: attempt to access JSON non-string as string',
    ],
    [
      'py_add',
      '{"INPUT0":[1,2,3,4],"x":null}',
      {},
      400,
      "parameter 'x' has invalid type. It should be either 'int', 'bool', or 'string'.",
    ],
    [
      'py_add',
      '{"parameters":[]}',
      {},
      400,
      "Expected JSON object for keyword: 'parameters': attempt to access JSON non-object as object",
    ],
    ['py_add', '{"id":1}', {}, 400, "Unable to parse 'id': attempt to access JSON non-string as string"],
    [
      'py_add',
      '{"INPUT0":[1,2,3,4]}',
      {},
      400,
      "expected 2 inputs but got 1 inputs for model 'py_add'. Got input(s) ['INPUT0'], but missing required input(s) ['INPUT1']. Please provide all required input(s).",
    ],
    [
      'py_add',
      '{"INPUT0":[1,2,3,4]}',
      { 'Content-Encoding': 'gzip' },
      400,
      "Unsupported content-encoding, only 'identity' is supported.",
    ],
  ];

  it.each(cases)('%s %s %j → %i', async (model, body, headers, status, message) => {
    const a = await generate(model, body, headers);
    expect(a).toEqual({ status, contentType: 'application/json', text: JSON.stringify({ error: message }) });
    // The same refusal, as plain JSON, on the streaming endpoint.
    const r = await fetch(`${srv.url}/v2/models/${model}/generate_stream`, { method: 'POST', body, headers });
    expect([r.status, r.headers.get('content-type'), await r.text()]).toEqual([
      status,
      'application/json',
      JSON.stringify({ error: message }),
    ]);
  });

  it('refuses malformed JSON with the parser’s message', async () => {
    for (const body of ['', '{"INPUT0":', 'not json']) {
      const a = await generate('py_add', body);
      expect(a.status).toBe(400);
      expect((JSON.parse(a.text) as { error: string }).error).toMatch(
        /^failed to parse the request JSON buffer: /,
      );
    }
  });

  it('takes bodies within the limits of /infer, and bounds the inputs’ size (tritonserver 25.06+)', async () => {
    const big = JSON.stringify({ INPUT0: [1, 2, 3, 4], pad: 'x'.repeat(MAX_INPUT) });
    const infer = await fetch(`${srv.url}/v2/models/py_add/infer`, { method: 'POST', body: big });
    const gen = await generate('py_add', big);
    const inferText = await infer.text();
    expect(infer.status).toBe(400);
    expect([gen.status, gen.text]).toEqual([infer.status, inferText]);
    // 10,000 FP64 elements: a 20 KB body, 80 KB of input.
    const wide = JSON.stringify({ INPUT0: ones(10_000, 0) });
    expect(wide.length).toBeLessThan(MAX_INPUT);
    expect(await generate('identity_fp64', wide)).toEqual({
      status: 400,
      contentType: 'application/json',
      text: JSON.stringify({
        error: `request size of 80000 bytes with input 'INPUT0' of size 80000 bytes exceeds the maximum allowed input size of ${MAX_INPUT}. Use --http-max-input-size to increase the limit.`,
      }),
    });
  });

  it('answers other methods 405, as every model route', async () => {
    const r = await fetch(`${srv.url}/v2/models/py_add/generate_stream`);
    expect([r.status, await r.json()]).toEqual([405, { error: 'Method Not Allowed' }]);
  });
});

describe('generate requests are inference requests', () => {
  it('counted in statistics and metrics like /infer (success and failure)', async () => {
    const stats = async (): Promise<{ success: number; fail: number; count: number }> => {
      const r = (await (await fetch(`${srv.url}/v2/models/py_add/stats`)).json()) as {
        model_stats: {
          inference_count: number;
          inference_stats: { success: { count: number }; fail: { count: number } };
        }[];
      };
      const s = r.model_stats[0]!;
      return {
        success: s.inference_stats.success.count,
        fail: s.inference_stats.fail.count,
        count: s.inference_count,
      };
    };
    const before = await stats();
    const body = '{"INPUT0":[1,2,3,4],"INPUT1":[1,1,1,1]}';
    expect((await generate('py_add', body)).status).toBe(200);
    const stream = await fetch(`${srv.url}/v2/models/py_add/generate_stream`, { method: 'POST', body });
    expect(stream.status).toBe(200);
    await stream.text();
    expect((await generate('py_add', '{"INPUT0":[1,2,3,4],"INPUT1":[1,1,1,"x"]}')).status).toBe(400);
    const after = await stats();
    expect(after.success - before.success).toBe(2);
    expect(after.count - before.count).toBe(2);
    const metrics = await (await fetch(srv.running.metricsUrl ?? '')).text();
    expect(metrics).toContain(`nv_inference_request_success{model="py_add",version="1"} ${after.success}`);
  });

  it('the server metadata lists the extensions tritonserver lists (no generate)', async () => {
    const meta = (await (await fetch(`${srv.url}/v2`)).json()) as { extensions: string[] };
    expect(meta.extensions).not.toContain('generate');
  });
});

describe('generate requests are traced like /infer', () => {
  it('one trace per request, with the HTTP, request and compute timestamps', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-generate-trace-'));
    const file = join(dir, 'trace.json');
    const traced = await startTestServer({
      only: ['simple'],
      trace: { trace_level: ['TIMESTAMPS'], trace_rate: '1', trace_file: file },
    });
    try {
      const body = JSON.stringify({ id: 'g', INPUT0: ones(16), INPUT1: ones(16) });
      for (const path of ['generate', 'generate_stream']) {
        const r = await fetch(`${traced.url}/v2/models/simple/${path}`, { method: 'POST', body });
        expect(r.status).toBe(200);
        await r.text();
      }
      await traced.close();
      const objects = JSON.parse(readFileSync(file, 'utf8')) as {
        id: number;
        model_name?: string;
        request_id?: string;
        timestamps?: { name: string }[];
      }[];
      const ids = [...new Set(objects.map((o) => o.id))];
      expect(ids).toEqual([1, 2]);
      for (const id of ids) {
        const mine = objects.filter((o) => o.id === id);
        expect(mine.find((o) => o.model_name !== undefined)).toMatchObject({
          model_name: 'simple',
          request_id: 'g',
        });
        const names = mine.flatMap((o) => (o.timestamps ?? []).map((t) => t.name));
        expect([...names].sort()).toEqual(
          [
            'HTTP_RECV_START',
            'HTTP_RECV_END',
            'REQUEST_START',
            'QUEUE_START',
            'COMPUTE_START',
            'COMPUTE_INPUT_END',
            'COMPUTE_OUTPUT_START',
            'COMPUTE_END',
            'REQUEST_END',
            'INFER_RESPONSE_COMPLETE',
            'HTTP_SEND_START',
            'HTTP_SEND_END',
          ].sort(),
        );
      }
    } finally {
      await traced.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
