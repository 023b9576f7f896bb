/**
 * `ModelStreamInfer` on decoupled Python models over a real gRPC stream (embedded server, real
 * `/usr/bin/python3` stubs), checked against tritonserver's `StreamInferResponseComplete`: every
 * response with `triton_final_response` (false but on the last), an empty final response only when
 * `triton_enable_empty_final_response` asks for it, per-response errors in-band, requests
 * interleaving, a cancelled stream, a stub that crashes mid-stream; `ModelInfer` and HTTP refuse
 * decoupled models.
 */
import { Metadata, status as GrpcStatus, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import type { ModelStreamInferResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { decoupledPythonModel } from '../../src/testing/index.js';
import { inferJson, startPythonServer, type PythonTestServer } from '../python-backend/helpers.js';
import {
  GrpcTestClient,
  grpcError,
  int32Bytes,
  int32Values,
  simpleRequest,
  SIMPLE_A,
  SIMPLE_B,
} from './helpers.js';

/**
 * `py_paced`: decoupled, INT32 IN [1] = n → n responses OUT = i, one every 60 ms, then the final
 * flag alone; n = 99 sends one response and then kills its stub process (a crash mid-request).
 */
const pacedModel = decoupledPythonModel('py_paced', { responseDelaySeconds: 0.06, crashOn: 99 });

let server: PythonTestServer;
let client: GrpcTestClient;

beforeAll(async () => {
  server = await startPythonServer(
    [decoupledPythonModel(), decoupledPythonModel('py_decoupled_stats'), pacedModel],
    { onnx: ['simple'], grpcPort: 0 },
  );
  client = new GrpcTestClient(server.running.grpcUrl);
}, 60_000);

afterAll(async () => {
  client.close();
  await server.close();
});

function request(model: string, n: number, id: string, emptyFinal?: boolean): object {
  return {
    modelName: model,
    id,
    inputs: [{ name: 'IN', datatype: 'INT32', shape: [1n] }],
    rawInputContents: [int32Bytes([n])],
    ...(emptyFinal !== undefined
      ? {
          parameters: {
            triton_enable_empty_final_response: { parameterChoice: { case: 'boolParam', value: emptyFinal } },
          },
        }
      : {}),
  };
}

/** What the tests compare: one message, flattened. */
interface Seen {
  id: string;
  error: string;
  model: string;
  version: string;
  out: number[] | undefined;
  final: boolean | undefined;
}

function seen(m: ModelStreamInferResponse): Seen {
  const r = m.inferResponse;
  const final = r?.parameters.triton_final_response?.parameterChoice;
  const raw = r?.rawOutputContents[0];
  return {
    id: r?.id ?? '',
    error: m.errorMessage,
    model: r?.modelName ?? '',
    version: r?.modelVersion ?? '',
    out: raw === undefined ? undefined : int32Values(raw),
    final: final?.case === 'boolParam' ? final.value : undefined,
  };
}

/** Writes `requests`, half-closes and reads every message until the server ends the stream. */
async function exchange(requests: object[], metadata?: Metadata): Promise<Seen[]> {
  const stream = client.stream(metadata);
  const out: Seen[] = [];
  const done = new Promise<void>((resolve, reject) => {
    stream.on('data', (m: ModelStreamInferResponse) => out.push(seen(m)));
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  for (const r of requests) stream.write(r);
  stream.end();
  await done;
  return out;
}

const ok = (id: string, i: number, final: boolean, model = 'py_decoupled'): Seen => ({
  id,
  error: '',
  model,
  version: '1',
  out: [i],
  final,
});

describe('ModelStreamInfer on a decoupled model', () => {
  it('n = 3: three responses flagged final false, the bare final flag not sent by default', async () => {
    expect(await exchange([request('py_decoupled', 3, 'r3')])).toEqual([
      ok('r3', 0, false),
      ok('r3', 1, false),
      ok('r3', 2, false),
    ]);
  });

  it('triton_enable_empty_final_response: true adds an empty response flagged final (id, model name and version as sent)', async () => {
    const messages = await exchange([
      request('py_decoupled', 3, 'e3', true),
      request('py_decoupled', 0, 'e0', true),
    ]);
    const e3 = messages.filter((m) => m.id === 'e3');
    expect(e3).toEqual([
      ok('e3', 0, false),
      ok('e3', 1, false),
      ok('e3', 2, false),
      { id: 'e3', error: '', model: 'py_decoupled', version: '', out: undefined, final: true },
    ]);
    // n = 0: only the final flag.
    expect(messages.filter((m) => m.id === 'e0')).toEqual([
      { id: 'e0', error: '', model: 'py_decoupled', version: '', out: undefined, final: true },
    ]);
    // false behaves as absent.
    expect(await exchange([request('py_decoupled', 0, 'off', false)])).toEqual([]);
  });

  it('n = -1: the model’s error in-band, with id, model name, version as sent and the final flag', async () => {
    const r = request('py_decoupled', -1, 'neg');
    expect(await exchange([{ ...r, modelVersion: '1' }])).toEqual([
      {
        id: 'neg',
        error: 'n must be >= 0',
        model: 'py_decoupled',
        version: '1',
        out: undefined,
        final: true,
      },
    ]);
  });

  it('a refused request gets only its id; the stream goes on; a non-decoupled model keeps triton_final_response: true', async () => {
    const bad = { ...request('py_decoupled', 1, 'bad'), rawInputContents: [new Uint8Array(3)] };
    const messages = await exchange([
      bad,
      simpleRequest(SIMPLE_A, SIMPLE_B, { id: 's1' }),
      request('py_decoupled', 1, 'good'),
    ]);
    const byId = (id: string) => messages.filter((m) => m.id === id);
    expect(byId('bad')).toHaveLength(1);
    expect(byId('bad')[0]?.error).toBe(
      "input byte size mismatch for input 'IN' for model 'py_decoupled'. Expected 4, got 3",
    );
    expect(byId('bad')[0]?.final).toBeUndefined();
    expect(byId('s1')).toHaveLength(1);
    expect(byId('s1')[0]?.final).toBe(true);
    expect(byId('s1')[0]?.error).toBe('');
    expect(byId('good')).toEqual([ok('good', 0, false)]);
  });

  it('two requests on one stream interleave, each in its own order', async () => {
    const messages = await exchange([request('py_paced', 4, 'a', true), request('py_paced', 4, 'b', true)]);
    const ids = messages.map((m) => m.id);
    for (const id of ['a', 'b']) {
      expect(messages.filter((m) => m.id === id)).toEqual([
        ok(id, 0, false, 'py_paced'),
        ok(id, 1, false, 'py_paced'),
        ok(id, 2, false, 'py_paced'),
        ok(id, 3, false, 'py_paced'),
        { id, error: '', model: 'py_paced', version: '', out: undefined, final: true },
      ]);
    }
    // b's first response came before a's last: the responses were not held back in request order.
    expect(ids.indexOf('b')).toBeLessThan(ids.lastIndexOf('a'));
  });

  it('a cancelled stream stops delivery; the request completes and is released; the server serves on', async () => {
    const successCount = async () =>
      (
        (await (await fetch(`${server.url}/v2/models/py_paced/stats`)).json()) as {
          model_stats: { inference_stats: { success: { count: number } } }[];
        }
      ).model_stats[0]?.inference_stats.success.count ?? 0;
    const before = await successCount();
    const stream: ClientDuplexStream<object, ModelStreamInferResponse> = client.stream();
    const out: Seen[] = [];
    const ended = new Promise<ServiceError>((resolve) => stream.on('error', resolve));
    stream.on('data', (m: ModelStreamInferResponse) => {
      out.push(seen(m));
      if (out.length === 2) stream.cancel();
    });
    stream.write(request('py_paced', 10, 'long'));
    const error = await ended;
    expect(error.code).toBe(GrpcStatus.CANCELLED);
    // The cancelled request runs to its end (the model goes on sending for ~0.5 s) and is counted.
    const deadline = Date.now() + 10_000;
    let after = await successCount();
    while (after < before + 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      after = await successCount();
    }
    expect(after - before).toBe(1);
    // Nothing was delivered after the cancel, though the model sent all its responses.
    expect(out).toEqual([ok('long', 0, false, 'py_paced'), ok('long', 1, false, 'py_paced')]);
    // A new stream is served.
    expect(await exchange([request('py_paced', 1, 'after')])).toEqual([ok('after', 0, false, 'py_paced')]);
  });

  it('a stub crash mid-request: the responses sent, then the error flagged final; the same stream serves on', async () => {
    const stream = client.stream();
    const out: Seen[] = [];
    const done = new Promise<void>((resolve, reject) => {
      stream.on('data', (m: ModelStreamInferResponse) => {
        const s = seen(m);
        out.push(s);
        // Once the crash is reported, the same stream is used again (the stub is restarted).
        if (s.id === 'crash' && s.final === true) {
          stream.write(request('py_paced', 2, 'again', true));
          stream.end();
        }
      });
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    stream.write(request('py_paced', 99, 'crash'));
    await done;
    const crash = out.filter((m) => m.id === 'crash');
    expect(crash).toHaveLength(2);
    expect(crash[0]).toEqual(ok('crash', 0, false, 'py_paced'));
    // The Python backend's words for a stub that died (python-backend.ts), with the exit code.
    expect(crash[1]?.error).toMatch(
      /^Failed to process the request\(s\) for model instance 'py_paced_0_0', message: Stub process 'py_paced_0_0' is not healthy\b/,
    );
    expect(crash[1]?.error).toContain('exit code 3');
    expect(crash[1]).toMatchObject({ model: 'py_paced', version: '', out: undefined, final: true });
    expect(out.filter((m) => m.id === 'again')).toEqual([
      ok('again', 0, false, 'py_paced'),
      ok('again', 1, false, 'py_paced'),
      { id: 'again', error: '', model: 'py_paced', version: '', out: undefined, final: true },
    ]);
  }, 20_000);

  it('triton_grpc_error: a per-response error ends the stream with its status', async () => {
    const metadata = new Metadata();
    metadata.set('triton_grpc_error', 'true');
    const error = await grpcError(exchange([request('py_decoupled', -1, 'x')], metadata));
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.details).toBe('n must be >= 0');
  });

  it('records the requests in the model’s statistics as the core does', async () => {
    const read = async () =>
      (
        (await (await fetch(`${server.url}/v2/models/py_decoupled_stats/stats`)).json()) as {
          model_stats: { inference_stats: { success: { count: number }; fail: { count: number } } }[];
        }
      ).model_stats[0]?.inference_stats;
    const before = await read();
    // A model of its own: a request of an earlier test to py_decoupled may still be recorded late.
    await exchange([request('py_decoupled_stats', 2, 's'), request('py_decoupled_stats', 0, 't')]);
    const after = await read();
    expect((after?.success.count ?? 0) - (before?.success.count ?? 0)).toBe(2);
  });
});

describe('decoupled models outside ModelStreamInfer', () => {
  it('ModelInfer refuses them with tritonserver’s status and message', async () => {
    const error = await grpcError(client.call('ModelInfer', request('py_decoupled', 1, 'u')));
    expect(error.code).toBe(GrpcStatus.UNIMPLEMENTED);
    expect(error.details).toBe("ModelInfer RPC doesn't support models with decoupled transaction policy");
  });

  it('HTTP /infer refuses them (501)', async () => {
    const r = await inferJson(server.url, 'py_decoupled', {
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [1] }],
    });
    expect(r.status).toBe(501);
    expect(r.body.error).toBe("HTTP end point doesn't support models with decoupled transaction policy");
  });
});
