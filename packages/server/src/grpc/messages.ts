/**
 * Building protobuf messages of the client package's generated schemas.
 * @packageDocumentation
 */
import { create, type MessageInitShape, type MessageShape } from '@tritonserver-ts/protocol/grpc';

/** The plain-object form of a message (nested messages as plain objects too). */
export type Init<T> = T extends { $typeName: string } ? Omit<Partial<T>, '$typeName'> : T;

type Schema = Parameters<typeof create>[0];

/** A message of `schema` from its plain-object form. */
export function message<S extends Schema>(schema: S, init: MessageInitShape<S>): MessageShape<S> {
  return create(schema, init);
}
