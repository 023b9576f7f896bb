/**
 * The transport-neutral inference messages of the client: what a request asks for and what a
 * response holds, with no wire detail. Each wire converts at its edge: the HTTP codec
 * (`infer-request.ts`, `infer-response.ts`: JSON header + binary tail) and the gRPC codec
 * (`grpc/infer-request.ts`, `grpc/infer-response.ts`: `ModelInferRequest` / `ModelInferResponse`).
 * `Transport.infer` takes a {@link NeutralRequestOptions} and returns an {@link InferResponse};
 * `InferResult` wraps the latter.
 * @packageDocumentation
 */
import type { Datatype, TensorData } from './datatypes.js';
import type { Parameters } from './parameters.js';
import type { SharedMemoryRef } from './shared-memory.js';
import type { PackedTensor, Tensor } from './tensor.js';
import type { TensorValues } from './tensor-data.js';

/** One output of an {@link InferResponse}. */
export interface InferResponseOutput<D extends Datatype = Datatype> {
  readonly name: string;
  readonly datatype: D;
  readonly shape: number[];
  /**
   * The data, decoded from whichever form the wire carried it in (HTTP binary tail or JSON `data`,
   * gRPC `raw_output_contents` or typed `contents`): a typed array (a view into the received
   * message when aligned), or `Uint8Array[]` for BYTES (classification outputs are BYTES strings
   * `value:index[:label]`). `undefined` when the output was written to shared memory.
   */
  readonly data: TensorData<D> | undefined;
  /**
   * The output's parameters as the server sent them (shared-memory ones; over HTTP also the
   * `binary_data_size` framing parameter of a binary output).
   */
  readonly parameters: Parameters;
}

/** A transport-neutral inference response. */
export interface InferResponse {
  readonly modelName: string;
  /** The version that ran (absent when the server did not say). */
  readonly modelVersion?: string;
  /** The request id echoed by the server (absent when empty). */
  readonly id?: string;
  /** Response parameters (e.g. `triton_final_response` of decoupled models, over gRPC). */
  readonly parameters: Parameters;
  /** Outputs in response order. */
  readonly outputs: InferResponseOutput[];
}

/** An input to send: a tensor (typed or plain values), optionally as JSON or in shared memory. */
export interface InferInput<D extends Datatype = Datatype> {
  readonly name: string;
  readonly datatype: D;
  readonly shape: readonly number[];
  /** Values; omit only with {@link InferInput.sharedMemory}. */
  readonly data?: TensorValues<D>;
  /** Send in the binary tail (`true`) or as JSON `data` (`false`); defaults to the request's `binaryData`. */
  readonly binaryData?: boolean;
  /** Read the input from a registered shared-memory region instead of the body. */
  readonly sharedMemory?: SharedMemoryRef;
  /** Extra tensor parameters. */
  readonly parameters?: Parameters;
}

/** An output to request, on any wire. */
export interface NeutralRequestedOutput {
  readonly name: string;
  /** Ask for the top-N classification strings (`value:index[:label]`) instead of the tensor. */
  readonly classCount?: number;
  /** Write the output to a registered shared-memory region (forces `binary_data: false`). */
  readonly sharedMemory?: SharedMemoryRef;
  /** Extra output parameters. */
  readonly parameters?: Parameters;
}

/**
 * Request-level options every wire understands: outputs, id, sequence, priority, timeout, custom
 * parameters, and `binaryData` (the default for inputs: HTTP binary tail / gRPC
 * `raw_input_contents` when `true`, JSON `data` / typed `contents` when `false`).
 */
export interface NeutralRequestOptions {
  /** Outputs to return; when omitted, all outputs come back (binary unless `binaryDataOutput: false`). */
  readonly outputs?: readonly NeutralRequestedOutput[];
  /** Request `id`, echoed by the server (omitted when empty). */
  readonly requestId?: string;
  /** Sequence correlation id (number, bigint or string; 0 / '' = not in a sequence). */
  readonly sequenceId?: number | bigint | string;
  /** First request of the sequence. */
  readonly sequenceStart?: boolean;
  /** Last request of the sequence. */
  readonly sequenceEnd?: boolean;
  /** Scheduling priority (0 = model default, 1 = highest); sent only when not 0. */
  readonly priority?: number | bigint;
  /** Server-side timeout in microseconds. */
  readonly timeout?: number | bigint;
  /** Custom request parameters; reserved keys are refused. */
  readonly parameters?: Parameters;
  /** Default for inputs without their own `binaryData` (default `true`). */
  readonly binaryData?: boolean;
}

/** One output of a response to encode (server side). */
export interface ResponseOutput {
  /** The output (BYTES data as `Uint8Array`s or a `BytesList`). */
  readonly tensor: Tensor | PackedTensor;
  /** Put the data in the binary tail (`true`) or in JSON `data` (`false`). */
  readonly binary: boolean;
  /** Leave the data out entirely (the output was written to shared memory). */
  readonly omitData?: boolean;
  /** Extra output parameters (e.g. the shared-memory ones); `binary_data_size` is added for you. */
  readonly parameters?: Parameters;
}

/** A response to encode (server side). */
export interface InferResponseMessage {
  readonly modelName: string;
  readonly modelVersion: string;
  /** The request `id`, echoed when the request carried one. */
  readonly id?: string;
  readonly parameters?: Parameters;
  readonly outputs: readonly ResponseOutput[];
}
