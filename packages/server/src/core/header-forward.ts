/**
 * Request headers forwarded as request parameters (`--http-header-forward-pattern`,
 * `--grpc-header-forward-pattern`), as tritonserver does: every header (gRPC metadata key) the
 * pattern matches anywhere (RE2 `PartialMatch`) becomes a string parameter of the request. Matching
 * is case-insensitive, as header names are, unless the pattern starts with `(?-i)` (Triton's way
 * to ask for case-sensitive matching; a leading `(?i)` is accepted too). A forwarded header whose
 * name is a reserved parameter (`sequence_id`, `priority`, `headers`, `binary_data_output`, …, or
 * any `triton_` name) fails the request with INVALID_ARG (HTTP 400): it would otherwise change
 * how Triton reads the request.
 * @packageDocumentation
 */
import { RESERVED_PARAMETER_PREFIX, isReservedParameter } from '@tritonserver-ts/protocol';

import { echo } from '../common/echo.js';
import { invalidArg } from '../common/errors.js';

/**
 * Compiles a Triton header-forward pattern into a RegExp with Triton's matching rules.
 * @param flag - the flag that gave it, for the message (`--http-header-forward-pattern`)
 * @throws Error `invalid regex for <flag>: <reason>` when the pattern does not compile
 */
export function compileHeaderForwardPattern(pattern: string, flag: string): RegExp {
  let source = pattern;
  let caseInsensitive = true;
  // Leading inline flags, RE2 style: (?i) and (?-i) (JavaScript has no global inline flags).
  for (;;) {
    const m = /^\(\?(-?)i\)/.exec(source);
    if (m === null) break;
    caseInsensitive = m[1] !== '-';
    source = source.slice(m[0].length);
  }
  try {
    return new RegExp(source, caseInsensitive ? 'i' : '');
  } catch (error) {
    throw new Error(`invalid regex for ${flag}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * The request parameters forwarded from `headers` (name → value; repeated headers joined with
 * `, ` by the caller as HTTP does).
 * @returns `undefined` without a pattern, else the forwarded parameters (possibly none)
 * @throws ServerError INVALID_ARG when a forwarded header's name is a reserved parameter
 */
export function forwardHeaders(
  headers: Iterable<readonly [string, string]>,
  pattern: RegExp | undefined,
): Record<string, string> | undefined {
  if (pattern === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (!pattern.test(name)) continue;
    if (isReservedParameter(name)) {
      throw invalidArg(
        name.startsWith(RESERVED_PARAMETER_PREFIX)
          ? `header '${echo(name)}' cannot be forwarded as a request parameter: parameter keys starting with '${RESERVED_PARAMETER_PREFIX}' are reserved for Triton usage and should not be specified.`
          : `header '${echo(name)}' cannot be forwarded as a request parameter: '${echo(name)}' is reserved for Triton usage and should not be specified.`,
      );
    }
    out[name] = value;
  }
  return out;
}
