/**
 * `--rate-limit` and `--rate-limit-resource`, parsed as tritonserver's command-line parser does,
 * with its messages (the option, then the reason on its own line).
 * @packageDocumentation
 */
import { EVERY_DEVICE, type RateLimitResource } from './scheduler/rate-limiter.js';

/** A bad rate-limit flag; `message` is tritonserver's text. */
export class RateLimitFlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RateLimitFlagError';
  }
}

/** What the two flags give the server. */
export interface RateLimitFlags {
  readonly rateLimit: 'off' | 'execution_count';
  readonly rateLimitResources: readonly RateLimitResource[];
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * tritonserver's `ParseOption<int>` (`std::stoi`): leading blanks and a sign, then digits; anything
 * after the digits is ignored.
 */
function parseIntOption(text: string): number {
  const match = /^[ \t\n\v\f\r]*([+-]?\d+)/.exec(text);
  if (match === null) throw new RateLimitFlagError(`Invalid option value. Got ${text}`);
  const value = Number(match[1]);
  if (value < INT32_MIN || value > INT32_MAX) {
    throw new RateLimitFlagError(`Provided option value is out of bound. Got ${text}`);
  }
  return value;
}

/**
 * One `--rate-limit-resource=<name>:<count>[:<device>]` value (no device = every device). Names are
 * compared as given (tritonserver's help calls them case-insensitive, but it parses the value it
 * did not lowercase).
 * @throws RateLimitFlagError with tritonserver's format message, or for a negative count (which
 * tritonserver turns into an unsigned count of 2^64 - 1; refused here).
 */
export function parseRateLimitResource(arg: string): RateLimitResource {
  const format = `--rate-limit-resource option format is '<resource_name>:<count>:<device>' or '<resource_name>:<count>'. Got ${arg}`;
  const first = arg.indexOf(':');
  if (first < 0) throw new RateLimitFlagError(format);
  const second = arg.indexOf(':', first + 1);
  let count: number;
  let device = EVERY_DEVICE;
  if (second >= 0) {
    if (arg.indexOf(':', second + 1) >= 0) throw new RateLimitFlagError(format);
    count = parseIntOption(arg.slice(first + 1, second));
    device = parseIntOption(arg.slice(second + 1));
  } else {
    count = parseIntOption(arg.slice(first + 1));
  }
  if (count < 0) {
    throw new RateLimitFlagError(`resource count must not be negative (tritonserver-ts). Got ${arg}`);
  }
  return { name: arg.slice(0, first), count, device };
}

/**
 * Parses both flags; `mode` is compared in lower case, as tritonserver does.
 * @throws RateLimitFlagError `Bad option: "--<flag>".\n<reason>`
 */
export function parseRateLimitFlags(mode: string, resources: readonly string[]): RateLimitFlags {
  const lower = mode.toLowerCase();
  if (lower !== 'off' && lower !== 'execution_count') {
    throw new RateLimitFlagError('Bad option: "--rate-limit".\ninvalid argument for --rate-limit');
  }
  const parsed = resources.map((value) => {
    try {
      return parseRateLimitResource(value);
    } catch (error) {
      throw new RateLimitFlagError(`Bad option: "--rate-limit-resource".\n${(error as Error).message}`);
    }
  });
  return { rateLimit: lower, rateLimitResources: parsed };
}
