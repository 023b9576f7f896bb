/**
 * A seeded gRPC fuzzer against the real server (the built CLI in a child process, so its memory is
 * its own), in the spirit of `protocol-fuzz.test.ts`. Families:
 *
 * 1. Protobuf: valid messages of every RPC of `inference.GRPCInferenceService` and
 *    `grpc.health.v1.Health/Check`, mutated on the wire and in their values, sent raw (identity
 *    serializers) on unary calls and on `ModelStreamInfer` streams. A message that does not decode
 *    is answered as gRPC C++ answers it (unary: INTERNAL `Unable to parse request`; stream: what is
 *    in flight, then OK, see `src/grpc/unparsable.ts`); any other answer is a status that is not
 *    UNKNOWN, nor INTERNAL but for Triton's own, with no JavaScript error in its message, an OK
 *    answer decodes, and every call ends before its deadline.
 * 2. HTTP/2: raw frames on `node:net` sockets (bad prefaces, garbage frames, HEADERS/CONTINUATION,
 *    SETTINGS, PING and RST_STREAM floods, WINDOW_UPDATE abuse, streams left open, DATA on closed
 *    streams, bad gRPC length prefixes, compressed flags with unknown encodings, oversized declared
 *    lengths): after each case the server answers a PING on that connection or has ended it
 *    (GOAWAY or a close), a stream that was sent whole is ended (trailers or RST_STREAM), and a
 *    `ServerLive` made on another channel while the case ran succeeded. gRPC message framing is also
 *    sent through `node:http2` to read the status it gets, ending with a 1 GiB gzip bomb.
 *
 * After every batch the server is live (HTTP `/v2/health/live` and `ServerLive` on a new channel)
 * and computes a real `ModelInfer` correctly; its resident memory stays bounded after the run, and
 * rises by little more than its in-flight budget (64 MiB here) while it refuses the bomb.
 *
 * The server runs with `--model-control-mode=none`, so a load request is refused after its
 * parameters are read and never loads anything; shared-memory registrations only ever name keys
 * under /dev/shm that this test owns.
 *
 * `FUZZ_SEED` picks the sequence (printed on failure), `GRPC_FUZZ_CASES` (or `FUZZ_CASES`) the
 * number of cases per family (default 150, some 20-40 s in CI; any number locally);
 * `GRPC_FUZZ_DEBUG=1` prints the server's RSS at every liveness check; `GRPC_FUZZ_KINDS` (comma-
 * separated, e.g. `rapid-reset,ping-flood`) runs only those HTTP/2 case kinds.
 */
import { rm, writeFile } from 'node:fs/promises';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { gzipSync, deflateSync } from 'node:zlib';

import { Client, Metadata, credentials, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import {
  decodeMessage,
  encodeMessage,
  healthServiceDefinition,
  serviceDefinition,
  ModelStreamInferResponseSchema,
  SystemSharedMemoryRegisterRequestSchema,
  type ModelInferResponse,
} from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Random, makeTestRepository, startCli, type CliServer } from './helpers.js';
import {
  Flag,
  FrameType,
  PREFACE,
  RawConnection,
  dataFrame,
  frame,
  grpcHeaders,
  grpcMessage,
  headerBlock,
  headersFrame,
  ping,
  rstStream,
  settings,
  windowUpdate,
} from './http2-frames.js';
import { mutateValues, mutateWire } from './protobuf-mutator.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
const CASES = Number(process.env.GRPC_FUZZ_CASES ?? process.env.FUZZ_CASES ?? 150);
/** Every call's deadline: a call still unanswered by then is a hang. */
const DEADLINE_MS = 10_000;
/** Growth of the server's RSS allowed over the whole run. */
const RSS_BOUND_KIB = 256 * 1024;
/** Rise of the server's RSS allowed while it refuses the 1 GiB bomb (the budget and some slack). */
const BOMB_RISE_BOUND_KIB = 192 * 1024;
/** The server's in-flight budget for request bodies and decoded messages (HTTP and gRPC). */
const BUDGET_BYTES = 64 << 20;
/** The shared-memory keys this test owns (/dev/shm/<prefix><n>). */
const SHM_PREFIX = `tritonserver-ts-grpc-fuzz-${process.pid}-`;
const SHM_FILES = [0, 1].map((n) => `/dev/shm/${SHM_PREFIX}${n}`);
const INFERENCE = '/inference.GRPCInferenceService/';

const random = new Random(SEED);

let server: CliServer;
let repository = '';
let target = '';
let startRss = 0;
let peakRss = 0;
/** Details that look odd but are not failures (printed at the end). */
const oddities = new Set<string>();

// ---------------------------------------------------------------------------------------------
// Valid messages of every RPC

const SIMPLE_A = Array.from({ length: 16 }, (_, i) => i);
const SIMPLE_B = Array.from({ length: 16 }, () => 1);
const int32Bytes = (values: readonly number[]): Uint8Array => new Uint8Array(Int32Array.from(values).buffer);
const str = (value: string): object => ({ parameterChoice: { case: 'stringParam', value } });
const i64 = (value: bigint): object => ({ parameterChoice: { case: 'int64Param', value } });
const bool = (value: boolean): object => ({ parameterChoice: { case: 'boolParam', value } });
const simpleInputs = [
  { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n] },
  { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n] },
];

/** `simple` with raw inputs: OUTPUT0 = a + b, OUTPUT1 = a - b. */
const simpleInfer = {
  modelName: 'simple',
  id: 'fuzz',
  inputs: simpleInputs,
  rawInputContents: [int32Bytes(SIMPLE_A), int32Bytes(SIMPLE_B)],
};

