/**
 * A FAKE, clearly labelled: a tiny in-process KServe v2 responder that speaks the contract of the
 * Python-backend model `food_classifier` (INPUT_IMAGE BYTES [1,1] base64 text → FOOD_LABEL BYTES,
 * PROBABILITY FP32). The real food_classifier runs on the embedded server (python-path-real.test.ts);
 * this stand-in is kept only for what that server cannot be made to do on demand: hold an inference
 * open (timeouts, cancellation in flight) or fail with a chosen status. It records what it received.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedInfer {
  header: {
    inputs: { name: string; datatype: string; shape: number[]; parameters?: Record<string, unknown> }[];
    outputs?: { name: string }[];
  };
  /** BYTES elements of the first input, decoded from the binary tail (or JSON data). */
  elements: Buffer[];
}

export type FakeMode = 'ok' | 'hang' | 'error500';

export interface FakeKserve {
  url: string;
  received: ReceivedInfer[];
  /** Resolves when an infer request's connection closes before we answered (client cancelled). */
  cancelled: Promise<void>;
  mode: FakeMode;
  answer: { label: string; probability: number };
  close(): Promise<void>;
}

const MODEL = 'food_classifier';
const config = {
  name: MODEL,
  platform: '',
  backend: 'python',
  max_batch_size: 16,
  input: [{ name: 'INPUT_IMAGE', data_type: 'TYPE_STRING', dims: [1] }],
  output: [
    { name: 'FOOD_LABEL', data_type: 'TYPE_STRING', dims: [1] },
    { name: 'PROBABILITY', data_type: 'TYPE_FP32', dims: [1] },
  ],
  parameters: {},
};

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseInfer(req: IncomingMessage, body: Buffer): ReceivedInfer {
  const hl = req.headers['inference-header-content-length'];
  const jsonLen = hl ? Number(hl) : body.length;
  const header = JSON.parse(body.subarray(0, jsonLen).toString('utf8')) as ReceivedInfer['header'] & {
    inputs: { data?: string[] }[];
  };
  const elements: Buffer[] = [];
  if (jsonLen < body.length) {
    let off = jsonLen;
    while (off + 4 <= body.length) {
      const n = body.readUInt32LE(off);
      elements.push(body.subarray(off + 4, off + 4 + n));
      off += 4 + n;
    }
  } else {
    for (const s of header.inputs[0]?.data ?? []) elements.push(Buffer.from(s));
  }
  return { header, elements };
}

export async function startFakeKserve(): Promise<FakeKserve> {
  let onCancel: () => void = () => undefined;
  const fake: FakeKserve = {
    url: '',
    received: [],
    cancelled: new Promise<void>((r) => (onCancel = r)),
    mode: 'ok',
    answer: { label: 'Seafood', probability: 0.93 },
    close: () => Promise.resolve(),
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = req.url ?? '';
      if (req.method === 'GET' && (url === '/v2/health/live' || url === '/v2/health/ready'))
        return send(res, 200, {});
      if (req.method === 'GET' && url === `/v2/models/${MODEL}/ready`) return send(res, 200, {});
      if (req.method === 'GET' && url === `/v2/models/${MODEL}/config`) return send(res, 200, config);
      if (req.method === 'GET' && url === `/v2/models/${MODEL}`) {
        return send(res, 200, {
          name: MODEL,
          versions: ['1'],
          platform: 'python',
          inputs: [{ name: 'INPUT_IMAGE', datatype: 'BYTES', shape: [-1, 1] }],
          outputs: [
            { name: 'FOOD_LABEL', datatype: 'BYTES', shape: [-1, 1] },
            { name: 'PROBABILITY', datatype: 'FP32', shape: [-1, 1] },
          ],
        });
      }
      if (req.method === 'POST' && url === `/v2/models/${MODEL}/infer`) {
        const body = await readBody(req);
        fake.received.push(parseInfer(req, body));
        if (fake.mode === 'hang') {
          res.on('close', () => {
            if (!res.writableEnded) onCancel();
          });
          return;
        }
        if (fake.mode === 'error500')
          return send(res, 500, { error: 'Failed to process the request(s) for model instance' });
        return send(res, 200, {
          model_name: MODEL,
          model_version: '1',
          outputs: [
            { name: 'FOOD_LABEL', datatype: 'BYTES', shape: [1, 1], data: [fake.answer.label] },
            { name: 'PROBABILITY', datatype: 'FP32', shape: [1, 1], data: [fake.answer.probability] },
          ],
        });
      }
      return send(res, 404, { error: `unknown path ${url}` });
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return fake;
}
