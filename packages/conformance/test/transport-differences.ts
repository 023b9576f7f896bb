/**
 * The reviewed list of places where Triton itself answers differently over gRPC than over HTTP,
 * and Triton's status tables. A conformance case branches on the transport only through
 * {@link differsOver}, naming one entry here; `transport-differences.test.ts` checks that every
 * entry is used by a case and listed in the README. Nothing goes here to hide a failure of our
 * client or server: an entry needs Triton's own behaviour as its reason.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { expect } from 'vitest';
import { TritonServerError } from '@tritonserver-ts/client';
import type { TransportName } from './target.js';

/** One difference: what Triton does over each protocol. */
export interface TransportDifference {
  readonly http: string;
  readonly grpc: string;
}

export const TRANSPORT_DIFFERENCES = {
  'error-status': {
    http: 'an error is an HTTP status (INVALID_ARG 400, NOT_FOUND 404, INTERNAL 500, UNSUPPORTED 501, …)',
    grpc: "an error is a gRPC status code (tritonserver's CodeToStatus: INVALID_ARGUMENT, NOT_FOUND, INTERNAL, UNIMPLEMENTED, …); the client reports the HTTP equivalent as `status` and the code on `cause`",
  },
  'error-body': {
    http: 'the error body is JSON `{"error": "<message>"}`',
    grpc: 'there is no body: the message is the status details',
  },
  'binary-data-size': {
    http: 'a binary output carries the parameter `binary_data_size`',
    grpc: 'outputs travel in `raw_output_contents`; no `binary_data_size` parameter',
  },
  'json-outputs': {
    http: 'an output requested with `binary_data: false` comes back as JSON `data`',
    grpc: 'tritonserver always answers `raw_output_contents`, never typed `contents` (the output `binary_data` parameter does not exist)',
  },
  'mixed-input-encodings': {
    http: 'one request may mix JSON `data` inputs and binary inputs',
    grpc: "tritonserver refuses typed `contents` in a request that uses `raw_input_contents` ('contents field must not be specified when using raw_input_contents …'), so the client refuses the mix before sending",
  },
  'raw-binary-request': {
    http: 'the binary extension allows a header-less request (`Inference-Header-Content-Length: 0`, one input)',
    grpc: 'no counterpart: every ModelInferRequest names its inputs; `rawBinaryRequest` is ignored',
  },
  'model-stream-infer': {
    http: 'no streaming inference (KServe v2 over HTTP is request / response)',
    grpc: '`ModelStreamInfer`: many requests and responses on one bidirectional stream, errors in-band',
  },
  'http-json-requests': {
    http: 'requests are JSON read by the HTTP front end, which refuses with its own 2.73 messages (400): a body over `--http-max-input-size` (64 MiB by default) "request JSON size of N exceeds …", JSON `data` shorter than its shape "Failed to parse \'data\' field: …", a repository-index `ready` that is not a boolean "Invalid value for \'ready\': …"',
    grpc: 'requests are protobuf: fields are typed (`ready` is a bool), tensor data is raw or typed contents, and `--http-max-input-size` does not apply (messages up to 2 GiB)',
  },
  'http-framing': {
    http: 'a request body is framed by HTTP/1.1: Triton refuses more than 65,536 non-empty chunks (400, "Chunked request body exceeds maximum of 65536 non-empty chunks. …") and frames a body sent with both Content-Length and `Transfer-Encoding: chunked` by its chunks; a load name travels in the URL path, whose `..` segment a client library resolves',
    grpc: 'messages are framed by HTTP/2 and the gRPC length prefix (no chunks); the load name is a protobuf string, sent as is',
  },
  'generate-extension': {
    http: 'the generate extension: `generate` / `generate_stream` map a JSON object onto the inputs and answer JSON, the stream as Server-Sent Events',
    grpc: 'no counterpart: a decoupled model streams through `ModelStreamInfer`',
  },
  'http-wire-helpers': {
    http: 'the body helpers (`generateRequestBody`, `parseResponseBody`, `encodeRawBinaryRequest`) drive a separate HTTP stack',
    grpc: 'the same job is done by the protobuf messages of `@tritonserver-ts/protocol/grpc` on a separate grpc-js client',
  },
} as const satisfies Record<string, TransportDifference>;

export type TransportDifferenceName = keyof typeof TRANSPORT_DIFFERENCES;

/** True when Triton behaves differently over `transport` for `difference` (the HTTP form is the default). */
export function differsOver(transport: TransportName, difference: TransportDifferenceName): boolean {
  void TRANSPORT_DIFFERENCES[difference];
  return transport === 'grpc';
}

/** Triton's error kinds and the status each front end answers with (protocol.md §2.2). */
export const TRITON_STATUS = {
  UNKNOWN: { http: 400, grpc: GrpcStatus.UNKNOWN },
  INVALID_ARG: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  ALREADY_EXISTS: { http: 400, grpc: GrpcStatus.ALREADY_EXISTS },
  CANCELLED: { http: 400, grpc: GrpcStatus.CANCELLED },
  NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  INTERNAL: { http: 500, grpc: GrpcStatus.INTERNAL },
  UNSUPPORTED: { http: 501, grpc: GrpcStatus.UNIMPLEMENTED },
  UNAVAILABLE: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
} as const;

export type TritonErrorKind = keyof typeof TRITON_STATUS;

/**
 * Awaits a rejection and checks it is the server's error of Triton kind `kind` over `transport`:
 * the HTTP status, or the gRPC status code (with the client's HTTP equivalent as `status`).
 */
export async function expectServerError(
  p: Promise<unknown>,
  transport: TransportName,
  kind?: TritonErrorKind,
): Promise<TritonServerError> {
  const error: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TritonServerError);
  const serverError = error as TritonServerError;
  expect(serverError.code).toBe('SERVER_ERROR');
  expect(serverError.transport).toBe(transport);
  if (kind !== undefined) {
    const expected = TRITON_STATUS[kind];
    expect(serverError.status, `HTTP status of ${kind}`).toBe(expected.http);
    if (differsOver(transport, 'error-status')) {
      expect((serverError.cause as { code?: unknown } | undefined)?.code, `gRPC code of ${kind}`).toBe(
        expected.grpc,
      );
    }
  }
  return serverError;
}
