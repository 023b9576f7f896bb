/**
 * Client headers → gRPC metadata.
 * @packageDocumentation
 */
import { Metadata } from '@grpc/grpc-js';
import { invalidArgument } from '../errors.js';

/**
 * Client headers as gRPC metadata: keys lower-cased (gRPC's rule); a `-bin` key's value is sent as
 * the bytes of its base64 text.
 * @throws TritonInvalidArgumentError for a key gRPC does not allow.
 */
export function metadataFromHeaders(headers: Readonly<Record<string, string>>): Metadata {
  const metadata = new Metadata();
  try {
    for (const [name, value] of Object.entries(headers)) {
      const key = name.toLowerCase();
      if (key.endsWith('-bin')) metadata.add(key, Buffer.from(value, 'base64'));
      else metadata.add(key, value);
    }
  } catch (error) {
    throw invalidArgument(error);
  }
  return metadata;
}
