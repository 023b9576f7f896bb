/**
 * The bench's callers for one workload (model + inputs): through `TritonClient` over HTTP and gRPC,
 * a gRPC `ModelStreamInfer` stream, and the floors each transport is compared with — a bare undici
 * request and a bare @grpc/grpc-js call (unary and streaming) sending bytes encoded once up front
 * and not decoding the answer.
 */
import { Client as GrpcClient, credentials } from '@grpc/grpc-js';
import { Pool } from 'undici';
import { TritonClient, type InferInput, type InferResult } from '../src/index.js';
import { encodeInferRequest } from '@tritonserver-ts/protocol/http';
import { createGrpcClient } from '../src/grpc/index.js';
import { channelOptionsFor } from '../src/grpc/options.js';
import {
  ModelInferRequestSchema,
  asBuffer,
  encodeMessage,
  serviceDefinition,
  toModelInferRequest,
} from '@tritonserver-ts/protocol/grpc';
import type { Call, StreamRun } from './measure.js';

/** A model and the request sent to it, with a check of each answer. */
export interface Workload {
  readonly key: string;
  readonly model: string;
  readonly inputs: readonly InferInput[];
  /** Throws when a client result is wrong. */
  check(result: InferResult): void;
}

/** The callers of one workload. */
export interface Callers {
  readonly httpClient: Call;
  readonly httpFloor: Call;
  readonly grpcClient: Call;
  readonly grpcFloor: Call;
  readonly grpcStream: StreamRun;
  readonly grpcStreamFloor: StreamRun;
}

/** The connections every caller uses (made once, shared by all workloads). */
export class Connections {
  readonly httpClient: TritonClient;
  readonly grpcClient: ReturnType<typeof createGrpcClient>;
  /** Same pool size as the client's HttpTransport (64). */
  readonly httpPool: Pool;
  /** Same channel arguments as the client's GrpcTransport. */
  readonly grpcChannel: GrpcClient;

  constructor(httpUrl: string, grpcTarget: string) {
    this.httpClient = new TritonClient({ url: httpUrl });
    this.grpcClient = createGrpcClient({ url: grpcTarget });
    this.httpPool = new Pool(httpUrl, { connections: 64 });
    this.grpcChannel = new GrpcClient(
      grpcTarget,
      credentials.createInsecure(),
      channelOptionsFor({ url: grpcTarget }),
    );
  }

  async close(): Promise<void> {
    await this.httpClient.close();
    await this.grpcClient.close();
    await this.httpPool.close();
    this.grpcChannel.close();
  }
}

const identity = (b: Buffer): Buffer => b;

export function callersFor(c: Connections, w: Workload): Callers {
  const http = encodeInferRequest(w.inputs, {});
  const httpHeaders: Record<string, string> =
    http.headerLength === undefined
      ? { 'content-type': 'application/json' }
      : {
          'content-type': 'application/octet-stream',
          'inference-header-content-length': String(http.headerLength),
        };
  const httpPath = `/v2/models/${w.model}/infer`;
  const grpcBytes = asBuffer(
    encodeMessage(
      ModelInferRequestSchema,
      toModelInferRequest({ modelName: w.model, modelVersion: '', inputs: w.inputs, request: {} }),
    ),
  );
  const unaryPath = serviceDefinition.ModelInfer.path;
  const streamPath = serviceDefinition.ModelStreamInfer.path;

  return {
    httpClient: async () => w.check(await c.httpClient.infer(w.model, w.inputs)),
    httpFloor: async () => {
      const res = await c.httpPool.request({
        method: 'POST',
        path: httpPath,
        headers: httpHeaders,
        body: http.body,
      });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`HTTP floor: status ${res.statusCode}`);
    },
    grpcClient: async () => w.check(await c.grpcClient.infer(w.model, w.inputs)),
    grpcFloor: () =>
      new Promise<void>((resolve, reject) => {
        c.grpcChannel.makeUnaryRequest(unaryPath, identity, identity, grpcBytes, (error, response) => {
          if (error !== null || response === undefined) reject(error ?? new Error('no response'));
          else resolve();
        });
      }),
    grpcStream: async (window, deadline) => {
      const stream = c.grpcClient.transport.openStream();
      let inFlight = 0;
      let answered = 0;
      for (; inFlight < window; inFlight++) stream.send(w.model, w.inputs);
      for await (const response of stream) {
        if (response.error !== undefined) throw response.error;
        if (response.result === undefined) throw new Error('stream: a response without a result');
        w.check(response.result);
        answered++;
        inFlight--;
        if (performance.now() < deadline) {
          stream.send(w.model, w.inputs);
          inFlight++;
        } else if (inFlight === 0) stream.end();
      }
      return answered;
    },
    grpcStreamFloor: (window, deadline) =>
      new Promise<number>((resolve, reject) => {
        const call = c.grpcChannel.makeBidiStreamRequest(streamPath, identity, identity);
        let inFlight = 0;
        let answered = 0;
        call.on('data', (message: Buffer) => {
          // ModelStreamInferResponse: field 1 (tag 0x0a) is error_message, field 2 (0x12) the response.
          if (message[0] !== 0x12) {
            call.cancel();
            reject(new Error('stream floor: the server answered with an error'));
            return;
          }
          answered++;
          inFlight--;
          if (performance.now() < deadline) {
            call.write(grpcBytes);
            inFlight++;
          } else if (inFlight === 0) call.end();
        });
        call.on('error', reject);
        call.on('end', () => resolve(answered));
        for (; inFlight < window; inFlight++) call.write(grpcBytes);
      }),
  };
}

/** Triton's `simple`: INT32 [1,16] + [1,16] → sum and difference. */
export function simpleWorkload(): Workload {
  const a = Int32Array.from({ length: 16 }, (_, i) => i);
  return {
    key: 'simple',
    model: 'simple',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: a },
    ],
    check: (r) => {
      if (r.asTypedArray('OUTPUT0', 'INT32')[15] !== 30) throw new Error('simple: wrong result');
    },
  };
}

/** The food model: one FP32 [1,3,224,224] image → logits [1,11] (and ood_score [1,1]). */
export function foodWorkload(): Workload {
  const image = Float32Array.from({ length: 3 * 224 * 224 }, (_, i) => Math.sin(i) * 2.5);
  return {
    key: 'food',
    model: 'food_classifier_onnx',
    inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 3, 224, 224], data: image }],
    check: (r) => {
      if (r.asTypedArray('output', 'FP32').length !== 11) throw new Error('food: wrong result');
    },
  };
}