/** Requests of every model the server has, in each way of sending tensors. */
const INFER_REQUESTS: readonly object[] = [
  simpleInfer,
  {
    ...simpleInfer,
    outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1' }],
    parameters: { priority: i64(1n), timeout: i64(1_000_000n) },
  },
  {
    modelName: 'simple',
    modelVersion: '1',
    inputs: [
      { ...simpleInputs[0], contents: { intContents: SIMPLE_A } },
      { ...simpleInputs[1], contents: { intContents: SIMPLE_B } },
    ],
  },
  {
    // INPUT0 from the owned region registered as `fuzz_in`, OUTPUT0 written back into it.
    modelName: 'simple',
    inputs: [
      {
        ...simpleInputs[0],
        parameters: { shared_memory_region: str('fuzz_in'), shared_memory_byte_size: i64(64n) },
      },
      simpleInputs[1],
    ],
    outputs: [
      {
        name: 'OUTPUT0',
        parameters: {
          shared_memory_region: str('fuzz_in'),
          shared_memory_byte_size: i64(64n),
          shared_memory_offset: i64(64n),
        },
      },
    ],
    rawInputContents: [int32Bytes(SIMPLE_B)],
  },
  {
    modelName: 'identity_string',
    inputs: [
      {
        name: 'INPUT0',
        datatype: 'BYTES',
        shape: [1n, 2n],
        contents: { bytesContents: [Buffer.from('a'), Buffer.from('bc')] },
      },
    ],
  },
  {
    modelName: 'identity_fp16',
    inputs: [{ name: 'INPUT0', datatype: 'FP16', shape: [1n, 1n] }],
    rawInputContents: [new Uint8Array([0x00, 0x3c])],
  },
  {
    modelName: 'classifier',
    inputs: [
      { name: 'input', datatype: 'FP32', shape: [1n, 5n], contents: { fp32Contents: [1, 2, 3, 4, 5] } },
    ],
    outputs: [{ name: 'probs', parameters: { classification: i64(2n) } }],
  },
];

/** Valid requests of each unary RPC of the inference service, by name. */
const UNARY: Readonly<Record<string, readonly object[]>> = {
  ServerLive: [{}],
  ServerReady: [{}],
  ModelReady: [{ name: 'simple' }, { name: 'simple', version: '1' }],
  ServerMetadata: [{}],
  ModelMetadata: [{ name: 'simple' }, { name: 'identity_string', version: '1' }],
  ModelInfer: INFER_REQUESTS,
  ModelConfig: [{ name: 'simple' }, { name: 'classifier', version: '1' }],
  ModelStatistics: [{}, { name: 'simple', version: '1' }],
  RepositoryIndex: [{}, { ready: true }],
  RepositoryModelLoad: [
    { modelName: 'simple' },
    { modelName: 'simple', parameters: { config: str('{"max_batch_size": 8}') } },
    {
      modelName: 'fresh',
      parameters: {
        config: str('{"backend": "onnxruntime"}'),
        'file:1/model.onnx': { parameterChoice: { case: 'bytesParam', value: new Uint8Array(16) } },
      },
    },
  ],
  RepositoryModelUnload: [
    { modelName: 'simple' },
    { modelName: 'simple', parameters: { unload_dependents: bool(true) } },
  ],
  SystemSharedMemoryStatus: [{}, { name: 'fuzz_in' }],
  SystemSharedMemoryRegister: [{ name: 'fuzz_r', key: `/${SHM_PREFIX}1`, offset: 0n, byteSize: 64n }],
  SystemSharedMemoryUnregister: [{ name: 'fuzz_r' }],
  CudaSharedMemoryStatus: [{}, { name: 'c' }],
  CudaSharedMemoryRegister: [{ name: 'c', rawHandle: new Uint8Array(64), deviceId: 0n, byteSize: 64n }],
  CudaSharedMemoryUnregister: [{ name: 'c' }],
  TraceSetting: [
    {},
    {
      modelName: 'simple',
      settings: {
        trace_rate: { value: ['1000'] },
        trace_level: { value: ['OFF'] },
        trace_count: { value: ['-1'] },
      },
    },
  ],
  LogSettings: [
    {},
    {
      settings: {
        log_verbose_level: { parameterChoice: { case: 'uint32Param', value: 0 } },
        log_info: bool(true),
        log_format: str('default'),
      },
    },
  ],
};

interface Rpc {
  readonly path: string;
  readonly name: string;
  readonly definition:
    (typeof serviceDefinition)[keyof typeof serviceDefinition] | typeof healthServiceDefinition.Check;
  readonly messages: readonly object[];
}

/** The unary RPCs, `ModelInfer` weighted up (it reads the most). */
const RPCS: readonly Rpc[] = [
  ...Object.entries(UNARY).flatMap(([name, messages]) => {
    const definition = serviceDefinition[name as keyof typeof serviceDefinition];
    const rpc: Rpc = { path: definition.path, name, definition, messages };
    return name === 'ModelInfer' ? [rpc, rpc, rpc, rpc] : [rpc];
  }),
  {
    path: healthServiceDefinition.Check.path,
    name: 'Health/Check',
    definition: healthServiceDefinition.Check,
    messages: [{}, { service: 'inference.GRPCInferenceService' }],
  },
];

type Schema = Rpc['definition']['requestSchema'];

/** Whether `bytes` decode as a message of `schema` (as the server's decoder, the same protobuf-es, sees them). */
function decodes(schema: Schema, bytes: Uint8Array): boolean {
  try {
    decodeMessage(schema, bytes);
    return true;
  } catch {
    return false;
  }
}

/** A mutated encoding of one of `rpc`'s messages: its values, its bytes, or both. */
function mutatedRequest(rpc: Rpc): Buffer {
  const schema = rpc.definition.requestSchema;
  const base = encodeMessage(schema, random.pick(rpc.messages) as never);
  const r = random.int(10);
  let bytes: Uint8Array = base;
  if (r < 5) {
    const message = decodeMessage(schema, base);
    mutateValues(message, random);
    try {
      bytes = encodeMessage(schema, message as never);
    } catch {
      bytes = base; // a value the schema cannot hold (a uint64 set to -1): the wire mutation instead
    }
  }
  if (r >= 4 || bytes === base) bytes = mutateWire(bytes, random);
  return ownedKeysOnly(rpc.name, Buffer.from(bytes));
}

/** A key under /dev/shm that this test owns (no other `/`: the server refuses those unopened). */
const OWNED_KEY = new RegExp(`^/*${SHM_PREFIX}[A-Za-z0-9_.-]*$`);

