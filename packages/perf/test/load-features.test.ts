/**
 * What the request sender does besides sending: `--shared-memory system` regions (created once,
 * read and written by the server, released on stop), `--streaming` over one gRPC stream (a
 * decoupled model's responses each timed), sequence ids and flags as the model receives them,
 * request parameters, JSON tensors, `validation_data`, failed requests as failed records, and a
 * stop that returns on time while requests hang.
 */
import { existsSync, readFileSync } from 'node:fs';

import { TritonClient, type InferInput, type InferOptions, type InferResult } from '@tritonserver-ts/client';
import { addSubPythonModel, decoupledPythonModel } from '@tritonserver-ts/server/testing';
import { fromBinary } from '@bufbuild/protobuf';
import { ModelInferRequestSchema } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { isPerfError } from '../src/errors.js';
import { createLoadManager } from '../src/load/create-load-manager.js';
import { EncodedGrpcInfer } from '../src/load/encoded-grpc-infer.js';
import { diffInferStat, readInferStat } from '../src/measure/infer-stat.js';
import { SHM_DIR } from '../src/load/shared-memory-regions.js';
import type { InputDataset } from '../src/types.js';
import { startEmbedded, type Embedded } from './helpers/embedded.js';
import { datasetOf, fp32Input, loadContext, waitFor } from './helpers/load.js';

process.env.TRITONSERVER_TS_PYTHON ??= '/usr/bin/python3';

/** A real client that keeps every result it received, to see what the server answered. */
class ObservingClient extends TritonClient {
  readonly results: InferResult[] = [];
  override async infer(
    model: string,
    inputs: readonly InferInput[],
    options?: InferOptions,
  ): Promise<InferResult> {
    const result = await super.infer(model, inputs, options);
    this.results.push(result);
    return result;
  }
}

let server: Embedded;

beforeAll(async () => {
  server = await startEmbedded({
    identity: [
      { name: 'id_fast', instances: 2 },
      { name: 'id_hang', delayMs: 5000, instances: 4 },
    ],
    python: [addSubPythonModel('py_add'), decoupledPythonModel('py_decoupled')],
  });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

const values = Float32Array.from({ length: 16 }, (_, i) => i * 1.5 - 3);
const dataset: InputDataset = datasetOf(
  { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: values }] },
  { inputs: [fp32Input('INPUT0', [1, 16], 7)] },
);

describe.each(['http', 'grpc'] as const)('--shared-memory system over %s', (protocol) => {
  it('regions are created once, the server reads the inputs from them and writes the outputs, and stop releases them', async () => {
    const url = protocol === 'http' ? server.url : server.grpcUrl;
    const context = await loadContext(
      url,
      { modelName: 'id_fast', protocol, sharedMemory: 'system', outputSharedMemorySize: 256 },
      dataset,
    );
    const manager = createLoadManager(context);
    let files: readonly string[] | undefined;
    try {
      await manager.changeLevel(2, 20);
      await waitFor(() => manager.inFlight === 0);
      const records = manager.takeRecords();
      expect(records).toHaveLength(20);
      expect(records.every((r) => r.ok)).toBe(true);
      // Both data entries were sent (round robin).
      expect(new Set(records.map((r) => r.step))).toEqual(new Set([0, 1]));
      const status = await context.client.getSystemSharedMemoryStatus();
      const ours = status.filter((r) => r.name.startsWith('perf_analyzer_ts_'));
      // One region per input of each data entry, one per output.
      expect(ours.map((r) => r.name.replace(/^perf_analyzer_ts_\d+_\d+_/, '')).sort()).toEqual([
        'INPUT0_0_0',
        'INPUT0_0_1',
        'OUTPUT0',
      ]);
      // Each region is its own object (/dev/shm/<key>), holding the input's bytes.
      files = ours.map((r) => `${SHM_DIR}${r.key}`);
      expect(files.every((f) => existsSync(f))).toBe(true);
      const input = ours.find((r) => r.name.endsWith('_INPUT0_0_0')) as { key: string };
      expect(readFileSync(`${SHM_DIR}${input.key}`).equals(Buffer.from(values.buffer))).toBe(true);
      // The server wrote OUTPUT0 = INPUT0 of the last request into the output region.
      const output = ours.find((r) => r.name.endsWith('_OUTPUT0')) as { key: string };
      const bytes = readFileSync(`${SHM_DIR}${output.key}`).subarray(0, 64);
      const written = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 64));
      const last = records.reduce((a, b) => (b.endNs > a.endNs ? b : a));
      expect(Array.from(written)).toEqual(last.step === 0 ? Array.from(values) : new Array(16).fill(7));
    } finally {
      await manager.stop();
    }
    expect(files).toHaveLength(3);
    expect((files ?? []).filter((f) => existsSync(f))).toEqual([]);
    const after = await context.client.getSystemSharedMemoryStatus();
    expect(after.filter((r) => r.name.startsWith('perf_analyzer_ts_'))).toEqual([]);
    await context.client.close();
  });
});

