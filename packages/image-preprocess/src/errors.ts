/** Stable codes for everything that can go wrong while turning upload bytes into a tensor. */
export type ImagePreprocessErrorCode =
  'EMPTY_IMAGE' | 'UNSUPPORTED_FORMAT' | 'CORRUPT_IMAGE' | 'TOO_MANY_PIXELS' | 'INVALID_CONFIG';

/**
 * The one error type thrown by this package. `code` is stable and safe to branch on; `message` is
 * readable and never contains a stack or internal path.
 */
export class ImagePreprocessError extends Error {
  override readonly name = 'ImagePreprocessError';
  readonly code: ImagePreprocessErrorCode;

  constructor(code: ImagePreprocessErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}