/** A register request naming a key this test does not own gets one it does (the rest as mutated). */
function ownedKeysOnly(name: string, bytes: Buffer): Buffer {
  if (name !== 'SystemSharedMemoryRegister') return bytes;
  let message;
  try {
    message = decodeMessage(SystemSharedMemoryRegisterRequestSchema, bytes);
  } catch {
    return bytes; // not decodable: never registered
  }
  if (OWNED_KEY.test(message.key)) return bytes;
  message.key = `/${SHM_PREFIX}${random.int(3)}`;
  return Buffer.from(encodeMessage(SystemSharedMemoryRegisterRequestSchema, message));
}

// ---------------------------------------------------------------------------------------------
// Calls and checks

interface Outcome {
  readonly code: GrpcStatus;
  readonly details: string;
  readonly response?: Buffer;
}

const identity = (b: Buffer): Buffer => b;
const deadline = (): { deadline: number } => ({ deadline: Date.now() + DEADLINE_MS });

/** A unary call with `bytes` as the request as is. */
function callRaw(client: Client, path: string, bytes: Buffer, metadata = new Metadata()): Promise<Outcome> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, identity, identity, bytes, metadata, deadline(), (error, value) => {
      if (error !== null) resolve({ code: error.code, details: error.details });
      else resolve({ code: GrpcStatus.OK, details: '', ...(value !== undefined ? { response: value } : {}) });
    });
  });
}

/**
 * INTERNAL answers tritonserver itself gives to decodable requests: a shared-memory key that does
 * not open (`shared_memory_manager.cc`), a model the repository cannot load.
 */
const TRITON_INTERNAL: readonly RegExp[] = [
  /^Unable to open shared memory region: '.*'$/s,
  /^failed to load '.*'/s,
];

/** UNAVAILABLE answers of the server (anything else is the transport failing: a crash). */
const SERVER_UNAVAILABLE: readonly RegExp[] = [
  /^explicit model load \/ unload is not allowed if polling is enabled$/,
  /is not at ready state$/s,
  // The in-flight budget shared with HTTP (--http-max-inflight-body-bytes), full: retry later.
  /^request bodies in flight exceed the server's limit of \d+ bytes/,
];

/** A JavaScript error leaking into a status or error message. */
const JS_ERROR =
  /\b(?:TypeError|RangeError|ReferenceError|SyntaxError)\b|Cannot read propert|is not a function|Maximum call stack|\[object Object\]/;

/** The rules of an answer to a request that decodes. */
function checkDecodable(outcome: Outcome, context: string): void {
  const { code, details } = outcome;
  expect(details, `${context}: a JavaScript error in the details`).not.toMatch(JS_ERROR);
  if (/\bundefined\b|\bNaN\b/.test(details)) oddities.add(details.slice(0, 200));
  expect(
    [GrpcStatus.UNKNOWN, GrpcStatus.DEADLINE_EXCEEDED, GrpcStatus.CANCELLED, GrpcStatus.DATA_LOSS],
    `${context}: ${GrpcStatus[code]} ${details}`,
  ).not.toContain(code);
  if (code === GrpcStatus.INTERNAL) {
    expect(
      TRITON_INTERNAL.some((re) => re.test(details)),
      `${context}: INTERNAL ${details}`,
    ).toBe(true);
  }
  if (code === GrpcStatus.UNAVAILABLE) {
    expect(
      SERVER_UNAVAILABLE.some((re) => re.test(details)),
      `${context}: UNAVAILABLE ${details}`,
    ).toBe(true);
  }
}

function expectRunning(context: string): void {
  const { exitCode, signalCode } = server.child;
  expect({ exitCode, signalCode }, `${context}: the server died\n${server.stderrTail()}`).toEqual({
    exitCode: null,
    signalCode: null,
  });
}

