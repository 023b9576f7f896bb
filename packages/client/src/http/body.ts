/**
 * Body helpers for callers with their own HTTP stack (the Python client's `generate_request_body` and
 * `InferResult.from_response_body` / `parse_response_body`).
 * @packageDocumentation
 */
import { invalidArgument } from '../errors.js';
import { InferResult } from '../infer-result.js';
import { encodeInferRequest, type InferRequestOptions } from '@tritonserver-ts/protocol/http';
import { type InferInput } from '@tritonserver-ts/protocol';

/**
 * Builds an infer request body. Send it with `POST {base}/v2/models/{model}/infer` and, when
 * `headerLength` is defined, the header `Inference-Header-Content-Length: headerLength`.
 * @throws TritonInvalidArgumentError on inputs the protocol cannot express.
 */
export function generateRequestBody(
  inputs: readonly InferInput[],
  options?: InferRequestOptions,
): { body: Uint8Array; headerLength: number | undefined } {
  try {
    const { body, headerLength } = encodeInferRequest(inputs, options);
    return { body, headerLength };
  } catch (error) {
    throw invalidArgument(error);
  }
}

/**
 * Parses an infer response body received by your own HTTP stack.
 * @param options.headerLength - the `Inference-Header-Content-Length` response header, if any.
 * @param options.contentEncoding - the `Content-Encoding` response header, if any.
 * @throws TritonProtocolError when the body does not follow the protocol.
 */
export function parseResponseBody(
  body: Uint8Array,
  options: { headerLength?: string | number | null; contentEncoding?: string | null } = {},
): Promise<InferResult> {
  return InferResult.fromResponseBody(body, options);
}
