import { ImagePreprocessError } from './errors.js';

/** How the decoded image becomes `height`×`width`. */
export type ResizeMode =
  /** Stretch to exactly height×width, ignoring aspect ratio (torchvision `Resize((h, w))`). */
  | 'squash'
  /** Resize the shorter side to `resizeShorter`, then take the centre height×width (`Resize(n)` + `CenterCrop`). */
  | 'center-crop';

/** Resampling filter. `linear` is the closest libvips match to PIL's (antialiased) BILINEAR. */
export type ResizeKernel = 'nearest' | 'linear' | 'cubic' | 'mitchell' | 'lanczos2' | 'lanczos3';

/** Everything needed to turn an image into the model's input tensor. */
export interface PreprocessConfig {
  resize: ResizeMode;
  width: number;
  height: number;
  /** Shorter-side size before the centre crop (`center-crop` only). */
  resizeShorter: number;
  /** Per-channel mean and std applied after scaling pixels to [0, 1], in RGB order. */
  mean: readonly [number, number, number];
  std: readonly [number, number, number];
  layout: 'CHW' | 'HWC';
  color: 'RGB' | 'BGR';
  kernel: ResizeKernel;
  /**
   * `pillow`: bit-exact port of Pillow's bilinear resampler (parity with torchvision), in JS.
   * `libvips`: sharp's resize (fast; close to Pillow when reducing, not when enlarging).
   * `auto` (default): `pillow` up to {@link AUTO_PILLOW_MAX_PIXELS} source pixels, `libvips` above,
   * where the JS port would block the event loop for 100+ ms and libvips matches Pillow closely.
   */
  resampler: 'auto' | 'pillow' | 'libvips';
}

/** The original GourmetGram preprocessing: squash to 224×224, ImageNet mean/std, RGB, CHW. */
export const DEFAULT_PREPROCESS_CONFIG: PreprocessConfig = Object.freeze({
  resize: 'squash',
  width: 224,
  height: 224,
  resizeShorter: 256,
  mean: [0.485, 0.456, 0.406] as const,
  std: [0.229, 0.224, 0.225] as const,
  layout: 'CHW',
  color: 'RGB',
  kernel: 'linear',
  resampler: 'auto',
});

/** Above this many source pixels, `resampler: 'auto'` uses libvips. */
export const AUTO_PILLOW_MAX_PIXELS = 2_000_000;

function numberList(key: string, value: string, count: number): number[] {
  const parts = value
    .replace(/[[\]()]/g, '')
    .split(/[\s,]+/)
    .filter((p) => p.length > 0)
    .map(Number);
  if (parts.length !== count || parts.some((n) => !Number.isFinite(n))) {
    throw new ImagePreprocessError(
      'INVALID_CONFIG',
      `model parameter ${key}="${value}" must be ${count} comma-separated numbers`,
    );
  }
  return parts;
}

function positiveInt(key: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 8192) {
    throw new ImagePreprocessError(
      'INVALID_CONFIG',
      `model parameter ${key}="${value}" must be an integer 1..8192`,
    );
  }
  return n;
}

const RESIZE_ALIASES: Record<string, ResizeMode> = {
  squash: 'squash',
  stretch: 'squash',
  fill: 'squash',
  resize: 'squash',
  'center-crop': 'center-crop',
  center_crop: 'center-crop',
  centercrop: 'center-crop',
  crop: 'center-crop',
  shorter_center_crop: 'center-crop',
};

const KERNELS = new Set<ResizeKernel>(['nearest', 'linear', 'cubic', 'mitchell', 'lanczos2', 'lanczos3']);

/**
 * Reads preprocessing parameters from a Triton model config's `parameters` map
 * (`{ key: { string_value } }` or plain `{ key: string }`). Keys: `preprocess_resize`
 * (`squash` | `center_crop`), `preprocess_size` (`224` or `H,W`), `preprocess_resize_shorter`,
 * `preprocess_mean`, `preprocess_std`, `preprocess_layout` (`CHW` | `HWC`), `preprocess_color`
 * (`RGB` | `BGR`), `preprocess_kernel`. Missing keys fall back to {@link DEFAULT_PREPROCESS_CONFIG};
 * malformed values throw `INVALID_CONFIG` naming the key.
 */
