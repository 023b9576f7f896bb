/**
 * Client headers → gRPC metadata.
 * @packageDocumentation
 */
import { Metadata } from '@grpc/grpc-js';
import { invalidArgument } from '../errors.js';

/**
 * HTTP headers that describe an HTTP/1 body or connection, which gRPC sets itself (sending them as
 * metadata would break the call); they are left out, as are keys starting with `grpc-` (reserved).
 */
const NOT_METADATA = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'accept-encoding',
  'connection',
  'host',
  'te',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'keep-alive',
]);

/**
 * Client headers as gRPC metadata: keys lower-cased (gRPC's rule); a `-bin` key's value is sent as
 * the bytes of its base64 text; HTTP body and connection headers and `grpc-*` keys are left out.
 * @throws TritonInvalidArgumentError for a key gRPC does not allow.
 */
export function metadataFromHeaders(headers: Readonly<Record<string, string>>): Metadata {
  return fromHeaders(headers);
}

/**
 * {@link metadataFromHeaders} for a call handed to grpc-js, which copies a call's metadata before it
 * adds to it: a client's own headers are one frozen object, reused by every call that adds none,
 * and their metadata is made once.
 */
export function callMetadata(headers: Readonly<Record<string, string>>): Metadata {
  if (!Object.isFrozen(headers)) return fromHeaders(headers);
  let metadata = sharedMetadata.get(headers);
  if (metadata === undefined) {
    metadata = fromHeaders(headers);
    sharedMetadata.set(headers, metadata);
  }
  return metadata;
}

/** The metadata of frozen header objects (a client's defaults), for {@link callMetadata}. */
const sharedMetadata = new WeakMap<Readonly<Record<string, string>>, Metadata>();

function fromHeaders(headers: Readonly<Record<string, string>>): Metadata {
  const metadata = new Metadata();
  // Most calls carry no headers.
  if (Object.keys(headers).length === 0) return metadata;
  try {
    for (const [name, value] of Object.entries(headers)) {
      const key = name.toLowerCase();
      if (NOT_METADATA.has(key) || key.startsWith('grpc-')) continue;
      if (key.endsWith('-bin')) metadata.add(key, Buffer.from(value, 'base64'));
      else metadata.add(key, value);
    }
  } catch (error) {
    throw invalidArgument(error);
  }
  return metadata;
}
