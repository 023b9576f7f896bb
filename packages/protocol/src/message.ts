/**
 * The transport-neutral inference messages, with no wire detail. Each wire converts at its edge:
 * the HTTP codec (`http/`: JSON header + binary tail) and the gRPC codec (`grpc/`:
 * `ModelInferRequest` / `ModelInferResponse`).
 *
 * Two sides, two pairs of shapes, because what each side holds differs:
 * - the client sends {@link InferInput}s with {@link NeutralRequestOptions} (values as the caller
 *   gives them, typed or plain) and receives an {@link InferResponse} (data decoded from the wire;
 *   `InferResult` wraps it);
 * - the server receives an {@link InferRequest} (decoded by a wire's decoder: inputs as tensor data
 *   or shared-memory references) and produces a {@link ServerInferResponse} (packed tensors, or
 *   shared-memory references for outputs written there), which a wire's encoder then writes.
 * The requested outputs are the same on both sides ({@link InferRequestOutput} is
 * {@link NeutralRequestedOutput}).
 * @packageDocumentation
 */
import type { BytesList } from './bytes-list.js';
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

/**
 * One input of a received {@link InferRequest} (server side), as a wire's decoder gives it: the
 * datatype and shape as sent (checked against the model by the server), and the data decoded from
 * whichever form the wire carried it in, or the shared-memory region that holds it.
 */
export interface InferRequestInput {
  readonly name: string;
  /** The datatype string as sent (a string, not a {@link Datatype}: the server refuses unknown ones). */
  readonly datatype: string;
  readonly shape: readonly number[];
  /**
   * The decoded data; absent (or `undefined`) when the input is in shared memory. BYTES: a
   * {@link BytesList} (one buffer, as the server's decoders give it) or one `Uint8Array` per element.
   */
  readonly data?: TensorData | BytesList | undefined;
  /** Set when the input's data is in a registered shared-memory region. */
  readonly sharedMemory?: SharedMemoryRef;
  /** The input's parameters (wire framing parameters such as `binary_data_size` included as sent). */
  readonly parameters?: Readonly<Parameters>;
}

/**
 * An output a request asks for, on either side: the client's {@link NeutralRequestedOutput}
 * (`classCount` for the classification extension, `sharedMemory` for an output written to a region).
 */
export type InferRequestOutput = NeutralRequestedOutput;

/**
 * A received inference request (server side), decoded from its wire: what the server validates
 * against the model and runs. Wire details stay with the wire's decoder (HTTP: which outputs want
 * binary data, `binary_data_output`; gRPC: `raw_input_contents`, already decoded into the inputs).
 */
export interface InferRequest {
  readonly modelName: string;
  /** Requested version ('' or absent = latest ready version). */
  readonly modelVersion?: string;
  /** The request id (echoed in the response). */
  readonly id?: string;
  /** Request parameters (`sequence_id`, `priority`, `timeout`, custom ones). */
  readonly parameters?: Readonly<Parameters>;
  readonly inputs: readonly InferRequestInput[];
  /** Absent or empty = every model output. */
  readonly outputs?: readonly InferRequestOutput[];
}

/** One output of a {@link ServerInferResponse}. */
export interface ServerInferOutput {
  /** The name as requested (equal to `tensor.name`). */
  readonly name: string;
  /**
   * The tensor (for classification: the BYTES class strings). BYTES data is a {@link BytesList}
   * (one buffer in the length-prefixed layout; `toArray()` / `toStrings()` give the elements).
   */
  readonly tensor: PackedTensor;
  /** Set when the output was written to shared memory (the response then carries no data). */
  readonly sharedMemory?: SharedMemoryRef;
  /** True when the classification extension was applied. */
  readonly classification: boolean;
}

/**
 * An inference response as the server produces it, before a wire encodes it (the client's
 * received form is {@link InferResponse}).
 */
export interface ServerInferResponse {
  readonly modelName: string;
  /** The version that ran. */
  readonly modelVersion: string;
  /** The request id, when the request had a non-empty one. */
  readonly id?: string;
  /** The response's own parameters (e.g. a Python model's `InferenceResponse(parameters=…)`). */
  readonly parameters?: Readonly<Parameters>;
  readonly outputs: readonly ServerInferOutput[];
}
