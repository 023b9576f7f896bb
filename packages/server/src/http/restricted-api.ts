/**
 * Triton's endpoint restriction (`--http-restricted-api=<api>[,<api>…]:<key>=<value>`, protocol.md
 * §6.2): each API category can require a request header with an exact value. The categories and
 * their mapping are protocol-neutral (a gRPC front end reuses them for `--grpc-restricted-protocol`);
 * the HTTP check and its 403 live here.
 * @packageDocumentation
 */
import type { Route } from './router.js';

/** Triton's API categories. */
export const RESTRICTED_API_CATEGORIES = [
  'health',
  'metadata',
  'inference',
  'shared-memory',
  'model-config',
  'model-repository',
  'statistics',
  'trace',
  'logging',
] as const;

/** One API category. */
export type RestrictedApiCategory = (typeof RESTRICTED_API_CATEGORIES)[number];

/** The header (and exact value) a restricted category requires. */
export interface RestrictionRule {
  /** Header name, as given (compared case-insensitively). */
  readonly key: string;
  readonly value: string;
}

/** Category → its rule; categories without a rule are open. */
export type Restrictions = ReadonlyMap<RestrictedApiCategory, RestrictionRule>;

/** A bad `--http-restricted-api` value, with Triton's message. */
export class RestrictedApiConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestrictedApiConfigError';
  }
}

/**
 * Parses the values of `--http-restricted-api` (one group per use): `<api>[,<api>...]:<key>=<value>`.
 * A category may appear in one group only (also twice in the same group is refused, as Triton does).
 * The HTTP header name is `<key>` as given; the gRPC front end prefixes it with
 * `triton-grpc-protocol-` (Triton's metadata key).
 * @param flag - the flag's name for messages (`http-restricted-api` or `grpc-restricted-protocol`).
 * @throws RestrictedApiConfigError with Triton's startup messages
 */
export function parseRestrictions(values: readonly string[], flag = 'http-restricted-api'): Restrictions {
  const what = flag === 'http-restricted-api' ? 'api' : 'protocol';
  const out = new Map<RestrictedApiCategory, RestrictionRule>();
  for (const raw of values) {
    // As tritonserver splits it: the categories end at the first ':', the header name at the next '='
    // (so a value may itself contain ':' and '=').
    const colon = raw.indexOf(':');
    const eq = colon < 0 ? -1 : raw.indexOf('=', colon + 1);
    const names = colon < 0 ? '' : raw.slice(0, colon);
    const key = eq < 0 ? '' : raw.slice(colon + 1, eq);
    const value = eq < 0 ? '' : raw.slice(eq + 1);
    if (names === '' || key === '' || value === '') {
      throw new RestrictedApiConfigError(
        `--${flag} option format is '<config name>:<setting>=<value>'. Got ${raw}`,
      );
    }
    for (const name of names.split(',')) {
      if (!(RESTRICTED_API_CATEGORIES as readonly string[]).includes(name)) {
        throw new RestrictedApiConfigError(`unknown restricted ${what} '${name}' `);
      }
      const category = name as RestrictedApiCategory;
      if (out.has(category)) {
        throw new RestrictedApiConfigError(
          `restricted ${what} '${name}' can not be specified in multiple config groups`,
        );
      }
      out.set(category, { key, value });
    }
  }
  return out;
}

/** The category an HTTP route belongs to (model ready counts as `health`, as in Triton). */
export function categoryOf(route: Route): RestrictedApiCategory {
  switch (route.kind) {
    case 'health':
      return 'health';
    case 'server-metadata':
      return 'metadata';
    case 'model-stats-all':
      return 'statistics';
    case 'logging':
      return 'logging';
    case 'trace':
      return 'trace';
    case 'repository-index':
    case 'repository-model':
      return 'model-repository';
    case 'shared-memory':
      return 'shared-memory';
    case 'model':
      switch (route.action) {
        case 'ready':
          return 'health';
        case 'metadata':
          return 'metadata';
        case 'config':
          return 'model-config';
        case 'stats':
          return 'statistics';
        case 'trace':
          return 'trace';
        case 'infer':
        case 'generate':
        case 'generate_stream':
          return 'inference';
      }
  }
}

/**
 * The same categories for the methods of Triton's gRPC service (`inference.GRPCInferenceService`,
 * plus the standard health check), used by the gRPC front end for `--grpc-restricted-protocol`
 * (`grpc/restrictions.ts`). Kept here so both front ends share one mapping.
 */
export const GRPC_METHOD_CATEGORIES: Readonly<Record<string, RestrictedApiCategory>> = {
  ServerLive: 'health',
  ServerReady: 'health',
  ModelReady: 'health',
  'grpc.health.v1.Health/Check': 'health',
  ServerMetadata: 'metadata',
  ModelMetadata: 'metadata',
  ModelInfer: 'inference',
  ModelStreamInfer: 'inference',
  ModelConfig: 'model-config',
  ModelStatistics: 'statistics',
  RepositoryIndex: 'model-repository',
  RepositoryModelLoad: 'model-repository',
  RepositoryModelUnload: 'model-repository',
  SystemSharedMemoryStatus: 'shared-memory',
  SystemSharedMemoryRegister: 'shared-memory',
  SystemSharedMemoryUnregister: 'shared-memory',
  CudaSharedMemoryStatus: 'shared-memory',
  CudaSharedMemoryRegister: 'shared-memory',
  CudaSharedMemoryUnregister: 'shared-memory',
  TraceSetting: 'trace',
  LogSettings: 'logging',
};

/**
 * The header a request to `route` lacks, or `undefined` when it may pass: the category's header must
 * be present with exactly the configured value.
 */
export function missingRestrictionHeader(
  restrictions: Restrictions,
  route: Route,
  header: (name: string) => string | string[] | undefined,
): string | undefined {
  const rule = restrictions.get(categoryOf(route));
  if (rule === undefined) return undefined;
  const given = header(rule.key.toLowerCase());
  return given === rule.value ? undefined : rule.key;
}
