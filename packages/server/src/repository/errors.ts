/**
 * Typed errors of the model repository layer, each with a stable `code`.
 * @packageDocumentation
 */

/** Stable codes of {@link ModelConfigError}. */
export type ModelConfigErrorCode =
  /** `config.pbtxt` is not valid protobuf text format, or names an unknown field or a bad value. */
  | 'MODEL_CONFIG_PARSE_ERROR'
  /** A JSON config (load override) is malformed or names an unknown field or a bad value. */
  | 'MODEL_CONFIG_JSON_ERROR'
  /** The config parsed but is not a valid Triton model config (name mismatch, bad dims, …). */
  | 'MODEL_CONFIG_INVALID';

/** Where in a text file an error was found (1-based). */
export interface SourceLocation {
  readonly file?: string;
  readonly line: number;
  readonly column: number;
}

/** A model config could not be read or is invalid. `message` names file, line and field where known. */
export class ModelConfigError extends Error {
  /** Stable error code. */
  readonly code: ModelConfigErrorCode;
  /** Position in the source text, for parse errors. */
  readonly location: SourceLocation | undefined;
  /** Dotted field path, e.g. `input[0].dims`, when the error concerns one field. */
  readonly fieldPath: string | undefined;

  constructor(
    code: ModelConfigErrorCode,
    message: string,
    options: { location?: SourceLocation; fieldPath?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModelConfigError';
    this.code = code;
    this.location = options.location;
    this.fieldPath = options.fieldPath;
  }
}

/** Stable codes of {@link ModelRepositoryError}. */
export type ModelRepositoryErrorCode =
  /** The repository directory does not exist or is not a directory. */
  | 'REPOSITORY_NOT_FOUND'
  /** No directory for the requested model in any repository. */
  | 'MODEL_NOT_FOUND'
  /** The model directory cannot be turned into a loadable model (no versions, missing files, …). */
  | 'MODEL_LOAD_FAILED'
  /** A load override (`config` / `file:` parameters) is malformed. */
  | 'INVALID_LOAD_OVERRIDE'
  /** A config or load request names a file outside the directory that owns it (path traversal). */
  | 'PATH_OUTSIDE_MODEL';

/** A repository or model directory problem. */
export class ModelRepositoryError extends Error {
  /** Stable error code. */
  readonly code: ModelRepositoryErrorCode;

  constructor(code: ModelRepositoryErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModelRepositoryError';
    this.code = code;
  }
}
