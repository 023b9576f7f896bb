/**
 * The gRPC negative suite: each bad request gets tritonserver's status and message, and the server
 * stays live. Messages are those of tritonserver's gRPC front end (`infer_handler.cc`,
 * `infer_handler.h`) and core; where our server differs it is said in the test.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { Client, credentials, type ServiceError } from '@grpc/grpc-js';
import {
  serviceDefinition,
  type ModelInferResponse,
  type ModelStreamInferResponse,
  type ServerLiveResponse,
} from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startServer, type RunningServer } from '../../src/index.js';
import { makeRepository } from '../helpers/server.js';
import {
  GrpcStatus,
  GrpcTestClient,
  SIMPLE_A,
  SIMPLE_B,
  grpcError,
  int32Bytes,
  simpleRequest,
} from './helpers.js';

let running: RunningServer;
let client: GrpcTestClient;

beforeAll(async () => {
  const repository = await makeRepository(['simple']);
  // A decoupled copy of `simple` (ONNX Runtime answers each request whole: one response flagged final).
  await cp(join(repository, 'simple'), join(repository, 'simple_decoupled'), { recursive: true });
  const config = await readFile(join(repository, 'simple', 'config.pbtxt'), 'utf8');
  await writeFile(
    join(repository, 'simple_decoupled', 'config.pbtxt'),
    config.replace('name: "simple"', 'name: "simple_decoupled"') +
      '\nmodel_transaction_policy { decoupled: true }\n',
  );
  running = await startServer({
    modelRepositories: [repository],
    httpPort: 0,
    grpcPort: 0,
    logSink: () => undefined,
  });
  client = new GrpcTestClient(running.grpcUrl);
});

afterAll(async () => {
  client.close();
  await running.close();
});

async function expectError(
  request: object,
  code: GrpcStatus,
  details: string,
  rpc = 'ModelInfer',
): Promise<void> {
  const e = await grpcError(client.call(rpc, request));
  expect({ code: e.code, details: e.details }).toEqual({ code, details });
}

describe('model and version', () => {
  it('unknown model: INVALID_ARGUMENT', async () => {
    await expectError(
      simpleRequest(SIMPLE_A, SIMPLE_B, { modelName: 'nope' }),
      GrpcStatus.INVALID_ARGUMENT,
      "Request for unknown model: 'nope' is not found",
    );
  });

  it('unknown version: NOT_FOUND', async () => {
    await expectError(
      simpleRequest(SIMPLE_A, SIMPLE_B, { modelVersion: '4' }),
      GrpcStatus.NOT_FOUND,
      "Request for unknown model: 'simple' version 4 is not found",
    );
  });

  it('a version that is not a number: INVALID_ARGUMENT', async () => {
    const e = await grpcError(
      client.call('ModelInfer', simpleRequest(SIMPLE_A, SIMPLE_B, { modelVersion: 'x' })),
    );
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(e.details).toMatch(/^failed to get model version from specified version string 'x'/);
  });

  it('ModelInfer refuses a decoupled model: UNIMPLEMENTED', async () => {
    await expectError(
      simpleRequest(SIMPLE_A, SIMPLE_B, { modelName: 'simple_decoupled' }),
      GrpcStatus.UNIMPLEMENTED,
      "ModelInfer RPC doesn't support models with decoupled transaction policy",
    );
  });
});

describe('a decoupled model on the stream', () => {
  it('served by a backend that answers each request whole (ONNX Runtime): one response, marked final', async () => {
    const { stream, answers, done } = client.collectingStream();
    stream.write(simpleRequest(SIMPLE_A, SIMPLE_B, { modelName: 'simple_decoupled', id: 'd' }));
    stream.end();
    await done;
    expect(answers).toHaveLength(1);
    expect(answers[0]?.errorMessage).toBe('');
    expect(answers[0]?.inferResponse?.id).toBe('d');
    expect(answers[0]?.inferResponse?.parameters.triton_final_response?.parameterChoice).toEqual({
      case: 'boolParam',
      value: true,
    });
  });
});

describe('raw_input_contents and contents', () => {
  it('fewer raw_input_contents than inputs', async () => {
    await expectError(
      { ...simpleRequest(SIMPLE_A, SIMPLE_B), rawInputContents: [int32Bytes(SIMPLE_A)] },
      GrpcStatus.INVALID_ARGUMENT,
      "unable to find data for input tensor 'INPUT1' for model 'simple' in request.",
    );
  });

  it('a duplicate input is refused before its data is looked for, as tritonserver adds inputs first', async () => {
    await expectError(
      {
        ...simpleRequest(SIMPLE_A, SIMPLE_B, { id: 'dup' }),
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n] },
          { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n] },
          { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] },
        ],
      },
      GrpcStatus.INVALID_ARGUMENT,
      "[request id: dup] input 'INPUT0' already exists in request",
    );
  });

  it('more raw_input_contents than inputs are ignored, as tritonserver does', async () => {
    const r = await client.call<ModelInferResponse>('ModelInfer', {
      ...simpleRequest(SIMPLE_A, SIMPLE_B),
      rawInputContents: [int32Bytes(SIMPLE_A), int32Bytes(SIMPLE_B), int32Bytes(SIMPLE_B)],
    });
    expect(r.rawOutputContents).toHaveLength(2);
  });

  it('a raw entry of the wrong size', async () => {
    await expectError(
      { ...simpleRequest(SIMPLE_A, SIMPLE_B), rawInputContents: [new Uint8Array(60), int32Bytes(SIMPLE_B)] },
      GrpcStatus.INVALID_ARGUMENT,
      "input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 60",
    );
  });

  it('contents together with raw_input_contents', async () => {
    await expectError(
      {
        modelName: 'simple',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n], contents: { intContents: SIMPLE_A } },
          { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] },
        ],
        rawInputContents: [int32Bytes(SIMPLE_B)],
      },
      GrpcStatus.INVALID_ARGUMENT,
      "contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'simple'",
    );
  });

  it('contents of another type than the datatype, or two content fields', async () => {
    const input1 = {
      name: 'INPUT1',
      datatype: 'INT32',
      shape: [1n, 16n],
      contents: { intContents: SIMPLE_B },
    };
    await expectError(
      {
        modelName: 'simple',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n], contents: { fp32Contents: SIMPLE_A } },
          input1,
        ],
      },
      GrpcStatus.INVALID_ARGUMENT,
      "unexpected explicit tensor data for input tensor 'INPUT0' for model 'simple' of type 'FP32', expected datatype 'INT32'",
    );
    await expectError(
      {
        modelName: 'simple',
        inputs: [
          {
            name: 'INPUT0',
            datatype: 'INT32',
            shape: [1n, 16n],
            contents: { intContents: SIMPLE_A, int64Contents: [1n] },
          },
          input1,
        ],
      },
      GrpcStatus.INVALID_ARGUMENT,
      "unexpected explicit tensor data for input tensor 'INPUT0' for model 'simple', binary data was already supplied.",
    );
  });

  it('typed contents with the wrong element count', async () => {
    await expectError(
      {
        modelName: 'simple',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n], contents: { intContents: [1, 2, 3] } },
          { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n], contents: { intContents: SIMPLE_B } },
        ],
      },
      GrpcStatus.INVALID_ARGUMENT,
      "input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 12",
    );
  });

  it('a datatype the model does not take, and a wrong shape', async () => {
    await expectError(
      {
        ...simpleRequest(SIMPLE_A, SIMPLE_B),
        inputs: [
          { name: 'INPUT0', datatype: 'FP32', shape: [1n, 16n] },
          { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] },
        ],
      },
      GrpcStatus.INVALID_ARGUMENT,
      "inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'",
    );
    await expectError(
      {
        ...simpleRequest(SIMPLE_A, SIMPLE_B),
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1n, 8n] },
          { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] },
        ],
      },
      GrpcStatus.INVALID_ARGUMENT,
      "unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,8]",
    );
  });
});

describe('parameters', () => {
  const p = (parameters: object): object => simpleRequest(SIMPLE_A, SIMPLE_B, { parameters } as never);

  it('reserved triton_ keys, and the one allowed', async () => {
    await expectError(
      p({ triton_x: { parameterChoice: { case: 'boolParam', value: true } } }),
      GrpcStatus.INVALID_ARGUMENT,
      "parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: triton_enable_empty_final_response",
    );
    await client.call(
      'ModelInfer',
      p({ triton_enable_empty_final_response: { parameterChoice: { case: 'boolParam', value: true } } }),
    );
  });

  it('priority and timeout types', async () => {
    await expectError(
      p({ priority: { parameterChoice: { case: 'int64Param', value: -1n } } }),
      GrpcStatus.INVALID_ARGUMENT,
      "invalid value for 'priority', expected value >= 0.",
    );
    await expectError(
      p({ priority: { parameterChoice: { case: 'stringParam', value: '1' } } }),
      GrpcStatus.INVALID_ARGUMENT,
      "invalid value type for 'priority' parameter, expected int64_param or uint64_param.",
    );
    await expectError(
      p({ timeout: { parameterChoice: { case: 'boolParam', value: true } } }),
      GrpcStatus.INVALID_ARGUMENT,
      "invalid value type for 'timeout' parameter, expected int64_param.",
    );
  });

  it('classification needs a positive int64_param', async () => {
    const out = (value: object): object =>
      simpleRequest(SIMPLE_A, SIMPLE_B, {
        outputs: [{ name: 'OUTPUT0', parameters: { classification: { parameterChoice: value } } }],
      } as never);
    await expectError(
      out({ case: 'stringParam', value: '1' }),
      GrpcStatus.INVALID_ARGUMENT,
      "invalid value type for 'classification' parameter, expected int64_param",
    );
    await expectError(
      out({ case: 'int64Param', value: 0n }),
      GrpcStatus.INVALID_ARGUMENT,
      "invalid value for 'classification' parameter, expected >= 1",
    );
  });

  it('shared-memory parameters of the wrong type or incomplete', async () => {
    const withParams = (parameters: object): object => ({
      ...simpleRequest(SIMPLE_A, SIMPLE_B),
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n], parameters },
        { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] },
      ],
    });
    await expectError(
      withParams({ shared_memory_region: { parameterChoice: { case: 'int64Param', value: 1n } } }),
      GrpcStatus.INVALID_ARGUMENT,
      "invalid value type for 'shared_memory_region' parameter for tensor 'INPUT0', expected string_param.",
    );
    await expectError(
      withParams({ shared_memory_region: { parameterChoice: { case: 'stringParam', value: 'r' } } }),
      GrpcStatus.INVALID_ARGUMENT,
      "'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor 'INPUT0'",
    );
    await expectError(
      withParams({
        shared_memory_region: { parameterChoice: { case: 'stringParam', value: 'r' } },
        shared_memory_byte_size: { parameterChoice: { case: 'int64Param', value: 64n } },
      }),
      GrpcStatus.NOT_FOUND,
      "Unable to find shared memory region: 'r'",
    );
  });
});

describe('malformed and oversized messages', () => {
  it('bytes that are not a ModelInferRequest: an error status, the server stays live', async () => {
    // A raw client that sends arbitrary bytes as the request (grpc-js fails to decode it).
    const raw = new Client(running.grpcUrl, credentials.createInsecure());
    const e = await new Promise<ServiceError>((resolve) => {
      raw.makeUnaryRequest(
        '/inference.GRPCInferenceService/ModelInfer',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
        (error) => resolve(error as ServiceError),
      );
    });
    raw.close();
    // gRPC C++ cancels the call with INTERNAL `Unable to parse request` (server_interface.h).
    expect(e.code).toBe(GrpcStatus.INTERNAL);
    expect(e.details).toBe('Unable to parse request');
    expect((await client.call<ServerLiveResponse>('ServerLive', {})).live).toBe(true);
  });

  it('bytes that are not a ModelInferRequest on the stream end the reads: pending answered, then OK', async () => {
    const raw = new Client(running.grpcUrl, credentials.createInsecure());
    const stream = raw.makeBidiStreamRequest(
      '/inference.GRPCInferenceService/ModelStreamInfer',
      (b: Buffer) => b,
      (b: Buffer) => serviceDefinition.ModelStreamInfer.responseDeserialize(b),
    );
    const answers: ModelStreamInferResponse[] = [];
    stream.on('data', (m: ModelStreamInferResponse) => answers.push(m));
    const status = new Promise<{ code: number; details: string }>((resolve) => stream.on('status', resolve));
    stream.on('error', () => undefined);
    stream.write(
      serviceDefinition.ModelStreamInfer.requestSerialize(simpleRequest(SIMPLE_A, SIMPLE_B, { id: 'first' })),
    );
    stream.write(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
    // gRPC C++ takes the failed read for the end of the client's messages: tritonserver answers
    // what it has and finishes the stream with OK, without reading on (the client never half-closes).
    const s = await status;
    raw.close();
    expect(s.code).toBe(GrpcStatus.OK);
    expect(answers.map((a) => [a.inferResponse?.id, a.errorMessage])).toEqual([['first', '']]);
    expect((await client.call<ServerLiveResponse>('ServerLive', {})).live).toBe(true);
  });

  it('a message over --grpc-max-message-bytes: RESOURCE_EXHAUSTED, the server stays live', async () => {
    const repository = await makeRepository(['simple']);
    const small = await startServer({
      modelRepositories: [repository],
      httpPort: 0,
      grpcPort: 0,
      grpc: { maxMessageBytes: 1024 },
      logSink: () => undefined,
    });
    const c = new GrpcTestClient(small.grpcUrl);
    try {
      const e = await grpcError(
        c.call('ModelInfer', {
          ...simpleRequest(SIMPLE_A, SIMPLE_B),
          rawInputContents: [new Uint8Array(4096)],
        }),
      );
      expect(e.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
      expect(e.details).toMatch(/^Received message larger than max \(\d+ vs\.? 1024\)$/);
      const ok = await c.call<ModelInferResponse>('ModelInfer', simpleRequest(SIMPLE_A, SIMPLE_B));
      expect(ok.rawOutputContents).toHaveLength(2);
    } finally {
      c.close();
      await small.close();
    }
  });
});

describe('after all of the above', () => {
  it('the server is live and still answers', async () => {
    expect((await client.call<ServerLiveResponse>('ServerLive', {})).live).toBe(true);
    const r = await client.call<ModelInferResponse>('ModelInfer', simpleRequest(SIMPLE_A, SIMPLE_B));
    expect(r.rawOutputContents).toHaveLength(2);
  });
});