describe('--shared-memory system refused by the server', () => {
  it('changeLevel rejects with SHARED_MEMORY and leaves no file behind', async () => {
    const strict = await startEmbedded({
      identity: [{ name: 'id_fast' }],
      allowClientShm: false,
      metrics: false,
    });
    try {
      const context = await loadContext(
        strict.url,
        { modelName: 'id_fast', sharedMemory: 'system' },
        dataset,
      );
      const manager = createLoadManager(context);
      const error = await manager.changeLevel(1).catch((e: unknown) => e);
      expect(isPerfError(error, 'SHARED_MEMORY')).toBe(true);
      expect(String((error as Error).message)).toMatch(/shared memory/i);
      await manager.stop();
      const { readdirSync } = await import('node:fs');
      expect(readdirSync(SHM_DIR).filter((f) => f.startsWith(`perf_analyzer_ts_${process.pid}_`))).toEqual(
        [],
      );
      await context.client.close();
    } finally {
      await strict.close();
    }
  });
});

describe('--streaming (gRPC)', () => {
  it('sends on one stream; a plain model answers each request once', async () => {
    const context = await loadContext(
      server.grpcUrl,
      { modelName: 'id_fast', protocol: 'grpc', streaming: true },
      dataset,
    );
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(3, 30);
      await waitFor(() => manager.inFlight === 0);
      const records = manager.takeRecords();
      expect(records).toHaveLength(30);
      expect(records.every((r) => r.ok && r.responseNs.length === 1 && r.endNs === r.responseNs[0])).toBe(
        true,
      );
    } finally {
      await manager.stop();
      await context.client.close();
    }
  });

  it('a decoupled model: every response of a request is timed, the last one ends it', async () => {
    const decoupledData = datasetOf({
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(3) }],
    });
    const context = await loadContext(
      server.grpcUrl,
      { modelName: 'py_decoupled', protocol: 'grpc', streaming: true },
      decoupledData,
    );
    expect(context.model.decoupled).toBe(true);
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(2, 6);
      await waitFor(() => manager.inFlight === 0, 30_000);
      const records = manager.takeRecords();
      expect(records).toHaveLength(6);
      for (const r of records) {
        expect(r.ok, r.error).toBe(true);
        expect(r.responseNs).toHaveLength(3);
        expect(r.responseNs[0] as bigint).toBeGreaterThanOrEqual(r.startNs);
        expect(r.endNs).toBe(r.responseNs[2]);
      }
    } finally {
      await manager.stop();
      await context.client.close();
    }
  });

  it('--streaming over HTTP is refused', async () => {
    const context = await loadContext(server.url, { modelName: 'id_fast', streaming: true }, dataset);
    const manager = createLoadManager(context);
    const error = await manager.changeLevel(1).catch((e: unknown) => e);
    expect(isPerfError(error, 'USAGE')).toBe(true);
    await manager.stop();
    await context.client.close();
  });
});

