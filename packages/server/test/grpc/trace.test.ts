/**
 * Traces of gRPC inferences: sampled like HTTP ones, with tritonserver's gRPC timestamps around the
 * core's, in Triton's JSON trace file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { ModelStreamInferResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { GrpcTestClient, SIMPLE_A, SIMPLE_B, simpleRequest, startGrpcTestServer } from './helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-grpc-trace-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const GRPC_INFER = [
  'GRPC_WAITREAD_START',
  'GRPC_WAITREAD_END',
  'REQUEST_START',
  'QUEUE_START',
  'COMPUTE_START',
  'COMPUTE_INPUT_END',
  'COMPUTE_OUTPUT_START',
  'COMPUTE_END',
  'REQUEST_END',
  'INFER_RESPONSE_COMPLETE',
  'GRPC_SEND_START',
  'GRPC_SEND_END',
];

describe('traced gRPC inferences', () => {
  it('ModelInfer and ModelStreamInfer requests get every timestamp, in order', async () => {
    const file = join(dir, 'grpc.json');
    const server = await startGrpcTestServer({
      only: ['simple'],
      trace: { trace_level: ['TIMESTAMPS'], trace_rate: '1', trace_file: file },
    });
    const client = new GrpcTestClient(server.grpcTarget);
    await client.call('ModelInfer', simpleRequest(SIMPLE_A, SIMPLE_B, { id: 'unary' }));
    const stream = client.stream();
    const done = new Promise<void>((resolve, reject) => {
      stream.on('data', (_m: ModelStreamInferResponse) => undefined);
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    stream.write(simpleRequest(SIMPLE_A, SIMPLE_B, { id: 'streamed' }));
    stream.end();
    await done;
    await client.call('ServerLive', {}); // not an inference: not traced
    client.close();
    await server.close();

    expect(existsSync(file)).toBe(true);
    const objects = JSON.parse(readFileSync(file, 'utf8')) as {
      id: number;
      request_id?: string;
      model_name?: string;
      timestamps?: { name: string; ns: number }[];
    }[];
    const ids = [...new Set(objects.map((o) => o.id))];
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      const parts = objects.filter((o) => o.id === id);
      expect(parts.find((o) => o.model_name !== undefined)?.model_name).toBe('simple');
      const stamps = parts.flatMap((o) => o.timestamps ?? []);
      expect([...stamps].sort((a, b) => a.ns - b.ns).map((t) => t.name)).toEqual(GRPC_INFER);
    }
    expect(objects.map((o) => o.request_id).filter((r) => r !== undefined)).toEqual(['unary', 'streamed']);
  });
});
