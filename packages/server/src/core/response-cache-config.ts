/**
 * The server's response cache from `--cache-config <cache>,<key>=<value>` (or the deprecated
 * `--response-cache-byte-size`): only Triton's `local` cache implementation is built in; its one
 * setting is `size` (bytes). Failures use Triton's messages (its cache manager and `local` cache).
 * @packageDocumentation
 */
import { ServerError } from '../common/errors.js';
import { ResponseCache } from '../scheduler/response-cache.js';

/** Triton's default `--cache-directory`. */
export const DEFAULT_CACHE_DIRECTORY = '/opt/tritonserver/caches';

/** The response cache asked for at startup. */
export interface ResponseCacheConfig {
  /** The cache implementation (`local`). */
  readonly name: string;
  /** Its settings (`local`: `size`). */
  readonly settings: Readonly<Record<string, string>>;
  /** `--cache-directory`: where Triton looks for other implementations' libraries. */
  readonly directory?: string;
}

/**
 * Creates the cache `config` describes.
 * @throws ServerError (INVALID_ARG / INTERNAL) with Triton's message for an unknown implementation or
 *   a bad `local` size.
 */
export function createResponseCache(config: ResponseCacheConfig): ResponseCache {
  if (config.name !== 'local') {
    throw new ServerError(
      'INVALID_ARG',
      `unable to find 'libtritoncache_${config.name}.so' for cache. Searched: ${config.directory ?? DEFAULT_CACHE_DIRECTORY}`,
    );
  }
  const size = config.settings.size;
  if (size === undefined) {
    throw new ServerError(
      'INVALID_ARG',
      "Failed to initialize LocalCache: config didn't contain a valid 'size' field.",
    );
  }
  // std::stoull: leading digits are read; no digit at all fails.
  const digits = /^\s*\+?(\d+)/.exec(size);
  if (digits === null) throw new ServerError('INTERNAL', 'Failed to initialize LocalCache: stoull');
  const bytes = Number(digits[1]);
  if (!Number.isSafeInteger(bytes)) {
    throw new ServerError('INTERNAL', 'Failed to initialize LocalCache: failed to allocate buffer');
  }
  return new ResponseCache({ sizeBytes: bytes });
}
