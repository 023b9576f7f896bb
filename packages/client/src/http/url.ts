/**
 * Server address parsing: the Python client's `host:port[/base]` or a full http(s) URL.
 * @packageDocumentation
 */
import { TritonInvalidArgumentError } from '../errors.js';

/** Where the server is: origin (`http://host:port`) and a base path (`''` or `/prefix`). */
export interface ServerAddress {
  readonly origin: string;
  readonly basePath: string;
}

/**
 * Parses `localhost:8000`, `localhost:8000/triton`, `http://host:8000/base/` or `https://host`.
 * Without a scheme, `ssl` chooses https. Throws `TritonInvalidArgumentError` on anything else.
 */
export function parseServerUrl(url: string, ssl = false): ServerAddress {
  const text = url.trim();
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
  let parsed: URL;
  try {
    parsed = new URL(hasScheme ? text : `${ssl ? 'https' : 'http'}://${text}`);
  } catch (cause) {
    throw new TritonInvalidArgumentError(`invalid server url '${url}'`, { cause });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TritonInvalidArgumentError(`unsupported scheme '${parsed.protocol}' in server url '${url}'`);
  }
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.hostname === '') {
    throw new TritonInvalidArgumentError(
      `server url '${url}' must be host:port[/base] or http(s)://host[:port][/base] (no query, fragment or credentials)`,
    );
  }
  return { origin: parsed.origin, basePath: parsed.pathname.replace(/\/+$/, '') };
}

/** Joins a base path and `v2/...` path segments, URL-encoding each segment. */
export function apiPath(basePath: string, ...segments: string[]): string {
  return `${basePath}/${segments.map((s) => encodeURIComponent(s)).join('/')}`;
}