/** A fresh channel (its own connection, not a shared subchannel). */
function freshClient(): Client {
  return new Client(target, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
}

function sampleRss(): void {
  peakRss = Math.max(peakRss, server.rssKiB());
}

/**
 * The server is live (HTTP and gRPC on a new channel) and computes `simple` correctly; the log
 * settings a case may have changed are put back.
 */
async function stillServing(context: string): Promise<void> {
  expectRunning(context);
  const live = await fetch(`${server.url}/v2/health/live`, { signal: AbortSignal.timeout(DEADLINE_MS) });
  expect(live.status, context).toBe(200);
  const client = freshClient();
  try {
    const d = serviceDefinition;
    const liveAnswer = await callRaw(
      client,
      d.ServerLive.path,
      Buffer.from(d.ServerLive.requestSerialize({})),
    );
    expect(liveAnswer.code, `${context}: ServerLive ${liveAnswer.details}`).toBe(GrpcStatus.OK);
    expect(d.ServerLive.responseDeserialize(liveAnswer.response ?? Buffer.alloc(0)).live).toBe(true);
    const infer = await callRaw(client, d.ModelInfer.path, d.ModelInfer.requestSerialize(simpleInfer));
    expect(infer.code, `${context}: ModelInfer ${infer.details}`).toBe(GrpcStatus.OK);
    const response: ModelInferResponse = d.ModelInfer.responseDeserialize(infer.response ?? Buffer.alloc(0));
    const outputs = Object.fromEntries(
      response.outputs.map((o, i) => [
        o.name,
        Array.from(new Int32Array(new Uint8Array(response.rawOutputContents[i] ?? []).buffer)),
      ]),
    );
    expect(outputs, context).toEqual({
      OUTPUT0: SIMPLE_A.map((a, i) => a + (SIMPLE_B[i] ?? 0)),
      OUTPUT1: SIMPLE_A.map((a, i) => a - (SIMPLE_B[i] ?? 0)),
    });
    const reset = await callRaw(
      client,
      d.LogSettings.path,
      d.LogSettings.requestSerialize({
        settings: {
          log_verbose_level: { parameterChoice: { case: 'uint32Param', value: 0 } },
          log_info: { parameterChoice: { case: 'boolParam', value: true } },
        },
      }),
    );
    expect(reset.code, `${context}: LogSettings ${reset.details}`).toBe(GrpcStatus.OK);
    await registerInputRegion(client);
  } finally {
    client.close();
  }
  sampleRss();
  if (process.env.GRPC_FUZZ_DEBUG !== undefined) console.log(`${context}: RSS ${server.rssKiB()} KiB`);
}

/**
 * Registers `fuzz_in` (the owned region the shared-memory infer request reads) afresh, after
 * unregistering every region the cases registered.
 */
async function registerInputRegion(client: Client): Promise<void> {
  const { SystemSharedMemoryUnregister: unregister, SystemSharedMemoryRegister: register } =
    serviceDefinition;
  const all = await callRaw(client, unregister.path, unregister.requestSerialize({ name: '' }));
  expect(all.code, `unregister: ${all.details}`).toBe(GrpcStatus.OK);
  const r = await callRaw(
    client,
    register.path,
    register.requestSerialize({ name: 'fuzz_in', key: `/${SHM_PREFIX}0`, offset: 0n, byteSize: 128n }),
  );
  expect(r.code, `register: ${r.details}`).toBe(GrpcStatus.OK);
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64').slice(0, 300);

beforeAll(async () => {
  const region = Buffer.alloc(4096);
  for (let i = 0; i < 16; i++) region.writeInt32LE(i, i * 4);
  for (const file of SHM_FILES) await writeFile(file, region);
  repository = await makeTestRepository(['simple', 'identity_string', 'identity_fp16', 'classifier']);
  server = await startCli([
    `--model-repository=${repository}`,
    '--http-port=0',
    '--grpc-port=0',
    '--http-address=127.0.0.1',
    '--grpc-address=127.0.0.1',
    '--allow-metrics=false',
    '--model-control-mode=none',
    '--allow-client-shm=true',
    // A smaller in-flight budget than the default 256 MiB, so the bomb's bound is tighter.
    `--http-max-inflight-body-bytes=${BUDGET_BYTES}`,
  ]);
  target = `127.0.0.1:${server.grpcPort}`;
  await stillServing('at start');
  startRss = server.rssKiB();
  peakRss = startRss;
}, 60_000);

afterAll(async () => {
  server?.kill();
  await rm(repository, { recursive: true, force: true });
  for (const file of SHM_FILES) await rm(file, { force: true });
  if (oddities.size > 0) console.log(`odd details (FUZZ_SEED=${SEED}):\n${[...oddities].join('\n')}`);
});

// ---------------------------------------------------------------------------------------------
// Family 2 helpers: HTTP/2 cases

/** What a raw case leaves behind. */
interface RawCase {
  readonly conn: RawConnection;
  /** A stream sent whole: the server must end it (unless it closes the connection). */
  readonly stream?: number;
  /** Keep the connection open until the batch's liveness check (streams left open). */
  readonly hold?: boolean;
}

const PATHS = ['ServerLive', 'ModelInfer', 'ModelStreamInfer', 'ModelConfig', 'Nope'].map(
  (n) => INFERENCE + n,
);

function validBody(path: string): Buffer {
  if (path.endsWith('/ModelInfer') || path.endsWith('/ModelStreamInfer'))
    return serviceDefinition.ModelInfer.requestSerialize(simpleInfer);
  if (path.endsWith('/ModelConfig'))
    return serviceDefinition.ModelConfig.requestSerialize({ name: 'simple' });
  return Buffer.alloc(0);
}

/** A connection past the preface and its SETTINGS. */
async function open(ack = true): Promise<RawConnection> {
  const conn = new RawConnection(server.grpcPort ?? 0, ack);
  await conn.write(Buffer.concat([PREFACE, settings([])]));
  return conn;
}

/** A random frame: any type (unknown ones too), flags, stream and payload, its length sometimes a lie. */
function garbageFrame(): Buffer {
  const type = random.int(3) === 0 ? random.int(256) : random.int(10);
  const payload = random.bytes(random.pick([0, 1, 4, 5, 8, 9, 64, 16_385]));
  const length = random.int(4) === 0 ? random.pick([0, 1, payload.length + 100, 0xffffff]) : payload.length;
  const stream = random.pick([0, 1, 2, 3, 0x7fffffff, 0xffffffff]);
  return frame(type, random.int(256), stream, payload, length);
}

const CASE_KINDS = [
  'preface',
  'garbage',
  'headers-flood',
  'settings-flood',
  'window-update',
  'rapid-reset',
  'ping-flood',
  'open-streams',
  'closed-stream-data',
  'grpc-prefix',
  'compression',
  'declared-length',
  'bad-headers',
] as const;
type CaseKind = (typeof CASE_KINDS)[number];
/** The kinds run: all, or those named in `GRPC_FUZZ_KINDS` (comma-separated). */
const KINDS: readonly CaseKind[] = CASE_KINDS.filter(
  (k) => process.env.GRPC_FUZZ_KINDS === undefined || process.env.GRPC_FUZZ_KINDS.split(',').includes(k),
);

/** One HTTP/2 abuse case. */
async function rawCase(kind: CaseKind): Promise<RawCase> {
  const path = random.pick(PATHS);
  switch (kind) {
    case 'preface': {
      const conn = new RawConnection(server.grpcPort ?? 0);
      const preface = Buffer.from(PREFACE);
      const r = random.int(5);
      // Random bytes, at least as many as the preface (fewer would leave the server waiting, rightly).
      if (r === 0) await conn.write(random.bytes(24 + random.int(100)));
      else if (r === 1) {
        const at = random.int(preface.length);
        preface[at] = (preface[at] ?? 0) ^ (1 << random.int(8));
        await conn.write(Buffer.concat([preface, settings([])]));
      } else if (r === 2) await conn.write(Buffer.from('GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n'));
      else if (r === 3)
        await conn.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
      // The preface without SETTINGS, then frames.
      else await conn.write(Buffer.concat([PREFACE, headersFrame(1, grpcHeaders(path), true)]));
      return { conn };
    }
    case 'garbage': {
      const conn = await open();
      await conn.write(Buffer.concat(Array.from({ length: 1 + random.int(20) }, garbageFrame)));
      // A frame whose length was a lie leaves the server waiting for the rest, which is its right:
      // zeros complete it, then read as DATA on stream 0 (a connection error), so the case ends.
      await conn.write(Buffer.alloc(16_384 + 9));
      return { conn };
    }
    case 'headers-flood': {
      const conn = await open();
      const r = random.int(4);
      const block = (n: number): Buffer =>
        headerBlock(
          Array.from(
            { length: n },
            (_, i) => [`x-fuzz-${i % 1000}`, 'v'.repeat(random.int(200))] as [string, string],
          ),
        );
      if (r === 0) {
        // HEADERS without END_HEADERS and a flood of CONTINUATION frames that never ends the block.
        const parts = [frame(FrameType.HEADERS, 0, 1, headerBlock(grpcHeaders(path)))];
        for (let i = random.pick([100, 1_000, 5_000]); i > 0; i--)
          parts.push(frame(FrameType.CONTINUATION, 0, 1, block(random.int(8))));
        await conn.write(Buffer.concat(parts));
      } else if (r === 1) {
        // Empty CONTINUATION frames (nothing to count against a header size limit).
        const parts = [frame(FrameType.HEADERS, 0, 1, headerBlock(grpcHeaders(path)))];
        for (let i = 10_000; i > 0; i--) parts.push(frame(FrameType.CONTINUATION, 0, 1));
        await conn.write(Buffer.concat(parts));
      } else if (r === 2) {
        // One header list far past any limit, split over CONTINUATION frames, then the end.
        const big = headerBlock([
          ...grpcHeaders(path),
          ['x-big', 'a'.repeat(random.pick([70_000, 1 << 20]))],
        ]);
        const parts: Buffer[] = [];
        for (let at = 0; at < big.length; at += 16_384) {
          const last = at + 16_384 >= big.length;
          parts.push(
            frame(
              at === 0 ? FrameType.HEADERS : FrameType.CONTINUATION,
              last ? Flag.END_HEADERS | (at === 0 ? Flag.END_STREAM : 0) : 0,
              1,
              big.subarray(at, at + 16_384),
            ),
          );
        }
        await conn.write(Buffer.concat(parts));
      } else {
        // Many streams, each with thousands of small headers.
        const parts: Buffer[] = [];
        for (let s = 1; s < 1 + 2 * random.pick([10, 100]); s += 2)
          parts.push(
            frame(
              FrameType.HEADERS,
              Flag.END_HEADERS | Flag.END_STREAM,
              s,
              headerBlock([
                ...grpcHeaders(path),
                ...Array.from({ length: 200 }, (_, i) => [`x-${i}`, '1'] as [string, string]),
              ]),
            ),
          );
        await conn.write(Buffer.concat(parts));
      }
      return { conn };
    }
    case 'settings-flood': {
      const conn = await open(random.int(2) === 0);
      conn.stopReading();
      const entry = (): [number, number] =>
        random.pick<[number, number]>([
          [1, random.int(1 << 16)], // HEADER_TABLE_SIZE
          [2, random.int(3)], // ENABLE_PUSH (2 is invalid)
          [3, random.int(200)], // MAX_CONCURRENT_STREAMS
          [4, random.pick([0, 65_535, 2 ** 31 - 1, 2 ** 31])], // INITIAL_WINDOW_SIZE (2^31 is invalid)
          [5, random.pick([16_384, 16_383, 2 ** 24 - 1, 2 ** 24])], // MAX_FRAME_SIZE
          [6, random.int(2 ** 31)], // MAX_HEADER_LIST_SIZE
          [random.int(1 << 16), random.int(2 ** 32)], // unknown
        ]);
      const n = random.pick([100, 1_000, 10_000]);
      await conn.write(
        Buffer.concat(
          Array.from({ length: n }, () => settings(Array.from({ length: random.int(4) }, entry))),
        ),
      );
      return { conn };
    }
    case 'window-update': {
      const conn = await open();
      const r = random.int(4);
      if (r === 0) await conn.write(windowUpdate(random.pick([0, 1, 3]), 0));
      else if (r === 1)
        await conn.write(Buffer.concat([windowUpdate(0, 2 ** 31 - 1), windowUpdate(0, 2 ** 31 - 1)]));
      else if (r === 2) {
        // A call whose response the server may not send (window 0), then WINDOW_UPDATE floods.
        await conn.write(
          Buffer.concat([
            settings([[4, 0]]),
            headersFrame(1, grpcHeaders(path)),
            dataFrame(1, grpcMessage(validBody(path)), true),
          ]),
        );
        await conn.write(
          Buffer.concat(Array.from({ length: 5_000 }, () => windowUpdate(random.pick([0, 1, 5]), 1))),
        );
        return { conn, hold: true };
      } else
        await conn.write(
          Buffer.concat([
            headersFrame(1, grpcHeaders(path)),
            windowUpdate(1, 2 ** 31 - 1),
            windowUpdate(1, 2 ** 31 - 1),
          ]),
        );
      return { conn };
    }
    case 'rapid-reset': {
      const conn = await open();
      const n = random.pick([100, 1_000, 5_000]);
      const withData = random.int(2) === 0;
      const body = grpcMessage(validBody(path));
      const parts: Buffer[] = [];
      for (let i = 0, s = 1; i < n; i++, s += 2) {
        parts.push(headersFrame(s, grpcHeaders(path)));
        if (withData) parts.push(dataFrame(s, body, true));
        parts.push(rstStream(s, random.pick([8, 0, 2])));
      }
      await conn.write(Buffer.concat(parts));
      return { conn };
    }
    case 'ping-flood': {
      const conn = await open();
      const r = random.int(3);
      if (r === 0) {
        conn.stopReading();
        await conn.write(
          Buffer.concat(Array.from({ length: random.pick([1_000, 10_000, 50_000]) }, () => ping())),
        );
      } else if (r === 1)
        await conn.write(ping(random.bytes(random.pick([0, 7, 9])), false)); // wrong length
      else await conn.write(Buffer.concat([ping(Buffer.alloc(8), true), ping(Buffer.alloc(8), false, 1)])); // unsolicited ACK, on a stream
      return { conn };
    }
    case 'open-streams': {
      const conn = await open();
      const parts: Buffer[] = [];
      for (let i = 0, s = 1; i < random.pick([10, 100, 500]); i++, s += 2) {
        parts.push(headersFrame(s, grpcHeaders(path)));
        // Some get part of a message (its prefix promises more), none END_STREAM.
        if (random.int(2) === 0)
          parts.push(dataFrame(s, grpcMessage(Buffer.from([0x0a, 0x06]), { declared: 1000 })));
      }
      await conn.write(Buffer.concat(parts));
      return { conn, hold: true };
    }
    case 'closed-stream-data': {
      const conn = await open();
      const body = grpcMessage(validBody(path));
      const r = random.int(4);
      if (r === 0)
        await conn.write(
          Buffer.concat([
            headersFrame(1, grpcHeaders(path)),
            dataFrame(1, body, true),
            dataFrame(1, body),
            dataFrame(1, body, true),
          ]),
        );
      else if (r === 1) await conn.write(dataFrame(0, body));
      else if (r === 2)
        await conn.write(dataFrame(101, body, true)); // an idle stream
      // More DATA than the stream's window (65,535) allows.
      else
        await conn.write(
          Buffer.concat([
            headersFrame(1, grpcHeaders(path)),
            ...Array.from({ length: 6 }, () => dataFrame(1, Buffer.alloc(16_384))),
          ]),
        );
      return { conn };
    }
    case 'grpc-prefix':
    case 'compression':
    case 'declared-length': {
      const conn = await open();
      const body = validBody(path);
      let extra: [string, string][] = [];
      let message: Buffer;
      if (kind === 'grpc-prefix') {
        const declared = random.pick([body.length + 1, Math.max(0, body.length - 1), 0, 3]);
        message = grpcMessage(body, { declared, flag: random.pick([0, 0, 2, 0x80, 0xff]) });
        if (random.int(3) === 0) message = message.subarray(0, random.int(5)); // a prefix cut short
      } else if (kind === 'compression') {
        const encoding = random.pick(['x', 'snappy', 'gzip', 'deflate', 'identity', 'gzip, br', '']);
        if (encoding !== '') extra = [['grpc-encoding', encoding]];
        const packed = random.int(2) === 0 ? gzipSync(body) : random.bytes(random.int(64));
        message = grpcMessage(packed, { flag: 1 });
      } else {
        message = grpcMessage(body.subarray(0, random.int(body.length + 1)), {
          declared: random.pick([2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 100 << 20]),
        });
      }
      await conn.write(
        Buffer.concat([headersFrame(1, grpcHeaders(path, extra)), dataFrame(1, message, true)]),
      );
      return { conn, stream: 1 };
    }
    case 'bad-headers': {
      const conn = await open();
      const headers = grpcHeaders(path);
      const r = random.int(7);
      if (r === 0)
        headers.splice(2, 1); // no :path
      else if (r === 1) headers[0] = [':method', 'GET'];
      else if (r === 2) headers[4] = ['content-type', 'text/plain'];
      else if (r === 3)
        headers.push(['X-Upper', 'v']); // upper case: a malformed request
      else if (r === 4) headers.push(['grpc-timeout', random.pick(['abc', '0n', '99999999999H', '-1S'])]);
      else if (r === 5)
        headers.push([':path', '/again']); // a pseudo-header after regular ones
      else headers.push(['connection', 'keep-alive']); // a connection-specific header
      await conn.write(
        Buffer.concat([headersFrame(1, headers), dataFrame(1, grpcMessage(validBody(path)), true)]),
      );
      return { conn, stream: 1 };
    }
  }
}

/**
 * A gRPC call made through `node:http2` with `payload` as its DATA (split at `cut`): its status, a
 * stream closed without one (`code` -1), or undefined when nothing came before the deadline.
 */
function http2Call(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  payload: Buffer,
  cut: number,
): Promise<Outcome | undefined> {
  return new Promise((resolve) => {
    const req = session.request(headers);
    let code: number | undefined;
    let details = '';
    const read = (h: Record<string, unknown>): void => {
      if (h['grpc-status'] !== undefined) {
        code = Number(h['grpc-status']);
        const message = h['grpc-message'];
        details = typeof message === 'string' ? decodeURIComponent(message) : '';
      }
    };
    const timer = setTimeout(() => {
      req.close();
      resolve(undefined);
    }, DEADLINE_MS);
    req.on('response', read);
    req.on('trailers', read);
    req.on('error', () => undefined);
    req.on('data', () => undefined);
    req.on('close', () => {
      clearTimeout(timer);
      resolve(
        code === undefined
          ? { code: -1 as GrpcStatus, details: `closed, rst ${req.rstCode}` }
          : { code, details },
      );
    });
    req.write(payload.subarray(0, cut));
    req.end(payload.subarray(cut));
  });
}

// ---------------------------------------------------------------------------------------------
// The fuzzer

describe(`gRPC fuzzer (seed ${SEED}, ${CASES} cases per family)`, () => {
  it('protobuf: mutated messages of every unary RPC and Health/Check', async () => {
    const client = freshClient();
    const counts = new Map<string, number>();
    try {
      for (let i = 0; i < CASES; i++) {
        const rpc = RPCS[i % RPCS.length] as Rpc;
        const bytes = mutatedRequest(rpc);
        const context = `unary case ${i} ${rpc.name} (FUZZ_SEED=${SEED}) bytes ${b64(bytes)}`;
        const outcome = await callRaw(client, rpc.path, bytes);
        counts.set(
          GrpcStatus[outcome.code] ?? String(outcome.code),
          (counts.get(GrpcStatus[outcome.code] ?? '') ?? 0) + 1,
        );
        expectRunning(context);
        if (!decodes(rpc.definition.requestSchema, bytes)) {
          // gRPC C++ cancels the call before tritonserver sees it.
          expect({ code: outcome.code, details: outcome.details }, context).toEqual({
            code: GrpcStatus.INTERNAL,
            details: 'Unable to parse request',
          });
        } else {
          checkDecodable(outcome, context);
          if (outcome.code === GrpcStatus.OK) {
            expect(
              () => rpc.definition.responseDeserialize(outcome.response ?? Buffer.alloc(0)),
              context,
            ).not.toThrow();
          }
        }
        if ((i + 1) % Math.max(1, Math.floor(CASES / 10)) === 0) await stillServing(`after unary case ${i}`);
      }
    } finally {
      client.close();
    }
    console.log(`unary statuses (FUZZ_SEED=${SEED}):`, Object.fromEntries(counts));
    await stillServing('after the unary cases');
    console.log(`RSS after the unary cases: ${server.rssKiB()} KiB (peak ${peakRss} KiB)`);
  }, 180_000);

  it('protobuf: ModelStreamInfer streams of valid and mutated requests', async () => {
    const client = freshClient();
    const definition = serviceDefinition.ModelStreamInfer;
    const streams = Math.max(1, Math.ceil(CASES / 3));
    try {
      for (let i = 0; i < streams; i++) {
        const messages = Array.from({ length: 1 + random.int(5) }, () =>
          random.int(3) === 0
            ? definition.requestSerialize(random.pick(INFER_REQUESTS) as never)
            : mutatedRequest({
                path: definition.path,
                name: 'ModelStreamInfer',
                definition,
                messages: INFER_REQUESTS,
              }),
        );
        const errorMode = random.int(4) === 0;
        const metadata = new Metadata();
        if (errorMode) metadata.set('triton_grpc_error', 'true');
        const context = `stream case ${i}${errorMode ? ' (triton_grpc_error)' : ''} (FUZZ_SEED=${SEED}) messages ${messages.map(b64).join(' | ')}`;
        const answers: Buffer[] = [];
        const status = await new Promise<Outcome>((resolve) => {
          const call = client.makeBidiStreamRequest(
            definition.path,
            identity,
            identity,
            metadata,
            deadline(),
          );
          call.on('data', (b: Buffer) => answers.push(b));
          call.on('status', (s) => resolve({ code: s.code, details: s.details }));
          call.on('error', (e: ServiceError) => resolve({ code: e.code, details: e.details }));
          for (const m of messages) call.write(m);
          call.end();
        });
        expectRunning(context);
        // Requests before the first that does not decode are each answered; it ends the reads.
        const firstBad = messages.findIndex((m) => !decodes(definition.requestSchema, m));
        const readable = firstBad === -1 ? messages.length : firstBad;
        for (const a of answers) {
          const decoded = decodeMessage(ModelStreamInferResponseSchema, a);
          expect(decoded.errorMessage, `${context}: a JavaScript error in error_message`).not.toMatch(
            JS_ERROR,
          );
          if (/\bundefined\b|\bNaN\b/.test(decoded.errorMessage))
            oddities.add(decoded.errorMessage.slice(0, 200));
        }
        if (!errorMode) {
          expect(
            { code: GrpcStatus[status.code], answers: answers.length },
            `${context}: ${status.details}`,
          ).toEqual({
            code: 'OK',
            answers: readable,
          });
        } else {
          expect(answers.length, context).toBeLessThanOrEqual(readable);
          if (status.code !== GrpcStatus.OK) checkDecodable(status, context);
        }
        if ((i + 1) % Math.max(1, Math.floor(streams / 5)) === 0)
          await stillServing(`after stream case ${i}`);
      }
    } finally {
      client.close();
    }
    await stillServing('after the stream cases');
    console.log(`RSS after the stream cases: ${server.rssKiB()} KiB (peak ${peakRss} KiB)`);
  }, 180_000);

  it('HTTP/2: bad prefaces, garbage frames, floods, resets, window abuse, open streams, bad framing', async () => {
    const batch = Math.max(1, Math.floor(CASES / 15));
    let held: RawConnection[] = [];
    let slowestLiveMs = 0;
    const kinds = new Map<string, number>();
    for (let i = 0; i < CASES; i++) {
      const kind = KINDS[i % KINDS.length] as CaseKind;
      const context = `HTTP/2 case ${i} ${kind} (FUZZ_SEED=${SEED})`;
      // A ServerLive on its own channel while the case runs: the server keeps answering others.
      const probe = freshClient();
      const started = Date.now();
      const live = callRaw(probe, serviceDefinition.ServerLive.path, Buffer.alloc(0)).then((o) => {
        slowestLiveMs = Math.max(slowestLiveMs, Date.now() - started);
        return o;
      });
      const c = await rawCase(kind);
      const { conn } = c;
      const t0 = Date.now();
      // A sync point: the server answers this PING once it has read the case, or it closes the connection.
      if (!conn.isClosed) {
        conn.socket.resume();
        const token = random.bytes(8);
        await conn.write(ping(token));
        const answered = await conn.waitFor(
          (frames) =>
            conn.goaway ||
            frames.some(
              (f) => f.type === FrameType.PING && (f.flags & Flag.ACK) !== 0 && f.payload.equals(token),
            ),
          DEADLINE_MS,
        );
        expect(
          answered || conn.isClosed || conn.goaway,
          `${context}: no PING answer and the connection is still open`,
        ).toBe(true);
      }
      if (c.stream !== undefined && !conn.isClosed && !conn.goaway) {
        const ended = await conn.waitFor(() => conn.goaway || conn.streamEnded(c.stream ?? 0), DEADLINE_MS);
        expect(ended || conn.isClosed || conn.goaway, `${context}: stream ${c.stream} never ended`).toBe(
          true,
        );
      }
      if (Date.now() - t0 > 1000)
        console.log(
          `slow: ${context} ${Date.now() - t0} ms closed=${conn.isClosed} goaway=${conn.goaway} frames=${conn.frames
            .map((f) => f.type)
            .join(',')
            .slice(0, 200)}`,
        );
      const probed = await live;
      probe.close();
      expect(probed.code, `${context}: ServerLive during the case: ${probed.details}`).toBe(GrpcStatus.OK);
      expectRunning(context);
      const outcome = conn.isClosed ? 'closed' : conn.goaway ? 'goaway' : 'open';
      kinds.set(`${kind}:${outcome}`, (kinds.get(`${kind}:${outcome}`) ?? 0) + 1);
      if (c.hold === true) held.push(conn);
      else conn.destroy();
      sampleRss();
      if ((i + 1) % batch === 0 || i === CASES - 1) {
        // Checked while the connections with streams left open are still held.
        await stillServing(`after ${context}`);
        for (const h of held) h.destroy();
        held = [];
      }
    }
    console.log(
      `HTTP/2 cases (FUZZ_SEED=${SEED}), slowest ServerLive meanwhile ${slowestLiveMs} ms:`,
      Object.fromEntries(kinds),
    );
    await stillServing('after the HTTP/2 cases');
    console.log(`RSS after the HTTP/2 cases: ${server.rssKiB()} KiB (peak ${peakRss} KiB)`);
  }, 180_000);

  it('gRPC message framing through node:http2: prefixes, compression, declared lengths, timeouts', async () => {
    const session: ClientHttp2Session = http2Connect(`http://${target}`);
    session.on('error', () => undefined);
    const counts = new Map<string, number>();
    try {
      for (let i = 0; i < Math.ceil(CASES / 2); i++) {
        const rpc = random.pick(RPCS);
        const body = Buffer.from(
          encodeMessage(rpc.definition.requestSchema, random.pick(rpc.messages) as never),
        );
        const headers: Record<string, string> = {
          ':method': 'POST',
          ':path': random.int(10) === 0 ? `${INFERENCE}Nope` : rpc.path,
          'content-type': random.pick(['application/grpc', 'application/grpc+proto', 'application/grpc']),
          te: 'trailers',
        };
        const r = random.int(6);
        let payload: Buffer;
        if (r === 0) {
          const encoding = random.pick(['gzip', 'deflate', 'x', 'identity']);
          headers['grpc-encoding'] = encoding;
          const packed =
            encoding === 'deflate' ? deflateSync(body) : encoding === 'gzip' ? gzipSync(body) : body;
          payload = grpcMessage(
            random.int(2) === 0 ? packed : packed.subarray(0, random.int(packed.length + 1)),
            { flag: 1 },
          );
        } else if (r === 1) {
          // A small bomb: many MiB of zeros (not a message) from a few KiB.
          headers['grpc-encoding'] = 'gzip';
          payload = grpcMessage(gzipSync(Buffer.alloc(random.pick([1, 16, 64]) << 20)), { flag: 1 });
        } else if (r === 2) {
          payload = grpcMessage(body, {
            declared: random.pick([body.length + 1, Math.max(0, body.length - 1), 2 ** 31, 2 ** 32 - 1]),
          });
        } else if (r === 3) {
          payload = Buffer.concat([grpcMessage(body), grpcMessage(body)]); // two messages on a unary call
        } else if (r === 4) {
          headers['grpc-timeout'] = random.pick(['abc', '1n', '0S', '99999999H', '10S']);
          payload = grpcMessage(body);
        } else payload = grpcMessage(body, { flag: random.pick([2, 0x80, 0xff]) });
        const context = `framing case ${i} ${rpc.name} r${r} ${JSON.stringify(headers)} (FUZZ_SEED=${SEED}) payload ${b64(payload)}`;
        const status = await http2Call(session, headers, payload, random.int(payload.length + 1));
        expect(status, `${context}: no answer before the deadline`).toBeDefined();
        const { code, details } = status as Outcome;
        counts.set(
          `${GrpcStatus[code] ?? code} ${details.slice(0, 60)}`,
          (counts.get(`${GrpcStatus[code] ?? code} ${details.slice(0, 60)}`) ?? 0) + 1,
        );
        expect(details, context).not.toMatch(JS_ERROR);
        expect(code, `${context}: ${details}`).not.toBe(GrpcStatus.UNKNOWN);
        expectRunning(context);
      }
      // A bomb: 1 GiB of zeros in 1 MiB (16 gzip members of 64 MiB), inflated within the budget.
      const member = gzipSync(Buffer.alloc(64 << 20));
      const bomb = grpcMessage(Buffer.concat(Array.from({ length: 16 }, () => member)), { flag: 1 });
      const before = server.rssKiB();
      let bombPeak = before;
      const sampler = setInterval(() => (bombPeak = Math.max(bombPeak, server.rssKiB())), 10);
      const refused = await http2Call(
        session,
        {
          ':method': 'POST',
          ':path': `${INFERENCE}ModelInfer`,
          'content-type': 'application/grpc',
          te: 'trailers',
          'grpc-encoding': 'gzip',
        },
        bomb,
        bomb.length,
      );
      clearInterval(sampler);
      bombPeak = Math.max(bombPeak, server.rssKiB());
      peakRss = Math.max(peakRss, bombPeak);
      console.log(`1 GiB gzip bomb: ${refused?.details}; server RSS ${before} KiB, peak ${bombPeak} KiB`);
      expect(refused?.code, `the bomb: ${refused?.details}`).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
      // Inflated within the budget: RSS rises by about the budget, not by the 1 GiB the bomb holds.
      expect(bombPeak - before, `RSS rose by ${bombPeak - before} KiB during the bomb`).toBeLessThan(
        BOMB_RISE_BOUND_KIB,
      );
    } finally {
      session.destroy();
    }
    console.log(`framing answers (FUZZ_SEED=${SEED}):`, Object.fromEntries(counts));
    await stillServing('after the framing cases');
    console.log(`RSS after the framing cases: ${server.rssKiB()} KiB (peak ${peakRss} KiB)`);
  }, 180_000);

  it('keeps the server’s memory bounded', () => {
    sampleRss();
    const now = server.rssKiB();
    console.log(`server RSS (FUZZ_SEED=${SEED}): start ${startRss} KiB, peak ${peakRss} KiB, now ${now} KiB`);
    // The peak is the garbage collector's business (it rises with the case count and falls again);
    // what stays after every family has run is not.
    expect(now - startRss, `RSS grew by ${now - startRss} KiB (FUZZ_SEED=${SEED})`).toBeLessThan(
      RSS_BOUND_KIB,
    );
  });
});
