/**
 * Binary encoding of the protobuf messages, and serializers in the shape @grpc/grpc-js expects.
 * @packageDocumentation
 */
import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type MessageInitShape,
  type MessageShape,
} from '@bufbuild/protobuf';
import { ProtocolError } from '../errors.js';

/** A message of `schema`, or the plain fields to build one from (`create(schema, init)`). */
export type MessageInput<S extends DescMessage> = MessageShape<S> | MessageInitShape<S>;

/**
 * Encodes a message to protobuf binary with protobuf-es's `toBinary`, which copies `bytes` fields
 * into a growing buffer and again when it finishes (for large `ModelInferRequest`s use
 * `encodeModelInferRequest`, which copies each raw input once); fields are written in field-number
 * order, as protobuf's reference implementations do.
 */
export function encodeMessage<S extends DescMessage>(schema: S, message: MessageInput<S>): Uint8Array {
  return toBinary(schema, create(schema, message));
}

/**
 * Decodes protobuf binary. `bytes` fields are views into `bytes` (no copy): keep `bytes` unchanged
 * while the message is in use. 64-bit integers are `bigint`.
 * @throws ProtocolError `INVALID_FIELD` when the bytes are not a valid message of `schema`.
 */
export function decodeMessage<S extends DescMessage>(schema: S, bytes: Uint8Array): MessageShape<S> {
  try {
    return fromBinary(schema, bytes);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new ProtocolError('INVALID_FIELD', `failed to parse ${schema.typeName}: ${detail}`, { cause });
  }
}

/** A @grpc/grpc-js serializer: message → Buffer. */
export type Serialize<T> = (value: T) => Buffer;
/** A @grpc/grpc-js deserializer: Buffer → message. */
export type Deserialize<T> = (bytes: Buffer) => T;

/** The serializer pair of one message type, for @grpc/grpc-js. */
export interface MessageSerializers<S extends DescMessage> {
  /** Encodes a message (or its plain fields); the Buffer shares the encoded bytes (no extra copy). */
  readonly serialize: Serialize<MessageInput<S>>;
  /** Decodes a message; its `bytes` fields are views into the Buffer. */
  readonly deserialize: Deserialize<MessageShape<S>>;
}

/** A Buffer over the same memory as `bytes`. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Serializers of a message type for @grpc/grpc-js (`(value) => Buffer`, `(buf) => value`). */
export function serializersFor<S extends DescMessage>(schema: S): MessageSerializers<S> {
  return {
    serialize: (value) => asBuffer(encodeMessage(schema, value)),
    deserialize: (bytes) => decodeMessage(schema, bytes),
  };
}
