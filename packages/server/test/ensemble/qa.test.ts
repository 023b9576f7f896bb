/**
 * Ensembles used the way Triton's own QA uses them (`qa/L0_simple_ensemble`, the ensemble legs of
 * `qa/L0_infer`), on the real server over HTTP and gRPC, with the generated models of
 * `qa-models.ts`: classification with the ensemble's labels, reshaped ensemble inputs and outputs,
 * a step output the model does not produce, sequence correlation ids and flags reaching the steps,
 * decoupled steps streaming several responses, `max_inflight_requests` bounding a step, and
 * Triton's load errors for invalid `max_inflight_requests` values.
 */
import { rm } from 'node:fs/promises';

import { Metadata } from '@grpc/grpc-js';
import type { ModelStreamInferResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startServer, type RunningServer } from '../../src/index.js';
import { GrpcStatus, GrpcTestClient, grpcError, int32Bytes, int32Values } from '../grpc/helpers.js';
import {
  ENSEMBLE_LABELS,
  INVALID_LIMITS,
  SLOW_I32_DELAY_MS,
  writeQaEnsembleRepository,
} from './qa-models.js';

const PYTHON = '/usr/bin/python3';

let repository: string;
let server: RunningServer;
let client: GrpcTestClient;

beforeAll(async () => {
  repository = await writeQaEnsembleRepository();
  server = await startServer({
    modelRepositories: [repository],
    modelControlMode: 'explicit',
    loadModels: [
      'cls_ens',
      'cls_plain',
      'cls_flat',
      'rs_ens',
      'partial_ens',
      'py_partial',
      'seq_ens',
      'seq_nested',
      'dec_ens',
      'dec_lim1',
    ],
    httpPort: 0,
    grpcPort: 0,
    python: { interpreter: PYTHON },
    logSink: () => undefined,
  });
  client = new GrpcTestClient(server.grpcUrl);
}, 90_000);

afterAll(async () => {
  client.close();
  await server.close();
  await rm(repository, { recursive: true, force: true });
});

interface JsonOutput {
  name: string;
  datatype: string;
  shape: number[];
  data: unknown[];
}