describe('what the model receives', () => {
  const addData = datasetOf({ inputs: [fp32Input('INPUT0', [4]), fp32Input('INPUT1', [4], 1)] });

  it('sequences: each slot runs its own sequences, ids from the range, START and END flags', async () => {
    const client = new ObservingClient({ url: server.url });
    // The embedded server has no sequence batcher; the profile is marked as a sequence model so
    // the generator sends sequences, and py_add echoes the correlation id and flags it received.
    const context = await loadContext(
      server.url,
      {
        modelName: 'py_add',
        sequenceLength: 3,
        sequenceLengthVariation: 0,
        sequenceIdRange: { start: 40, end: 50 },
        requestParameters: [{ name: 'my_param', value: 'perf' }],
      },
      addData,
      (model) => ({ ...model, sequenceBatching: true }),
      client,
    );
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(2, 12);
      await waitFor(() => manager.inFlight === 0, 30_000);
      const records = manager.takeRecords();
      expect(records).toHaveLength(12);
      expect(records.every((r) => r.ok)).toBe(true);
      const seen = client.results.map((r) => {
        const [, corrId, flags, parameters] = (r.asStrings('INFO')[0] as string).split('|');
        return {
          id: Number(corrId),
          flags: Number(flags),
          parameters: JSON.parse(parameters as string) as unknown,
        };
      });
      expect(seen).toHaveLength(12);
      const byId = new Map<number, number[]>();
      for (const s of seen) byId.set(s.id, [...(byId.get(s.id) ?? []), s.flags]);
      // 2 slots × 2 sequences of 3 requests, ids 40..43, flags START (1), none, END (2).
      expect([...byId.keys()].sort()).toEqual([40, 41, 42, 43]);
      for (const flags of byId.values()) expect(flags).toEqual([1, 0, 2]);
      // The records say the same.
      for (const r of records) {
        expect(r.sequenceId).toBeGreaterThanOrEqual(40);
        expect(byId.get(r.sequenceId as number)).toBeDefined();
      }
      expect(records.filter((r) => r.sequenceStart === true)).toHaveLength(4);
      expect(records.filter((r) => r.sequenceEnd === true)).toHaveLength(4);
      // --request-parameter reaches the model.
      expect(seen.every((s) => (s.parameters as Record<string, unknown>).my_param === 'perf')).toBe(true);
    } finally {
      await manager.stop();
      await client.close();
    }
  });

  it('over gRPC, unary requests go out pre-encoded (EncodedGrpcInfer): sequence ids, flags and request parameters in the bytes, each answered; the run counts them as client timing', async () => {
    const sent: Buffer[] = [];
    const realSend = Object.getOwnPropertyDescriptor(EncodedGrpcInfer.prototype, 'send')?.value as (
      this: EncodedGrpcInfer,
      request: Buffer,
    ) => Promise<string | undefined>;
    const spy = vi.spyOn(EncodedGrpcInfer.prototype, 'send').mockImplementation(function (
      this: EncodedGrpcInfer,
      request: Buffer,
    ) {
      sent.push(Buffer.from(request));
      return realSend.call(this, request);
    });
    const context = await loadContext(
      server.grpcUrl,
      {
        modelName: 'py_add',
        protocol: 'grpc',
        sequenceLength: 3,
        sequenceLengthVariation: 0,
        sequenceIdRange: { start: 40, end: 50 },
        requestParameters: [{ name: 'my_param', value: 'perf' }],
      },
      addData,
      (model) => ({ ...model, sequenceBatching: true }),
    );
    const manager = createLoadManager(context);
    const stat0 = readInferStat(context.client);
    try {
      await manager.changeLevel(2, 12);
      await waitFor(() => manager.inFlight === 0, 30_000);
      const records = manager.takeRecords();
      expect(records).toHaveLength(12);
      expect(records.every((r) => r.ok)).toBe(true);
      expect(sent).toHaveLength(12);
      const requests = sent.map((bytes) => fromBinary(ModelInferRequestSchema, bytes));
      const byId = new Map<bigint, [boolean, boolean][]>();
      for (const r of requests) {
        expect(r.modelName).toBe('py_add');
        expect(r.rawInputContents).toHaveLength(2);
        const p = r.parameters;
        expect(p.my_param?.parameterChoice).toEqual({ case: 'stringParam', value: 'perf' });
        const id = p.sequence_id?.parameterChoice.value as bigint;
        const flags: [boolean, boolean] = [
          p.sequence_start?.parameterChoice.value === true,
          p.sequence_end?.parameterChoice.value === true,
        ];
        byId.set(BigInt(id), [...(byId.get(BigInt(id)) ?? []), flags]);
      }
      // 2 slots × 2 sequences of 3 requests, ids 40..43: START, middle, END.
      expect([...byId.keys()].sort()).toEqual([40n, 41n, 42n, 43n]);
      for (const flags of byId.values()) {
        expect(flags).toEqual([
          [true, false],
          [false, false],
          [false, true],
        ]);
      }
      // The client library sent none of them; the run's client timing still counts all 12.
      const clientOwn = (
        context.client as unknown as { inferStat(): { completedRequestCount: number } }
      ).inferStat();
      expect(clientOwn.completedRequestCount).toBe(0);
      const stat = diffInferStat(stat0, readInferStat(context.client));
      expect(stat.completedRequestCount).toBe(12);
      expect(stat.cumulativeSendTimeNs).toBeGreaterThan(0n);
      expect(stat.cumulativeTotalRequestTimeNs).toBeGreaterThan(stat.cumulativeSendTimeNs);
    } finally {
      spy.mockRestore();
      await manager.stop();
      await context.client.close();
    }
  });

  it('request rate with --serial-sequences: requests spread over --num-of-sequences sequences, one at a time each', async () => {
    const client = new ObservingClient({ url: server.url });
    const context = await loadContext(
      server.url,
      {
        modelName: 'py_add',
        async: true,
        serialSequences: true,
        numOfSequences: 2,
        sequenceLength: 3,
        sequenceLengthVariation: 0,
        load: { kind: 'request_rate', range: { start: 200, end: 200, step: 1 }, distribution: 'constant' },
      },
      addData,
      (model) => ({ ...model, sequenceBatching: true }),
      client,
    );
    const manager = createLoadManager(context);
    let maxInFlight = 0;
    const probe = setInterval(() => {
      maxInFlight = Math.max(maxInFlight, manager.inFlight);
    }, 1);
    try {
      await manager.changeLevel(200, 12);
      await waitFor(() => manager.inFlight === 0 && client.results.length === 12, 30_000);
      const byId = new Map<number, number[]>();
      for (const r of client.results) {
        const [, corrId, flags] = (r.asStrings('INFO')[0] as string).split('|');
        byId.set(Number(corrId), [...(byId.get(Number(corrId)) ?? []), Number(flags)]);
      }
      expect([...byId.keys()].sort()).toEqual([1, 2, 3, 4]);
      for (const flags of byId.values()) expect(flags).toEqual([1, 0, 2]);
      // Serial: at most one request per sequence in flight, so at most 2 in all.
      expect(maxInFlight).toBeLessThanOrEqual(2);
    } finally {
      clearInterval(probe);
      await manager.stop();
      await client.close();
    }
  });

  it('stop completes the sequences in progress with an END request each', async () => {
    const client = new ObservingClient({ url: server.url });
    const context = await loadContext(
      server.url,
      { modelName: 'py_add', sequenceLength: 10, sequenceLengthVariation: 0 },
      addData,
      (model) => ({ ...model, sequenceBatching: true }),
      client,
    );
    const manager = createLoadManager(context);
    await manager.changeLevel(2, 4);
    await waitFor(() => manager.inFlight === 0, 30_000);
    await manager.stop();
    const flags = client.results.map((r) => Number((r.asStrings('INFO')[0] as string).split('|')[2]));
    expect(flags).toHaveLength(6);
    expect(flags.filter((f) => f === 1)).toHaveLength(2);
    expect(flags.slice(4)).toEqual([2, 2]);
    await client.close();
  });

  it('JSON tensors both ways (--input-tensor-format/--output-tensor-format json), checked against validation_data', async () => {
    const client = new ObservingClient({ url: server.url });
    const expected = new Map([['OUTPUT0', { datatype: 'FP32' as const, shape: [1, 16], data: values }]]);
    const context = await loadContext(
      server.url,
      { modelName: 'id_fast', inputTensorFormat: 'json', outputTensorFormat: 'json' },
      datasetOf({
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: values }],
        expectedOutputs: expected,
      }),
      undefined,
      client,
    );
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(1, 5);
      await waitFor(() => manager.inFlight === 0);
      const records = manager.takeRecords();
      expect(records.map((r) => r.ok)).toEqual([true, true, true, true, true]);
      // JSON output: no binary_data_size on the output.
      expect(client.results[0]?.outputParameters('OUTPUT0').binary_data_size).toBeUndefined();
    } finally {
      await manager.stop();
      await client.close();
    }
  });
});

