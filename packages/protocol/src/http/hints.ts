/**
 * The HTTP-only hints of an inference, and how the user-facing options (the Python client's, HTTP
 * hints included) split into the neutral options and these hints and join back.
 * @packageDocumentation
 */
import type { NeutralRequestOptions } from '../message.js';
import type { InferRequestOptions } from './infer-request.js';

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
