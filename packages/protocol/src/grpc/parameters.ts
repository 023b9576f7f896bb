/**
 * Request, tensor and response parameters: the protobuf `InferParameter` oneof ↔ the codec's
 * {@link ParameterValue}.
 * @packageDocumentation
 */
import { create } from '@bufbuild/protobuf';
import { ProtocolError } from '../errors.js';
import type { ParameterValue, Parameters } from '../parameters.js';
import { InferParameterSchema, type InferParameter } from './gen/grpc_service_pb.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** A 64-bit integer as a `number` when exact, else the `bigint` (the codec's convention). */
export function exactInteger(value: bigint): number | bigint {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value;
}

/**
 * The protobuf parameter of a value, as Triton's Python gRPC client picks the oneof member:
 * booleans `bool_param`, strings `string_param`, integers `int64_param` (a `bigint` above the int64
 * range `uint64_param`), other numbers `double_param`.
 * @throws ProtocolError `INVALID_VALUE` for a `bigint` outside [−2^63, 2^64 − 1] or a non-finite number.
 */
export function toInferParameter(value: ParameterValue, key = 'parameter'): InferParameter {
  switch (typeof value) {
    case 'boolean':
      return create(InferParameterSchema, { parameterChoice: { case: 'boolParam', value } });
    case 'string':
      return create(InferParameterSchema, { parameterChoice: { case: 'stringParam', value } });
    case 'bigint':
      if (value >= INT64_MIN && value <= INT64_MAX) {
        return create(InferParameterSchema, { parameterChoice: { case: 'int64Param', value } });
      }
      if (value > INT64_MAX && value <= UINT64_MAX) {
        return create(InferParameterSchema, { parameterChoice: { case: 'uint64Param', value } });
      }
      throw new ProtocolError('INVALID_VALUE', `parameter '${key}': ${value} does not fit a 64-bit integer`);
    case 'number':
      if (Number.isSafeInteger(value)) {
        return create(InferParameterSchema, {
          parameterChoice: { case: 'int64Param', value: BigInt(value) },
        });
      }
      if (!Number.isFinite(value)) {
        throw new ProtocolError('INVALID_VALUE', `parameter '${key}': ${value} is not a finite number`);
      }
      return create(InferParameterSchema, { parameterChoice: { case: 'doubleParam', value } });
  }
}

/**
 * The value of a protobuf parameter: 64-bit integers as a `number` when exact, else a `bigint`.
 * @returns `undefined` when no member of the oneof is set.
 */
export function fromInferParameter(parameter: InferParameter): ParameterValue | undefined {
  const choice = parameter.parameterChoice;
  switch (choice.case) {
    case 'int64Param':
    case 'uint64Param':
      return exactInteger(choice.value);
    case undefined:
      return undefined;
    default:
      return choice.value;
  }
}

/** A protobuf parameter map from {@link Parameters}. */
export function toInferParameters(parameters: Parameters | undefined): Record<string, InferParameter> {
  const out: Record<string, InferParameter> = {};
  if (parameters === undefined) return out;
  for (const [key, value] of Object.entries(parameters)) out[key] = toInferParameter(value, key);
  return out;
}

/** {@link Parameters} from a protobuf parameter map; parameters with no member set are left out. */
export function fromInferParameters(parameters: Readonly<Record<string, InferParameter>>): Parameters {
  const out: Parameters = {};
  for (const [key, parameter] of Object.entries(parameters)) {
    const value = fromInferParameter(parameter);
    if (value !== undefined) out[key] = value;
  }
  return out;
}