async function inferJson(
  model: string,
  body: object,
): Promise<{ status: number; outputs: JsonOutput[]; error?: string; id?: string }> {
  const response = await fetch(`${server.url}/v2/models/${model}/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const parsed = (await response.json()) as { outputs?: JsonOutput[]; error?: string; id?: string };
  return { status: response.status, outputs: parsed.outputs ?? [], ...parsed };
}

interface GrpcOutput {
  name: string;
  datatype: string;
  shape: bigint[];
}
interface GrpcResponse {
  id: string;
  outputs: GrpcOutput[];
  rawOutputContents: Uint8Array[];
}

const fp32 = (raw: Uint8Array | undefined): number[] =>
  raw === undefined ? [] : [...new Float32Array(new Uint8Array(raw).buffer)];

/** BYTES elements of raw gRPC output bytes (4-byte little-endian length, then the bytes). */
function strings(raw: Uint8Array | undefined): string[] {
  const out: string[] = [];
  if (raw === undefined) return out;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  for (let at = 0; at < raw.byteLength;) {
    const n = view.getUint32(at, true);
    out.push(Buffer.from(raw.subarray(at + 4, at + 4 + n)).toString());
    at += 4 + n;
  }
  return out;
}

const param = (
  value: string | bigint | boolean,
): { parameterChoice: { case: string; value: string | bigint | boolean } } => ({
  parameterChoice: {
    case: typeof value === 'string' ? 'stringParam' : typeof value === 'bigint' ? 'int64Param' : 'boolParam',
    value,
  },
});

describe('classification through an ensemble (L0_infer ensemble legs)', () => {
  const logits = [1, 5, 2, 4, 3];

  it("HTTP: the classes are labelled from the ensemble's own label_filename", async () => {
    const r = await inferJson('cls_ens', {
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [2, 5], data: [...logits, ...logits.reverse()] }],
      outputs: [{ name: 'OUT', parameters: { classification: 2 } }],
    });
    logits.reverse();
    expect(r.status).toBe(200);
    expect(r.outputs[0]?.datatype).toBe('BYTES');
    expect(r.outputs[0]?.shape).toEqual([2, 2]);
    const data = r.outputs[0]?.data as string[];
    expect(data.map((d) => d.split(':').slice(1).join(':'))).toEqual([
      `1:${ENSEMBLE_LABELS[1]}`,
      `3:${ENSEMBLE_LABELS[3]}`,
      `3:${ENSEMBLE_LABELS[3]}`,
      `1:${ENSEMBLE_LABELS[1]}`,
    ]);
  });

  it("an ensemble without label_filename answers unlabelled classes: the composing model's labels belong to its own responses (Triton's label provider is the ensemble's)", async () => {
    const r = await inferJson('cls_plain', {
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 5], data: logits }],
      outputs: [{ name: 'OUT', parameters: { classification: 1 } }],
    });
    expect(r.status).toBe(200);
    expect((r.outputs[0]?.data as string[])[0]).toMatch(/^0\.6\d+:1$/);
  });

  it('a non-batching ensemble classifies its whole output as one row', async () => {
    const r = await inferJson('cls_flat', {
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 5], data: logits }],
      outputs: [{ name: 'OUT', parameters: { classification: 3 } }],
    });
    expect(r.status).toBe(200);
    expect(r.outputs[0]?.shape).toEqual([3]);
    expect((r.outputs[0]?.data as string[]).map((d) => d.split(':')[2])).toEqual(['E1', 'E3', 'E4']);
  });

  it('gRPC: the same labels', async () => {
    const r = await client.call<GrpcResponse>('ModelInfer', {
      modelName: 'cls_ens',
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [1n, 5n], contents: { fp32Contents: logits } }],
      outputs: [{ name: 'OUT', parameters: { classification: param(2n) } }],
    });
    expect(r.outputs[0]?.datatype).toBe('BYTES');
    expect(r.outputs[0]?.shape).toEqual([1n, 2n]);
    expect(strings(r.rawOutputContents[0]).map((d) => d.split(':').slice(1).join(':'))).toEqual([
      '1:E1',
      '3:E3',
    ]);
  });
});

describe('reshape on ensemble inputs and outputs', () => {
  it('HTTP: IN [b,2,2] reaches the [4] step as [b,4]; OUT comes back [b,2,2]', async () => {
    const one = await inferJson('rs_ens', {
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 2, 2], data: [1, 2, 3, 4] }],
    });
    expect(one.status).toBe(200);
    expect(one.outputs[0]).toMatchObject({ name: 'OUT', shape: [1, 2, 2], data: [1, 2, 3, 4] });
    const two = await inferJson('rs_ens', {
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [2, 2, 2], data: [1, 2, 3, 4, 5, 6, 7, 8] }],
    });
    expect(two.outputs[0]?.shape).toEqual([2, 2, 2]);
    const meta = (await (await fetch(`${server.url}/v2/models/rs_ens`)).json()) as {
      outputs: { shape: number[] }[];
    };
    expect(meta.outputs[0]?.shape).toEqual([-1, 2, 2]);
  });

  it('gRPC: the reshaped shape', async () => {
    const r = await client.call<GrpcResponse>('ModelInfer', {
      modelName: 'rs_ens',
      inputs: [
        { name: 'IN', datatype: 'FP32', shape: [1n, 2n, 2n], contents: { fp32Contents: [4, 3, 2, 1] } },
      ],
    });
    expect(r.outputs[0]?.shape).toEqual([1n, 2n, 2n]);
    expect(fp32(r.rawOutputContents[0])).toEqual([4, 3, 2, 1]);
  });
});

describe('a step output the model does not produce (L0_simple_ensemble partial_add_sub)', () => {
  const inputs = [
    { name: 'A', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] },
    { name: 'B', datatype: 'FP32', shape: [4], data: [10, 20, 30, 40] },
  ];

  it('HTTP: the request succeeds; the response carries the produced output only', async () => {
    const r = await inferJson('partial_ens', { inputs });
    expect(r.status).toBe(200);
    expect(r.outputs.map((o) => o.name)).toEqual(['SUM']);
    expect(r.outputs[0]?.data).toEqual([11, 22, 33, 44]);
    // Asking for the missing output alone: a response without outputs, not an error.
    const only = await inferJson('partial_ens', { inputs, outputs: [{ name: 'DIFF' }] });
    expect(only.status).toBe(200);
    expect(only.outputs).toEqual([]);
  });

  it('the model asked directly leaves the output out too (no INTERNAL error)', async () => {
    const r = await inferJson('py_partial', {
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 1, 1, 1] },
        { name: 'INPUT1', datatype: 'FP32', shape: [4], data: [1, 1, 1, 1] },
      ],
      outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1' }],
    });
    expect(r.status).toBe(200);
    expect(r.outputs.map((o) => o.name)).toEqual(['OUTPUT0']);
  });

  it('gRPC: the same', async () => {
    const r = await client.call<GrpcResponse>('ModelInfer', {
      modelName: 'partial_ens',
      inputs: inputs.map((i) => ({
        name: i.name,
        datatype: 'FP32',
        shape: [4n],
        contents: { fp32Contents: i.data },
      })),
    });
    expect(r.outputs.map((o) => o.name)).toEqual(['SUM']);
    expect(fp32(r.rawOutputContents[0])).toEqual([11, 22, 33, 44]);
  });
});

describe('sequence correlation ids and flags reach the steps (L0_simple_ensemble sequence flags)', () => {
  const abJson = [
    { name: 'A', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] },
    { name: 'B', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] },
  ];
  const abGrpc = abJson.map((i) => ({
    name: i.name,
    datatype: 'FP32',
    shape: [4n],
    contents: { fp32Contents: i.data },
  }));

  it('HTTP: an integer sequence_id with sequence_start, through one and two ensemble levels', async () => {
    for (const model of ['seq_ens', 'seq_nested']) {
      const r = await inferJson(model, {
        id: 'r1',
        parameters: { sequence_id: 42, sequence_start: true },
        inputs: abJson,
      });
      expect(r.status).toBe(200);
      // <request id>|<correlation id>|<flags>|<parameters the model sees>
      expect(r.outputs[0]?.data).toEqual(['r1|42|1|{}']);
    }
    const end = await inferJson('seq_ens', {
      parameters: { sequence_id: 42, sequence_start: true, sequence_end: true },
      inputs: abJson,
    });
    expect(end.outputs[0]?.data).toEqual(['|42|3|{}']);
  });

  it('gRPC: string and integer sequence ids, sequence_end', async () => {
    const s = await client.call<GrpcResponse>('ModelInfer', {
      modelName: 'seq_nested',
      id: 'g',
      parameters: { sequence_id: param('abc'), sequence_end: param(true) },
      inputs: abGrpc,
    });
    expect(strings(s.rawOutputContents[0])).toEqual(['g|abc|2|{}']);
    const n = await client.call<GrpcResponse>('ModelInfer', {
      modelName: 'seq_ens',
      parameters: { sequence_id: param(7n), sequence_start: param(true), sequence_end: param(true) },
      inputs: abGrpc,
    });
    expect(strings(n.rawOutputContents[0])).toEqual(['|7|3|{}']);
  });
});

/** One message of a stream, flattened. */
interface Seen {
  error: string;
  out: number[] | undefined;
  final: boolean | undefined;
}

function seen(m: ModelStreamInferResponse): Seen {
  const r = m.inferResponse;
  const final = r?.parameters.triton_final_response?.parameterChoice;
  const raw = r?.rawOutputContents[0];
  return {
    error: m.errorMessage,
    out: raw === undefined ? undefined : int32Values(raw),
    final: final?.case === 'boolParam' ? final.value : undefined,
  };
}

function decoupledRequest(model: string, n: number, emptyFinal = false): object {
  return {
    modelName: model,
    inputs: [{ name: 'IN', datatype: 'INT32', shape: [1n] }],
    rawInputContents: [int32Bytes([n])],
    ...(emptyFinal ? { parameters: { triton_enable_empty_final_response: param(true) } } : {}),
  };
}

/** Sends `requests` on one stream, half-closes, returns every message and the time it took. */
async function exchange(requests: object[]): Promise<{ seen: Seen[]; ms: number }> {
  const started = performance.now();
  const { stream, answers, done } = client.collectingStream(new Metadata());
  for (const r of requests) stream.write(r);
  stream.end();
  await done;
  return { seen: answers.map(seen), ms: performance.now() - started };
}

describe('decoupled steps (L0_simple_ensemble backpressure models)', () => {
  it("the ensemble's config says decoupled, as Triton fills it in", async () => {
    const config = (await (await fetch(`${server.url}/v2/models/dec_ens/config`)).json()) as {
      model_transaction_policy?: { decoupled: boolean };
    };
    expect(config.model_transaction_policy?.decoupled).toBe(true);
    const plain = (await (await fetch(`${server.url}/v2/models/seq_ens/config`)).json()) as {
      model_transaction_policy?: { decoupled: boolean };
    };
    expect(plain.model_transaction_policy?.decoupled ?? false).toBe(false);
  });

  it('ModelStreamInfer: n responses of the producer flow through the next step, one ensemble response each, the last flagged final', async () => {
    const { seen: messages } = await exchange([decoupledRequest('dec_ens', 3)]);
    expect(messages).toHaveLength(3);
    expect(messages.map((m) => m.error)).toEqual(['', '', '']);
    expect(messages.flatMap((m) => m.out ?? []).sort()).toEqual([0, 1, 2]);
    expect(messages.map((m) => m.final)).toEqual([false, false, true]);
  });

  it('n = 0 sends no response (the final flag alone, as an empty response only when asked for)', async () => {
    expect((await exchange([decoupledRequest('dec_ens', 0)])).seen).toEqual([]);
    expect((await exchange([decoupledRequest('dec_ens', 0, true)])).seen).toEqual([
      { error: '', out: undefined, final: true },
    ]);
  });

  it("a producer's error response fails the request with the ensemble's prefix", async () => {
    const { seen: messages } = await exchange([decoupledRequest('dec_ens', -1)]);
    expect(messages).toEqual([
      { error: "in ensemble 'dec_ens', n must be >= 0", out: undefined, final: true },
    ]);
  });

  it("HTTP and ModelInfer refuse the decoupled ensemble with Triton's messages", async () => {
    const http = await inferJson('dec_ens', {
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [2] }],
    });
    expect(http.status).toBe(501);
    expect(http.error).toBe("HTTP end point doesn't support models with decoupled transaction policy");
    const unary = await grpcError(client.call('ModelInfer', decoupledRequest('dec_ens', 2)));
    expect(unary.code).toBe(GrpcStatus.UNIMPLEMENTED);
    expect(unary.details).toBe("ModelInfer RPC doesn't support models with decoupled transaction policy");
  });

  it('max_inflight_requests: 1 runs one request of the bounded step at a time, across requests too', async () => {
    const n = 6;
    const free = await exchange([decoupledRequest('dec_ens', n)]);
    const bounded = await exchange([decoupledRequest('dec_lim1', n)]);
    expect(free.seen.flatMap((m) => m.out ?? []).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(bounded.seen.flatMap((m) => m.out ?? []).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    // slow_i32 has 4 instances: unbounded, the 6 responses need 2 rounds of 150 ms; one at a
    // time they need 6 (900 ms).
    expect(bounded.ms).toBeGreaterThanOrEqual(n * SLOW_I32_DELAY_MS);
    expect(free.ms).toBeLessThan(n * SLOW_I32_DELAY_MS);
    // Two requests on the same ensemble share the step's single slot.
    const shared = await exchange([decoupledRequest('dec_lim1', 2), decoupledRequest('dec_lim1', 2)]);
    expect(shared.seen.filter((m) => m.out !== undefined)).toHaveLength(4);
    expect(shared.ms).toBeGreaterThanOrEqual(4 * SLOW_I32_DELAY_MS);
  });

  it("invalid max_inflight_requests values fail the load with protobuf's text-format messages", async () => {
    const expected: Record<string, string> = {
      lim_neg: 'Expected integer, got: -',
      lim_str: 'Expected integer, got: "invalid_value"',
      lim_big: 'Integer out of range (12345678901)',
    };
    for (const [name] of INVALID_LIMITS) {
      const r = await fetch(`${server.url}/v2/repository/models/${name}/load`, { method: 'POST' });
      expect(r.status).toBe(500);
      const { error } = (await r.json()) as { error: string };
      expect(error).toContain(`failed to load '${name}'`);
      expect(error).toContain(expected[name]);
    }
    const grpc = await grpcError(client.call('RepositoryModelLoad', { modelName: 'lim_neg' }));
    expect(grpc.details).toContain('Expected integer, got: -');
  });
});
