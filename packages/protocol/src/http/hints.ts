/**
 * The HTTP-only hints of an inference, the user-facing request options that carry them (the Python
 * client's, HTTP hints included), and how those options split into the neutral options and the hints.
 * The HTTP encoder takes the neutral options and the hints side by side; nothing joins them back.
 * @packageDocumentation
 */
import type { NeutralRequestOptions, NeutralRequestedOutput } from '../message.js';

/** An output to request over HTTP: the neutral request with where to put it (binary tail or JSON). */
export interface InferRequestedOutput extends NeutralRequestedOutput {
  /** Receive in the binary tail (default `true`, like the Python client) or as JSON. */
  readonly binaryData?: boolean;
}

/**
 * Request-level options of `encodeInferRequest`: the neutral options with the HTTP-only ones. An
 * `InferRequestOptions` is itself a valid {@link NeutralRequestOptions} (its extra fields are the
 * hints, which a neutral reader ignores).
 */
export interface InferRequestOptions extends Omit<NeutralRequestOptions, 'outputs'> {
  /** Outputs to return; when omitted, all outputs come back (binary unless `binaryDataOutput: false`). */
  readonly outputs?: readonly InferRequestedOutput[];
  /**
   * Request parameter `binary_data_output`. Default: `true` when `outputs` is omitted (as the
   * Python client does), not sent otherwise.
   */
  readonly binaryDataOutput?: boolean;
}

/** The HTTP-only hints of an inference; only the HTTP transport reads them. */
export interface HttpInferHints {
  /** Request parameter `binary_data_output` (see {@link InferRequestOptions.binaryDataOutput}). */
  readonly binaryDataOutput?: boolean;
  /**
   * The `binaryData` the caller set on each requested output, by index in the neutral request's
   * `outputs` (`undefined`: not set, the default applies).
   */
  readonly outputBinaryData?: readonly (boolean | undefined)[];
  /** Send the single input as a raw binary request (`Inference-Header-Content-Length: 0`). */
  readonly rawBinaryRequest?: boolean;
}

/** The hints of options that set none (shared; readers never change them). */
const NO_HINTS: HttpInferHints = Object.freeze({});

/** The outputs' `binaryData` by index, or `undefined` when no output sets it. */
function outputBinaryData(
  outputs: readonly InferRequestedOutput[] | undefined,
): (boolean | undefined)[] | undefined {
  if (outputs === undefined) return undefined;
  let hints: (boolean | undefined)[] | undefined;
  for (let i = 0; i < outputs.length; i++) {
    const binaryData = (outputs[i] as InferRequestedOutput).binaryData;
    if (binaryData === undefined) continue;
    hints ??= new Array<boolean | undefined>(outputs.length).fill(undefined);
    hints[i] = binaryData;
  }
  return hints;
}

/**
 * The HTTP hints of user-facing options, for an encoder that reads the options themselves as the
 * neutral request (their outputs' `binaryData` is then read from the hints only). Allocates nothing
 * when the options set no hint.
 */
export function httpHintsOf(options: InferRequestOptions): HttpInferHints {
  const outputs = outputBinaryData(options.outputs);
  if (outputs === undefined) {
    return options.binaryDataOutput === undefined ? NO_HINTS : { binaryDataOutput: options.binaryDataOutput };
  }
  return options.binaryDataOutput === undefined
    ? { outputBinaryData: outputs }
    : { binaryDataOutput: options.binaryDataOutput, outputBinaryData: outputs };
}

/**
 * Splits user-facing request options (the Python client's, HTTP hints included) into the neutral
 * options, free of HTTP fields, and the HTTP hints.
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
  if (options.outputs !== undefined) {
    // Outputs without an HTTP field are already neutral; only those with one are copied without it.
    request.outputs = options.outputs.some((o) => 'binaryData' in o)
      ? options.outputs.map(({ binaryData: _http, ...rest }) => rest)
      : options.outputs;
  }
  return { request, http: httpHintsOf(options) };
}
