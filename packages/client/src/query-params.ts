/**
 * Query parameters, shared by the client's options and the transport seam (its own module so that
 * `options.ts` and `transport.ts` do not import each other).
 * @packageDocumentation
 */

/** Query parameters; an array repeats the key. */
export type QueryParams = Record<string, string | number | boolean | readonly (string | number | boolean)[]>;
