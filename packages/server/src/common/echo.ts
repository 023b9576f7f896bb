/**
 * Bounds on what an error message echoes back. Messages quote what the client sent (model names,
 * request ids, input names, parameter keys...), as Triton's do; a client that sends a 100 KB name
 * would get a 100 KB message back, and over gRPC a trailer that large wedges grpc-js clients (one
 * header field over 64 KiB is an HPACK error that kills their connection without a word). So:
 *
 * - {@link echo}: each client string quoted in a message keeps its first {@link ECHO_MAX_CHARACTERS}
 *   characters, followed by a marker saying how many were cut;
 * - {@link capErrorMessage}: the front ends cap the whole message at {@link ERROR_MESSAGE_MAX_BYTES}
 *   UTF-8 bytes (HTTP error JSON, gRPC status details, stream `error_message`), the backstop for
 *   anything not echoed through {@link echo} (a library's message, a long list of names).
 *
 * Triton has neither bound (it echoes any length); both are this server's.
 * @packageDocumentation
 */

/** Characters of one client string that a message quotes (Triton: unbounded). */
export const ECHO_MAX_CHARACTERS = 256;

/**
 * UTF-8 bytes of a whole error message at the front ends (Triton: unbounded). Over gRPC the message
 * is percent-encoded in `grpc-message`: at most 3× this (12 KiB) for a message of non-ASCII text, far
 * below the 64 KiB where HPACK decoders fail; an ASCII message stays under the 8 KiB metadata size
 * gRPC C++ clients accept.
 */
export const ERROR_MESSAGE_MAX_BYTES = 4096;

/** The marker that ends a cut string. */
function marker(cut: number): string {
  return `...[truncated ${cut} characters]`;
}

/** `text` cut to `length` UTF-16 units, never between the two halves of a surrogate pair. */
function head(text: string, length: number): string {
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

/**
 * A client-supplied string as a message quotes it: unchanged up to {@link ECHO_MAX_CHARACTERS}
 * characters, else its first characters and `...[truncated N characters]`.
 */
export function echo(value: string, max: number = ECHO_MAX_CHARACTERS): string {
  if (value.length <= max) return value;
  const kept = head(value, max);
  return kept + marker(value.length - kept.length);
}

/**
 * An error message as a front end sends it: unchanged up to {@link ERROR_MESSAGE_MAX_BYTES} UTF-8
 * bytes, else cut (marker included) to fit.
 */
export function capErrorMessage(message: string, maxBytes: number = ERROR_MESSAGE_MAX_BYTES): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short messages need no count.
  if (message.length * 3 <= maxBytes || Buffer.byteLength(message, 'utf8') <= maxBytes) return message;
  // Room for the marker (its count has at most as many digits as the message's length).
  const budget = maxBytes - marker(message.length).length;
  let length = Math.min(message.length, budget);
  let kept = head(message, length);
  let bytes = Buffer.byteLength(kept, 'utf8');
  while (bytes > budget) {
    length = Math.max(1, Math.floor((length * budget) / bytes) - 1);
    kept = head(message, length);
    bytes = Buffer.byteLength(kept, 'utf8');
  }
  return kept + marker(message.length - kept.length);
}
