/**
 * The generate extension (`POST v2/models/{m}/generate` and `…/generate_stream`), HTTP only, checked on
 * the wire (fetch) against the models both servers have: `simple` (non-decoupled), `py_decoupled`
 * (IN = n → n responses OUT = 0..n−1; n = −1 an error) and `py_word_stream` (`wordStreamPythonModel`:
 * one response per word, `fail_after` an error after that many). Over gRPC the same decoupled
 * responses come through `ModelStreamInfer`, which has no JSON mapping.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { InferInput } from '@tritonserver-ts/client';
import type { GrpcTransport } from '@tritonserver-ts/client/grpc';
import { httpBase, newClient, transports } from './target.js';
import { differsOver } from './transport-differences.js';

interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
}

async function post(model: string, endpoint: 'generate' | 'generate_stream', body: string): Promise<Answer> {
  const r = await fetch(`${httpBase}/v2/models/${model}/${endpoint}`, { method: 'POST', body });
  return { status: r.status, contentType: r.headers.get('content-type'), text: await r.text() };
}

const SSE = 'text/event-stream; charset=utf-8';
const event = (json: string): string => `data: ${json}\n\n`;
const out = (k: number): string => `{"OUT":${k},"model_name":"py_decoupled","model_version":"1"}`;
const count = (n: number): InferInput[] => [
  { name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(n) },
];

describe.each(transports)('%s: the generate extension', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  if (differsOver(transport, 'generate-extension')) {
    it('a decoupled model streams the same responses through ModelStreamInfer', async () => {
      const grpc = client.transport as GrpcTransport;
      const outs: number[] = [];
      for await (const r of grpc.streamInfer([{ modelName: 'py_decoupled', inputs: count(3) }])) {
        if (r.result !== undefined) outs.push(...Array.from(r.result.asTypedArray('OUT', 'INT32')));
      }
      expect(outs).toEqual([0, 1, 2]);
    });
    return;
  }

  it('generate maps JSON members onto the inputs and answers the sorted response object', async () => {
    const a = await post(
      'simple',
      'generate',
      JSON.stringify({ INPUT0: [...Array(16).keys()], INPUT1: new Array(16).fill(1) }),
    );
    expect(a.status).toBe(200);
    expect(a.contentType).toBe('application/json');
    expect(JSON.parse(a.text)).toEqual({
      OUTPUT0: [...Array(16).keys()].map((i) => i + 1),
      OUTPUT1: [...Array(16).keys()].map((i) => i - 1),
      model_name: 'simple',
      model_version: '1',
    });
    expect(Object.keys(JSON.parse(a.text) as object)).toEqual([
      'OUTPUT0',
      'OUTPUT1',
      'model_name',
      'model_version',
    ]);
  });

  it("generate on a decoupled model: its one response, or Triton's error for another number", async () => {
    expect(await post('py_decoupled', 'generate', '{"IN":1}')).toEqual({
      status: 200,
      contentType: 'application/json',
      text: out(0),
    });
    const several = await post('py_decoupled', 'generate', '{"IN":2}');
    expect(several.status).toBe(200);
    expect(JSON.parse(several.text)).toEqual({
      error:
        'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses',
    });
  });

  it('generate_stream: one `data: <json>\\n\\n` event per response, byte for byte', async () => {
    const a = await post('py_decoupled', 'generate_stream', '{"IN":3}');
    expect([a.status, a.contentType]).toEqual([200, SSE]);
    expect(a.text).toBe(event(out(0)) + event(out(1)) + event(out(2)));
    const one = await post(
      'simple',
      'generate_stream',
      JSON.stringify({ INPUT0: new Array(16).fill(2), INPUT1: new Array(16).fill(1) }),
    );
    expect([one.status, one.contentType]).toEqual([200, SSE]);
    expect(one.text).toBe(
      event(
        `{"OUTPUT0":${JSON.stringify(new Array(16).fill(3))},"OUTPUT1":${JSON.stringify(new Array(16).fill(1))},"model_name":"simple","model_version":"1"}`,
      ),
    );
  });

  it('generate_stream: the first response fixes the status; a later error is in-band', async () => {
    const first = await post('py_decoupled', 'generate_stream', '{"IN":-1}');
    expect([first.status, first.contentType, first.text]).toEqual([
      400,
      SSE,
      event('{"error":"n must be >= 0"}'),
    ]);
    const later = await post(
      'py_word_stream',
      'generate_stream',
      '{"text_input":"Likely Seafood","fail_after":1}',
    );
    expect([later.status, later.contentType]).toEqual([200, SSE]);
    expect(later.text).toBe(
      event('{"index":0,"model_name":"py_word_stream","model_version":"1","text_output":"Likely"}') +
        event('{"error":"failed after 1 words"}'),
    );
  });

  it('refusals before the request runs are plain JSON with the status of their kind', async () => {
    for (const endpoint of ['generate', 'generate_stream'] as const) {
      const shape = await post('simple', endpoint, '{"INPUT0":[1,2,3]}');
      expect([shape.status, shape.contentType, shape.text]).toEqual([
        400,
        'application/json',
        JSON.stringify({ error: "The schema can not convert input 'INPUT0' to tensor with proper shape" }),
      ]);
      // A value of the wrong JSON type: Triton's JSON reader reports it as INTERNAL (500), this server
      // as a client error (400, see the server README); the message is the same.
      const bytes = await post('py_word_stream', endpoint, '{"text_input":5}');
      expect(JSON.parse(bytes.text)).toEqual({
        error: 'Unable to parse JSON bytes array: attempt to access JSON non-string as string',
      });
      const unknown = await post('no_such_model', endpoint, '{}');
      expect(unknown.status).toBe(400);
      expect((JSON.parse(unknown.text) as { error: string }).error).toMatch(
        /^Request for unknown model: 'no_such_model' is not found/,
      );
    }
  });
});
