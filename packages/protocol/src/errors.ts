/**
 * The codec's single error type, shared by the client (decoding responses) and the embedded server
 * (decoding requests, where its message is passed through to the HTTP error body).
 * @packageDocumentation
 */

/**
 * Triton's status kinds (`TRITONSERVER_Error_Code`), the wire-neutral classification of a refused
 * or failed request shared by both ends: the client's `TritonServerError.reason` and the embedded
 * server's `ServerError.kind`. Each wire maps them to its own statuses at its edge (HTTP status,
 * gRPC code).
 */
export type TritonStatusKind =
  | 'INVALID_ARG'
  | 'NOT_FOUND'
  | 'UNAVAILABLE'
  | 'UNSUPPORTED'
  | 'INTERNAL'
  | 'ALREADY_EXISTS'
  | 'CANCELLED'
  | 'UNKNOWN';

/** Stable codes of {@link ProtocolError}; match on these, never on the message text. */
export type ProtocolErrorCode =
  | 'INVALID_HEADER_LENGTH'
  | 'MALFORMED_JSON'
  | 'INVALID_FIELD'
  | 'UNKNOWN_DATATYPE'
  | 'DATATYPE_NOT_JSON'
  | 'ELEMENT_COUNT_MISMATCH'
  | 'BINARY_SIZE_MISMATCH'
  | 'INVALID_BYTES_ELEMENT'
  | 'INVALID_VALUE'
  | 'RESERVED_PARAMETER'
  | 'DUPLICATE_OUTPUT'
  | 'UNSUPPORTED_ENCODING'
  | 'CORRUPT_COMPRESSED_BODY'
  | 'DECOMPRESSED_TOO_LARGE'
  | 'UNSUPPORTED_CLASSIFICATION';

/**
 * A body, header or tensor that does not follow the KServe v2 / Triton wire format, or a tensor the
 * format cannot express. Messages are written so that a server can return them verbatim in
 * `{"error": message}` with HTTP status {@link ProtocolError.status}.
 */
export class ProtocolError extends Error {
  /** Stable machine-readable reason. */
  readonly code: ProtocolErrorCode;
  /** The HTTP status a server should answer with (Triton answers 400 for malformed requests). */
  readonly status: number;

  constructor(code: ProtocolErrorCode, message: string, options?: { cause?: unknown; status?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProtocolError';
    this.code = code;
    this.status = options?.status ?? 400;
  }
}
