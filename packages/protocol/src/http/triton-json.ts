/**
 * The messages of TritonJson (`triton/common/triton_json.h`), which Triton's HTTP front end passes
 * through, usually after "Unable to parse '<field>': ". Internal to the codec.
 * @packageDocumentation
 */

/** TritonJson's messages for a value of the wrong JSON type or a missing member. */
export const TRITON_JSON = {
  notBool: 'attempt to access JSON non-boolean as boolean',
  notUInt: 'attempt to access JSON non-unsigned-integer as unsigned-integer',
  notInt: 'attempt to access JSON non-signed-integer as signed-integer',
  notNumber: 'attempt to access JSON non-number as double',
  notString: 'attempt to access JSON non-string as string',
  notArray: 'attempt to access JSON non-array as array',
  notObjectMembers: 'attempt to get members for non-object',
  missing: (member: string): string => `attempt to access non-existing object member '${member}'`,
} as const;
