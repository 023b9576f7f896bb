/**
 * gRPC test helpers: the real server (generated test models) with its gRPC front end on a free
 * port, and a @grpc/grpc-js client over the client package's messages and service definitions.
 */
import {
  Metadata,
  credentials,
  makeGenericClientConstructor,
  status as GrpcStatus,
  type Client,
  type ClientDuplexStream,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  healthServiceDefinition,
  serviceDefinition,
  type ModelInferRequest,
  type ModelStreamInferResponse,
} from '@tritonserver-ts/protocol/grpc';

import type { StartServerOptions } from '../../src/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

export { GrpcStatus };

/** A test server with gRPC on a free loopback port. */
export async function startGrpcTestServer(
  options: Partial<StartServerOptions> & { only?: readonly string[] } = {},
): Promise<TestServer & { grpcTarget: string }> {
  const server = await startTestServer({ grpcPort: 0, ...options });
  return { ...server, grpcTarget: server.running.grpcUrl };
}

type AnyClient = Client & Record<string, (...args: unknown[]) => unknown>;

/** A promisified unary client of both services. */
export class GrpcTestClient {
  readonly inference: AnyClient;
  readonly health: AnyClient;

  constructor(target: string, options: Record<string, number> = {}) {
    const channelOptions = {
      'grpc.max_receive_message_length': -1,
      'grpc.max_send_message_length': -1,
      ...options,
    };
    const Inference = makeGenericClientConstructor(serviceDefinition, 'GRPCInferenceService');
    const Health = makeGenericClientConstructor(healthServiceDefinition, 'Health');
    this.inference = new Inference(target, credentials.createInsecure(), channelOptions) as AnyClient;
    this.health = new Health(target, credentials.createInsecure(), channelOptions) as AnyClient;
  }

  /** Calls a unary RPC of the inference service. */
  call<T>(rpc: string, request: object, metadata: Metadata = new Metadata()): Promise<T> {
    return unaryCall(this.inference, rpc, request, metadata);
  }

  /** Calls `grpc.health.v1.Health/Check`. */
  check<T>(request: object = {}, metadata: Metadata = new Metadata()): Promise<T> {
    return unaryCall(this.health, 'Check', request, metadata);
  }

  /** Opens `ModelStreamInfer`. */
  stream(metadata: Metadata = new Metadata()): ClientDuplexStream<object, ModelStreamInferResponse> {
    const fn = this.inference.ModelStreamInfer as (
      m: Metadata,
    ) => ClientDuplexStream<object, ModelStreamInferResponse>;
    return fn.call(this.inference, metadata);
  }

  /**
   * Opens `ModelStreamInfer` and collects every answer: `done` resolves when the server ends the
   * stream and rejects on a stream error.
   */
  collectingStream(metadata: Metadata = new Metadata()): {
    stream: ClientDuplexStream<object, ModelStreamInferResponse>;
    answers: ModelStreamInferResponse[];
    done: Promise<void>;
  } {
    const stream = this.stream(metadata);
    const answers: ModelStreamInferResponse[] = [];
    const done = new Promise<void>((resolve, reject) => {
      stream.on('data', (m: ModelStreamInferResponse) => answers.push(m));
      stream.on('end', () => resolve());
      stream.on('error', reject);
    });
    return { stream, answers, done };
  }

  close(): void {
    this.inference.close();
    this.health.close();
  }
}

function unaryCall<T>(client: AnyClient, rpc: string, request: object, metadata: Metadata): Promise<T> {
  const fn = client[rpc];
  if (fn === undefined) throw new Error(`no rpc ${rpc}`);
  return new Promise<T>((resolve, reject) => {
    fn.call(client, request, metadata, (error: ServiceError | null, response: T) => {
      if (error !== null) reject(error);
      else resolve(response);
    });
  });
}

/** The gRPC error of a call expected to fail. */
export async function grpcError(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    return error as ServiceError;
  }
  throw new Error('the call succeeded');
}

/** Little-endian INT32 bytes of `values`. */
export function int32Bytes(values: readonly number[]): Uint8Array {
  const a = Int32Array.from(values);
  return new Uint8Array(a.buffer);
}

/** INT32 values of little-endian bytes. */
export function int32Values(bytes: Uint8Array): number[] {
  const copy = new Uint8Array(bytes);
  return Array.from(new Int32Array(copy.buffer, 0, copy.byteLength / 4));
}

/** A `simple` (add/sub, [1,16] INT32) request with raw inputs. */
export function simpleRequest(
  a: readonly number[],
  b: readonly number[],
  extra: Partial<Omit<ModelInferRequest, '$typeName'>> = {},
): object {
  return {
    modelName: 'simple',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n] },
      { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] },
    ],
    rawInputContents: [int32Bytes(a), int32Bytes(b)],
    ...extra,
  };
}

/** 0..15 and 16 ones: the inputs the `simple` examples use. */
export const SIMPLE_A = Array.from({ length: 16 }, (_, i) => i);
export const SIMPLE_B = Array.from({ length: 16 }, () => 1);
