/**
 * Request, tensor and response parameters as both wires carry them (HTTP JSON `parameters`, gRPC
 * `InferParameter` maps), and the keys the protocol reserves.
 * @packageDocumentation
 */

/** A request, tensor or response parameter value. 64-bit values out of the safe range are `bigint`. */
export type ParameterValue = string | number | bigint | boolean;

/** A `parameters` object. */
export type Parameters = Record<string, ParameterValue>;

/**
 * Request parameter keys reserved by the protocol; a client refuses them as custom parameters. Any
 * key starting with {@link RESERVED_PARAMETER_PREFIX} is reserved too.
 */
export const RESERVED_PARAMETERS: readonly string[] = [
  'sequence_id',
  'sequence_start',
  'sequence_end',
  'priority',
  'timeout',
  'headers',
  'binary_data_output',
];

/** Prefix of parameter keys reserved for Triton. */
export const RESERVED_PARAMETER_PREFIX = 'triton_';

/** True when `key` may not be used as a custom request parameter. */
export function isReservedParameter(key: string): boolean {
  return RESERVED_PARAMETERS.includes(key) || key.startsWith(RESERVED_PARAMETER_PREFIX);
}
