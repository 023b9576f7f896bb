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
import type { InferRequestOptions, InferRequestedOutput } from './infer-request.js';
import type { Parameters } from './wire.js';

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

/** A requested output without HTTP-only hints (its `binaryData` is an {@link HttpInferHints} entry). */
export type NeutralRequestedOutput = Omit<InferRequestedOutput, 'binaryData'>;

/**
 * Request-level options every wire understands: outputs, id, sequence, priority, timeout, custom
 * parameters, and `binaryData` (the default for inputs: HTTP binary tail / gRPC
 * `raw_input_contents` when `true`, JSON `data` / typed `contents` when `false`).
 */
export interface NeutralRequestOptions extends Omit<InferRequestOptions, 'outputs' | 'binaryDataOutput'> {
  readonly outputs?: readonly NeutralRequestedOutput[];
}

/** The HTTP-only hints of an inference; only the HTTP transport reads them. */
export interface HttpInferHints {
  /** Request parameter `binary_data_output` (see `InferRequestOptions.binaryDataOutput`). */
  readonly binaryDataOutput?: boolean;
  /** The `binaryData` the caller set on each requested output, by index (`undefined`: not set). */
  readonly outputBinaryData?: readonly (boolean | undefined)[];
  /** Send the single input as a raw binary request (`Inference-Header-Content-Length: 0`). */
  readonly rawBinaryRequest?: boolean;
}

/**
 * Splits user-facing request options (the Python client's, HTTP hints included) into the neutral
 * options and the HTTP hints.
 */
export function splitRequestOptions(options: InferRequestOptions): {
  request: NeutralRequestOptions;
  http: HttpInferHints;
} {
  const request: Record<string, unknown> = {};
  const keys: readonly (keyof NeutralRequestOptions)[] = [
    'requestId',
    'sequenceId',
    'sequenceStart',
    'sequenceEnd',
    'priority',
    'timeout',
    'parameters',
    'binaryData',
  ];
  for (const key of keys) if (options[key] !== undefined) request[key] = options[key];
  let outputBinaryData: (boolean | undefined)[] | undefined;
  if (options.outputs !== undefined) {
    const hints = options.outputs.map((o) => o.binaryData);
    if (hints.some((b) => b !== undefined)) outputBinaryData = hints;
    request.outputs = options.outputs.map(({ binaryData: _http, ...rest }) => rest);
  }
  return {
    request: request,
    http: {
      ...(options.binaryDataOutput === undefined ? {} : { binaryDataOutput: options.binaryDataOutput }),
      ...(outputBinaryData === undefined ? {} : { outputBinaryData }),
    },
  };
}

/** Joins neutral options and HTTP hints back into the HTTP encoder's options. */
export function httpRequestOptions(
  request: NeutralRequestOptions,
  http: HttpInferHints,
): InferRequestOptions {
  const bin = http.outputBinaryData;
  return {
    ...request,
    ...(request.outputs === undefined
      ? {}
      : {
          outputs: request.outputs.map((o, i) => {
            const binaryData = bin?.[i];
            return binaryData === undefined ? o : { ...o, binaryData };
          }),
        }),
    ...(http.binaryDataOutput === undefined ? {} : { binaryDataOutput: http.binaryDataOutput }),
  };
}