describe('failures', () => {
  it('an output that differs from validation_data fails its record with a clear error', async () => {
    const wrong = new Map([
      ['OUTPUT0', { datatype: 'FP32' as const, shape: [1, 16], data: new Float32Array(16) }],
    ]);
    const context = await loadContext(
      server.url,
      { modelName: 'id_fast' },
      datasetOf({ inputs: [fp32Input('INPUT0', [1, 16], 2)], expectedOutputs: wrong }),
    );
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(1, 3);
      await waitFor(() => manager.inFlight === 0);
      const records = manager.takeRecords();
      expect(records).toHaveLength(3);
      for (const r of records) {
        expect(r.ok).toBe(false);
        expect(r.error).toMatch(/output 'OUTPUT0' does not match the expected output \(validation_data\)/);
        expect(r.responseNs).toEqual([]);
      }
    } finally {
      await manager.stop();
      await context.client.close();
    }
  });

  it.each(['http', 'grpc'] as const)(
    'a request the server refuses is a failed record, the load goes on (%s)',
    async (protocol) => {
      const bad = datasetOf({
        inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 4], data: new Int32Array(4) }],
      });
      const url = protocol === 'http' ? server.url : server.grpcUrl;
      const context = await loadContext(url, { modelName: 'id_fast', protocol }, bad);
      const manager = createLoadManager(context);
      try {
        await manager.changeLevel(2, 10);
        await waitFor(() => manager.inFlight === 0);
        const records = manager.takeRecords();
        expect(records).toHaveLength(10);
        expect(records.every((r) => !r.ok && /INT32|datatype|FP32/.test(r.error ?? ''))).toBe(true);
      } finally {
        await manager.stop();
        await context.client.close();
      }
    },
  );

  it.each([
    ['http', false],
    ['grpc', false],
    ['grpc', true],
  ] as const)(
    'stop with requests hanging returns within its timeout (%s, streaming %s)',
    async (protocol, streaming) => {
      const url = protocol === 'http' ? server.url : server.grpcUrl;
      const context = await loadContext(url, { modelName: 'id_hang', protocol, streaming }, dataset);
      const manager = createLoadManager(context);
      await manager.changeLevel(3);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(manager.inFlight).toBe(3);
      const t0 = Date.now();
      await manager.stop(300);
      const took = Date.now() - t0;
      // 300 ms of waiting, then the requests are aborted (≤ 1 s grace).
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(1500);
      expect(manager.inFlight).toBe(0);
      const records = manager.takeRecords();
      expect(records).toHaveLength(3);
      expect(records.every((r) => !r.ok)).toBe(true);
      await manager.stop(); // idempotent
      await context.client.close();
    },
  );
});
