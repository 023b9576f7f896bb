/**
 * A FAKE, clearly labelled: the gRPC twin of fake-kserve.ts. A tiny in-process
 * `inference.GRPCInferenceService` (grpc-js with the client package's service definition) that speaks
 * the contract of the Python-backend model `food_classifier` (INPUT_IMAGE BYTES [1,1] base64 text →
 * FOOD_LABEL BYTES, PROBABILITY FP32). The real food_classifier runs on the embedded server
 * (python-path-real.test.ts); this stand-in is kept only for faults that server cannot be made to show
 * on demand: it can hang (to observe the client's cancel) or fail as Triton does over gRPC. It
 * records what it received (in the HTTP fake's shape).
 */
import type { ServerUnaryCall, sendUnaryData, UntypedServiceImplementation } from '@grpc/grpc-js';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { DataType, serviceDefinition } from '@tritonserver-ts/protocol/grpc';
import type { FakeKserve, ReceivedInfer } from './fake-kserve';

const MODEL = 'food_classifier';

/** Splits a raw BYTES tensor (4-byte little-endian length before each element). */
function bytesElements(raw: Uint8Array | undefined): Buffer[] {
  const out: Buffer[] = [];
  if (!raw) return out;
  const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  for (let off = 0; off + 4 <= buf.length;) {
    const n = buf.readUInt32LE(off);
    out.push(buf.subarray(off + 4, off + 4 + n));
    off += 4 + n;
  }
  return out;
}

function serializeBytes(s: string): Uint8Array {
  const body = Buffer.from(s);
  const out = Buffer.alloc(4 + body.length);
  out.writeUInt32LE(body.length, 0);
  body.copy(out, 4);
  return out;
}

interface InferRequestLike {
  modelName: string;
  inputs: { name: string; datatype: string; shape: bigint[] }[];
  outputs: { name: string }[];
  rawInputContents: Uint8Array[];
}

/** Starts the fake on a free loopback port; `url` is `grpc://127.0.0.1:<port>`. */
export async function startFakeKserveGrpc(): Promise<FakeKserve> {
  let onCancel: () => void = () => undefined;
  const fake: FakeKserve = {
    url: '',
    received: [],
    cancelled: new Promise<void>((r) => (onCancel = r)),
    mode: 'ok',
    answer: { label: 'Seafood', probability: 0.93 },
    close: () => Promise.resolve(),
  };
  const unknown = (cb: sendUnaryData<unknown>, name: string) =>
    cb({ code: status.NOT_FOUND, details: `Request for unknown model: '${name}' is not found` });
  const handlers: UntypedServiceImplementation = {
    ServerLive: (_call: ServerUnaryCall<unknown, unknown>, cb: sendUnaryData<unknown>) =>
      cb(null, { live: true }),
    ServerReady: (_call: ServerUnaryCall<unknown, unknown>, cb: sendUnaryData<unknown>) =>
      cb(null, { ready: true }),
    ModelReady: (call: ServerUnaryCall<{ name: string }, unknown>, cb: sendUnaryData<unknown>) =>
      cb(null, { ready: call.request.name === MODEL }),
    ModelMetadata: (call: ServerUnaryCall<{ name: string }, unknown>, cb: sendUnaryData<unknown>) => {
      if (call.request.name !== MODEL) return unknown(cb, call.request.name);
      cb(null, {
        name: MODEL,
        versions: ['1'],
        platform: 'python',
        inputs: [{ name: 'INPUT_IMAGE', datatype: 'BYTES', shape: [-1n, 1n] }],
        outputs: [
          { name: 'FOOD_LABEL', datatype: 'BYTES', shape: [-1n, 1n] },
          { name: 'PROBABILITY', datatype: 'FP32', shape: [-1n, 1n] },
        ],
      });
    },
    ModelConfig: (call: ServerUnaryCall<{ name: string }, unknown>, cb: sendUnaryData<unknown>) => {
      if (call.request.name !== MODEL) return unknown(cb, call.request.name);
      cb(null, {
        config: {
          name: MODEL,
          backend: 'python',
          maxBatchSize: 16,
          input: [{ name: 'INPUT_IMAGE', dataType: DataType.TYPE_STRING, dims: [1n] }],
          output: [
            { name: 'FOOD_LABEL', dataType: DataType.TYPE_STRING, dims: [1n] },
            { name: 'PROBABILITY', dataType: DataType.TYPE_FP32, dims: [1n] },
          ],
        },
      });
    },
    ModelInfer: (call: ServerUnaryCall<InferRequestLike, unknown>, cb: sendUnaryData<unknown>) => {
      const r = call.request;
      const received: ReceivedInfer = {
        header: {
          inputs: r.inputs.map((i) => ({ name: i.name, datatype: i.datatype, shape: i.shape.map(Number) })),
          outputs: r.outputs.map((o) => ({ name: o.name })),
        },
        elements: bytesElements(r.rawInputContents[0]),
      };
      fake.received.push(received);
      if (fake.mode === 'hang') {
        call.on('cancelled', () => onCancel());
        return;
      }
      if (fake.mode === 'error500') {
        return cb({ code: status.INTERNAL, details: 'Failed to process the request(s) for model instance' });
      }
      const prob = new Float32Array([fake.answer.probability]);
      cb(null, {
        modelName: MODEL,
        modelVersion: '1',
        outputs: [
          { name: 'FOOD_LABEL', datatype: 'BYTES', shape: [1n, 1n] },
          { name: 'PROBABILITY', datatype: 'FP32', shape: [1n, 1n] },
        ],
        rawOutputContents: [serializeBytes(fake.answer.label), new Uint8Array(prob.buffer)],
      });
    },
  };
  const server = new Server();
  server.addService(serviceDefinition, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  fake.url = `grpc://127.0.0.1:${port}`;
  fake.close = () => {
    server.forceShutdown();
    return Promise.resolve();
  };
  return fake;
}