export function preprocessConfigFromParameters(
  parameters: Readonly<Record<string, string | { string_value?: string } | undefined>> | undefined,
  fallback: PreprocessConfig = DEFAULT_PREPROCESS_CONFIG,
): PreprocessConfig {
  const get = (key: string): string | undefined => {
    const v = parameters?.[key];
    if (v === undefined) return undefined;
    const s = typeof v === 'string' ? v : v.string_value;
    return s === undefined || s.trim() === '' ? undefined : s.trim();
  };
  const config: PreprocessConfig = { ...fallback };

  const resize = get('preprocess_resize');
  if (resize !== undefined) {
    const mode = RESIZE_ALIASES[resize.toLowerCase()];
    if (mode === undefined) {
      throw new ImagePreprocessError(
        'INVALID_CONFIG',
        `model parameter preprocess_resize="${resize}" must be squash or center_crop`,
      );
    }
    config.resize = mode;
  }
  const size = get('preprocess_size');
  if (size !== undefined) {
    const parts = size.split(/[\s,x×]+/).filter((p) => p.length > 0);
    if (parts.length === 1) {
      config.width = config.height = positiveInt('preprocess_size', size);
    } else if (parts.length === 2) {
      config.height = positiveInt('preprocess_size', parts[0] ?? '');
      config.width = positiveInt('preprocess_size', parts[1] ?? '');
    } else {
      throw new ImagePreprocessError(
        'INVALID_CONFIG',
        `model parameter preprocess_size="${size}" must be N or H,W`,
      );
    }
    if (get('preprocess_resize_shorter') === undefined) {
      config.resizeShorter = Math.round(Math.min(config.width, config.height) / 0.875);
    }
  }
  const shorter = get('preprocess_resize_shorter');
  if (shorter !== undefined) config.resizeShorter = positiveInt('preprocess_resize_shorter', shorter);
  const mean = get('preprocess_mean');
  if (mean !== undefined) config.mean = numberList('preprocess_mean', mean, 3) as [number, number, number];
  const std = get('preprocess_std');
  if (std !== undefined) {
    const s = numberList('preprocess_std', std, 3) as [number, number, number];
    if (s.some((x) => x <= 0)) {
      throw new ImagePreprocessError(
        'INVALID_CONFIG',
        `model parameter preprocess_std="${std}" must be positive`,
      );
    }
    config.std = s;
  }
  const layout = get('preprocess_layout')?.toUpperCase();
  if (layout !== undefined) {
    if (layout !== 'CHW' && layout !== 'HWC' && layout !== 'NCHW' && layout !== 'NHWC') {
      throw new ImagePreprocessError(
        'INVALID_CONFIG',
        `model parameter preprocess_layout="${layout}" must be CHW or HWC`,
      );
    }
    config.layout = layout.endsWith('CHW') ? 'CHW' : 'HWC';
  }
  const color = get('preprocess_color')?.toUpperCase();
  if (color !== undefined) {
    if (color !== 'RGB' && color !== 'BGR') {
      throw new ImagePreprocessError(
        'INVALID_CONFIG',
        `model parameter preprocess_color="${color}" must be RGB or BGR`,
      );
    }
    config.color = color;
  }
  const kernel = get('preprocess_kernel')?.toLowerCase();
  if (kernel !== undefined) {
    const k = (kernel === 'bilinear' ? 'linear' : kernel === 'bicubic' ? 'cubic' : kernel) as ResizeKernel;
    if (!KERNELS.has(k)) {
      throw new ImagePreprocessError(
        'INVALID_CONFIG',
        `model parameter preprocess_kernel="${kernel}" is not supported`,
      );
    }
    config.kernel = k;
  }
  const resampler = get('preprocess_resampler')?.toLowerCase();
  if (resampler !== undefined) {
    if (resampler !== 'pillow' && resampler !== 'libvips' && resampler !== 'auto') {
      throw new ImagePreprocessError(
        'INVALID_CONFIG',
        `model parameter preprocess_resampler="${resampler}" must be auto, pillow or libvips`,
      );
    }
    config.resampler = resampler;
  }
  return config;
}
