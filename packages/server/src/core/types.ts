/**
 * Transport-neutral shapes of the core's own API: model states, repository index entries and
 * metadata. (The inference request and response are in `common/types.ts`: the layers below the core
 * speak them too.)
 * @packageDocumentation
 */

/** Model version states as Triton reports them in the repository index. */
export type ModelState = 'READY' | 'UNAVAILABLE' | 'LOADING' | 'UNLOADING';

/** One row of the repository index (protocol.md §2.12). */
export interface RepositoryIndexEntry {
  readonly name: string;
  readonly version?: string;
  readonly state?: ModelState;
  readonly reason?: string;
}

/** How models get loaded (`--model-control-mode`). */
export type ModelControlMode = 'none' | 'explicit' | 'poll';

/** Tensor metadata in model metadata responses. */
export interface TensorMetadata {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
}

/** `GET v2/models/{m}` body. */
export interface ModelMetadata {
  readonly name: string;
  readonly versions: readonly string[];
  readonly platform: string;
  readonly inputs: readonly TensorMetadata[];
  readonly outputs: readonly TensorMetadata[];
}

/** `GET v2` body. */
export interface ServerMetadata {
  readonly name: string;
  readonly version: string;
  readonly extensions: readonly string[];
}
