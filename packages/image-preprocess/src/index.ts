/**
 * `@gourmetgram/image-preprocess`: upload bytes → FP32 model input, on sharp (libvips).
 * @packageDocumentation
 */
export * from './config.js';
export * from './errors.js';
export * from './preprocess.js';
export { resizeRgbLikePillow } from './resample.js';
export {
  checkImageSignature,
  imageSignatureOf,
  looksLikeMarkup,
  type CheckedImage,
  type ImageInput,
  type ImageSignature,
} from './signature.js';
