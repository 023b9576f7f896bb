/**
 * The server's `inference.GRPCInferenceService` definition: the client package's, with the server's
 * own codecs for the inference messages: `ModelInferRequest` read with `bytes_contents` packed into
 * one buffer (`packed-request.ts`), `ModelInferResponse` and `ModelStreamInferResponse` written with
 * one copy of each raw output (`response-encoder.ts`). Every other message is protobuf-es's.
 * @packageDocumentation
 */
import {
  ModelInferRequestSchema,
  ModelInferResponseSchema,
  ModelStreamInferResponseSchema,
} from '@tritonserver-ts/protocol/grpc';

import { decodeModelInferRequest } from './packed-request.js';
import { encodeModelInferResponse, encodeModelStreamInferResponse } from './response-encoder.js';

interface MethodLike {
  readonly requestSchema?: { readonly typeName: string };
  readonly responseSchema?: { readonly typeName: string };
}

const RESPONSE_ENCODERS: Readonly<Record<string, (message: never) => Buffer>> = {
  [ModelInferResponseSchema.typeName]: encodeModelInferResponse,
  [ModelStreamInferResponseSchema.typeName]: encodeModelStreamInferResponse,
};

/** `definition` (a service definition of the client package) with the server's codecs. */
export function serverDefinition<D extends object>(definition: D): D {
  const out: Record<string, unknown> = {};
  for (const [key, method] of Object.entries(definition) as [string, MethodLike][]) {
    const encode =
      method.responseSchema === undefined ? undefined : RESPONSE_ENCODERS[method.responseSchema.typeName];
    out[key] = {
      ...method,
      ...(method.requestSchema?.typeName === ModelInferRequestSchema.typeName
        ? { requestDeserialize: (bytes: Buffer) => decodeModelInferRequest(bytes) }
        : {}),
      ...(encode !== undefined ? { responseSerialize: encode } : {}),
    };
  }
  return out as D;
}
