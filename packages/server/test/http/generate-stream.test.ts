/**
 * `POST v2/models/{m}[/versions/{v}]/generate_stream` against the real server: Server-Sent Events
 * framed byte for byte as tritonserver frames them (`data: <json>\n\n`, `text/event-stream;
 * charset=utf-8`, chunked), on decoupled and non-decoupled models; the status fixed by the first
 * response; an error after the first event sent in-band; a client that goes away cancelling the
 * request (the Python model sees `request.is_cancelled()`); a client that does not read held to the
 * send limits (`--http-max-connection-output-bytes`, `--http-send-timeout-secs`); concurrent streams.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ServerSentEventReader } from '@tritonserver-ts/protocol/http';

import {
  addSubPythonModel,
  decoupledPythonModel,
  wordStreamPythonModel,
  writePythonModels,
} from '../../src/testing/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const OUTPUT_CAP = 1024 * 1024;
let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({
    httpMaxConnectionOutputBytes: OUTPUT_CAP,
    httpSendTimeoutSecs: 2,
    log: { log_verbose_level: 1 },
    fill: (dir) =>
      writePythonModels(dir, [
        addSubPythonModel('py_add'),
        decoupledPythonModel('py_decoupled'),
        decoupledPythonModel('py_decoupled_paced', { responseDelaySeconds: 0.05 }),
        wordStreamPythonModel(),
      ]),
  });
}, 120_000);

afterAll(async () => {
  await srv.close();
});

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  /** The body as it arrived, one entry per `data` event of the socket. */
  readonly pieces: string[];
}

/** POSTs `body` with node:http and collects the raw body bytes. */
function post(path: string, body: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(srv.url + path);
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST' },
      (res) => {
        const pieces: string[] = [];
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => pieces.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: pieces.join(''), pieces }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const SSE = 'text/event-stream; charset=utf-8';
const event = (json: string): string => `data: ${json}\n\n`;

describe('generate_stream: framing', () => {
  it('a decoupled model: one event per response, in order, chunked, no Content-Length', async () => {
    const a = await post('/v2/models/py_decoupled/generate_stream', '{"IN":3}');
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toBe(SSE);
    expect(a.headers['transfer-encoding']).toBe('chunked');
    expect(a.headers['content-length']).toBeUndefined();
    expect(a.body).toBe(
      event('{"OUT":0,"model_name":"py_decoupled","model_version":"1"}') +
        event('{"OUT":1,"model_name":"py_decoupled","model_version":"1"}') +
        event('{"OUT":2,"model_name":"py_decoupled","model_version":"1"}'),
    );
  });

  it('a non-decoupled model: its one response as one event; the request id echoed', async () => {
    const a = await post(
      '/v2/models/py_add/versions/1/generate_stream',
      '{"id":"s1","INPUT0":[1,2,3,4],"INPUT1":[1,1,1,1]}',
    );
    expect([a.status, a.headers['content-type']]).toEqual([200, SSE]);
    expect(a.body).toBe(
      event(
        '{"INFO":"s1|0|0|{\\"id\\":\\"s1\\"}","OUTPUT0":[2,3,4,5],"OUTPUT1":[0,1,2,3],"id":"s1","model_name":"py_add","model_version":"1"}',
      ),
    );
  });

  it('a model that sends only its final flag: 200 and an empty stream', async () => {
    const a = await post('/v2/models/py_decoupled/generate_stream', '{"IN":0}');
    expect([a.status, a.headers['content-type'], a.body]).toEqual([200, SSE, '']);
  });

  it('the status is the first response’s: an error first is its status, framed as an event', async () => {
    const a = await post('/v2/models/py_decoupled/generate_stream', '{"IN":-1}');
    expect([a.status, a.headers['content-type'], a.body]).toEqual([
      400,
      SSE,
      event('{"error":"n must be >= 0"}'),
    ]);
  });

  it('an error after the first event is sent in-band, under the 200 already sent', async () => {
    const a = await post(
      '/v2/models/py_word_stream/generate_stream',
      '{"text_input":"Likely Seafood, 84 %","parameters":{"fail_after":2}}',
    );
    expect([a.status, a.headers['content-type']]).toEqual([200, SSE]);
    expect(a.body).toBe(
      event('{"index":0,"model_name":"py_word_stream","model_version":"1","text_output":"Likely"}') +
        event('{"index":1,"model_name":"py_word_stream","model_version":"1","text_output":"Seafood,"}') +
        event('{"error":"failed after 2 words"}'),
    );
  });

  it('events are written as the model sends them, not at the end', async () => {
    const a = await post(
      '/v2/models/py_word_stream/generate_stream',
      '{"text_input":"one two three four","delay":0.15}',
    );
    const words = new ServerSentEventReader()
      .push(a.body)
      .map((e) => (JSON.parse(e.data) as { text_output: string }).text_output);
    expect(words).toEqual(['one', 'two', 'three', 'four']);
    // Paced 150 ms apart, the events cannot all arrive in one read.
    expect(a.pieces.length).toBeGreaterThanOrEqual(3);
  });
});

describe('generate_stream: clients', () => {
  async function waitForLog(pattern: RegExp, ms = 15_000): Promise<string> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const line = srv.logs.find((l) => pattern.test(l));
      if (line !== undefined) return line;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no log line matches ${String(pattern)}`);
  }

  it('a client that goes away cancels the request: the model sees request.is_cancelled()', async () => {
    const url = new URL(srv.url);
    const first = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: '/v2/models/py_word_stream/generate_stream',
          method: 'POST',
        },
        (res) => {
          res.setEncoding('utf8');
          res.once('data', (chunk: string) => {
            resolve(chunk);
            // Gone after the first event, while the model waits for more.
            req.destroy();
          });
        },
      );
      req.on('error', () => undefined);
      req.once('error', reject);
      req.end('{"text_input":"hello","wait_cancel":true}');
    });
    expect(first).toBe(
      event('{"index":0,"model_name":"py_word_stream","model_version":"1","text_output":"hello"}'),
    );
    expect(await waitForLog(/py_word_stream: cancelled=/)).toMatch(/py_word_stream: cancelled=True/);
  });

  it('a client that does not read is cut off at the output cap, and its request cancelled', async () => {
    const url = new URL(srv.url);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // 400 events of 64 KiB (25 MiB) for a client that never reads.
    const body = '{"text_input":"a b c d","repeat":100,"pad":65536}';
    socket.write(
      `POST /v2/models/py_word_stream/generate_stream HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.pause();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const cut = await waitForLog(
      /connection closed: .*--http-(max-connection-output-bytes|send-timeout-secs)/,
      20_000,
    );
    expect(cut).toMatch(/connection closed/);
    socket.resume();
    await closed;
    expect(await waitForLog(/py_word_stream: cancelled at word \d+/)).toBeDefined();
  }, 40_000);

  it('concurrent streams each get their own events, in order', async () => {
    const answers = await Promise.all(
      [4, 1, 5, 3, 2, 6].map((n) =>
        post('/v2/models/py_decoupled_paced/generate_stream', JSON.stringify({ IN: n })),
      ),
    );
    answers.forEach((a, i) => {
      const n = [4, 1, 5, 3, 2, 6][i] as number;
      expect(a.status).toBe(200);
      expect(a.body).toBe(
        Array.from({ length: n }, (_, k) =>
          event(`{"OUT":${k},"model_name":"py_decoupled_paced","model_version":"1"}`),
        ).join(''),
      );
    });
  });
});
