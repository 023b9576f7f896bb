/**
 * Service definitions of `inference.GRPCInferenceService` and `grpc.health.v1.Health` in the shape
 * of @grpc/grpc-js's `ServiceDefinition`: hand them to `server.addService(definition, handlers)` or
 * `makeGenericClientConstructor(definition, name)`. No gRPC library is imported here.
 * @packageDocumentation
 */
import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import {
  serializersFor,
  type Deserialize,
  type MessageInput,
  type MessageSerializers,
  type Serialize,
} from './codec.js';
import { GRPCInferenceService, ModelInferRequestSchema } from './gen/grpc_service_pb.js';
import { Health } from './gen/health_pb.js';
import { modelInferRequestSerializers } from './infer-request-encoder.js';

/**
 * One method, as @grpc/grpc-js's `MethodDefinition`. Serializers accept a message or its plain
 * fields; deserialized messages share memory with the received Buffer.
 */
export interface GrpcMethodDefinition<I extends DescMessage, O extends DescMessage> {
  /** `/<package>.<Service>/<Rpc>`. */
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  readonly requestSerialize: Serialize<MessageInput<I>>;
  readonly requestDeserialize: Deserialize<MessageShape<I>>;
  readonly responseSerialize: Serialize<MessageInput<O>>;
  readonly responseDeserialize: Deserialize<MessageShape<O>>;
  /** The method's lowerCamel name, as @grpc/proto-loader sets it. */
  readonly originalName: string;
  /** The request and response message schemas. */
  readonly requestSchema: I;
  readonly responseSchema: O;
}

/** A service definition keyed by RPC name (`ServerLive`, `ModelInfer`, …). */
export type GrpcServiceDefinition<M extends GenServiceMethods> = {
  readonly [K in keyof M & string as Capitalize<K>]: GrpcMethodDefinition<M[K]['input'], M[K]['output']>;
};

/**
 * The serializers of a message type: `ModelInferRequest`'s copy each raw input once
 * ({@link modelInferRequestSerializers}), the others are protobuf-es's.
 */
function serializersOf(schema: DescMessage): MessageSerializers<DescMessage> {
  return schema.typeName === ModelInferRequestSchema.typeName
    ? modelInferRequestSerializers
    : serializersFor(schema);
}

function definitionOf<M extends GenServiceMethods>(service: GenService<M>): GrpcServiceDefinition<M> {
  const out: Record<string, GrpcMethodDefinition<DescMessage, DescMessage>> = {};
  for (const method of service.methods) {
    const request = serializersOf(method.input);
    const response = serializersOf(method.output);
    out[method.name] = {
      path: `/${service.typeName}/${method.name}`,
      requestStream: method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
      responseStream: method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
      requestSerialize: request.serialize,
      requestDeserialize: request.deserialize,
      responseSerialize: response.serialize,
      responseDeserialize: response.deserialize,
      originalName: method.localName,
      requestSchema: method.input,
      responseSchema: method.output,
    };
  }
  return out as GrpcServiceDefinition<M>;
}

type InferenceMethods = typeof GRPCInferenceService extends GenService<infer M> ? M : never;
type HealthMethods = typeof Health extends GenService<infer M> ? M : never;

/** Fully qualified name of Triton's inference service. */
export const INFERENCE_SERVICE_NAME = GRPCInferenceService.typeName;

/** Fully qualified name of the standard health service. */
export const HEALTH_SERVICE_NAME = Health.typeName;

/**
 * `inference.GRPCInferenceService`: every RPC (method paths `/inference.GRPCInferenceService/<Rpc>`,
 * `ModelStreamInfer` streaming both ways) with its serializers.
 */
export const serviceDefinition: GrpcServiceDefinition<InferenceMethods> = definitionOf(GRPCInferenceService);

/** `grpc.health.v1.Health` (`Check`) with its serializers. */
export const healthServiceDefinition: GrpcServiceDefinition<HealthMethods> = definitionOf(Health);
