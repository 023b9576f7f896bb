/**
 * Matches request paths exactly as Triton's HTTP server does (protocol.md §2.1) and names the
 * handler and the methods it accepts. Anything else is `undefined` (→ 404 `{"error":"Not Found"}`).
 * @packageDocumentation
 */

/** A matched route. */
export type Route =
  | { readonly kind: 'server-metadata' }
  | { readonly kind: 'health'; readonly check: 'live' | 'ready' }
  | { readonly kind: 'model-stats-all' }
  | {
      readonly kind: 'model';
      readonly name: string;
      readonly version: string | undefined;
      readonly action:
        'metadata' | 'infer' | 'generate' | 'generate_stream' | 'ready' | 'config' | 'stats' | 'trace';
    }
  | { readonly kind: 'logging' }
  | { readonly kind: 'trace' }
  | { readonly kind: 'repository-index'; readonly repository: string | undefined }
  | {
      readonly kind: 'repository-model';
      readonly repository: string | undefined;
      readonly name: string;
      readonly action: 'load' | 'unload';
    }
  | {
      readonly kind: 'shared-memory';
      readonly memory: 'system' | 'cuda';
      readonly region: string | undefined;
      readonly action: 'status' | 'register' | 'unregister';
    };

/** HTTP methods each route kind accepts. */
export function allowedMethods(route: Route): readonly string[] {
  switch (route.kind) {
    case 'server-metadata':
    case 'health':
    case 'model-stats-all':
      return ['GET'];
    case 'model':
      switch (route.action) {
        case 'infer':
        case 'generate':
        case 'generate_stream':
          return ['POST'];
        case 'trace':
          return ['GET', 'POST'];
        default:
          return ['GET'];
      }
    case 'logging':
    case 'trace':
      return ['GET', 'POST'];
    case 'repository-index':
    case 'repository-model':
      return ['POST'];
    case 'shared-memory':
      return route.action === 'status' ? ['GET'] : ['POST'];
  }
}

const MODEL =
  /^\/v2\/models\/([^/]+)(?:\/versions\/([0-9]+))?(?:\/(infer|generate|generate_stream|ready|config|stats|trace\/setting))?$/;
const REPOSITORY = /^\/v2\/repository(?:\/([^/]+))?\/(?:(index)|models\/([^/]+)\/(load|unload))$/;
const SHARED_MEMORY = /^\/v2\/(system|cuda)sharedmemory(?:\/region\/([^/]+))?\/(status|register|unregister)$/;

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Matches a request path (without query string). */
export function matchRoute(path: string): Route | undefined {
  if (path === '/v2' || path === '/v2/') return { kind: 'server-metadata' };
  if (path === '/v2/health/live') return { kind: 'health', check: 'live' };
  if (path === '/v2/health/ready') return { kind: 'health', check: 'ready' };
  if (path === '/v2/models/stats') return { kind: 'model-stats-all' };
  if (path === '/v2/logging') return { kind: 'logging' };
  if (path === '/v2/trace/setting') return { kind: 'trace' };
  let m = MODEL.exec(path);
  if (m !== null) {
    const action = m[3] ?? 'metadata';
    // Trace settings are per model, never per version.
    if (action === 'trace/setting' && m[2] !== undefined) return undefined;
    return {
      kind: 'model',
      name: decode(m[1] as string),
      version: m[2],
      action: (action === 'trace/setting' ? 'trace' : action) as Extract<Route, { kind: 'model' }>['action'],
    };
  }
  m = REPOSITORY.exec(path);
  if (m !== null) {
    const repository = m[1] === undefined ? undefined : decode(m[1]);
    if (m[2] === 'index') return { kind: 'repository-index', repository };
    return {
      kind: 'repository-model',
      repository,
      name: decode(m[3] as string),
      action: m[4] as 'load' | 'unload',
    };
  }
  m = SHARED_MEMORY.exec(path);
  if (m !== null) {
    return {
      kind: 'shared-memory',
      memory: m[1] as 'system' | 'cuda',
      region: m[2] === undefined ? undefined : decode(m[2]),
      action: m[3] as 'status' | 'register' | 'unregister',
    };
  }
  return undefined;
}
