/**
 * How photos become model input during the build: exactly the serving path. The `preprocess_*`
 * parameters come from the model's `config.pbtxt` (the ones the web app and the Python-backend
 * model read) and the pixels go through `@gourmetgram/image-preprocess` (the web app's code, whose
 * bilinear resize is a bit-exact port of Pillow's, i.e. torchvision's). Training features, the build's
 * held-out evaluation and serving therefore see the same tensors.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { preprocessConfigFromParameters, preprocessImage } from '@gourmetgram/image-preprocess';
import type { PreprocessConfig } from '@gourmetgram/image-preprocess';
import { INPUT_SIZE } from './contract.js';
import { FoodModelError } from './errors.js';
import { packageDir, packageVersion } from './packages.js';
import { MODEL_CONFIG_FILE } from './paths.js';
import { parameterMap, parsePbtxt } from './pbtxt.js';

export type { PreprocessConfig } from '@gourmetgram/image-preprocess';

/** Number of floats of one preprocessed image (3×224×224). */
export const IMAGE_FLOATS = 3 * INPUT_SIZE * INPUT_SIZE;

/** The `preprocess_*` string parameters of a Triton `config.pbtxt`, sorted by key. */
export function preprocessParameters(configFile: string = MODEL_CONFIG_FILE): Record<string, string> {
  let params: Record<string, string>;
  try {
    params = parameterMap(parsePbtxt(readFileSync(configFile, 'utf8')));
  } catch (cause) {
    throw new FoodModelError(
      'PREPROCESS_CONFIG_INVALID',
      `cannot read the parameters of ${configFile}: ${(cause as Error).message}`,
      { cause },
    );
  }
  return Object.fromEntries(
    Object.entries(params)
      .filter(([k]) => k.startsWith('preprocess_'))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/**
 * The preprocessing that serving applies for the model of `configFile`, resolved like the web app
 * does (`preprocessConfigFromParameters`, defaults for absent keys). Fails with
 * `PREPROCESS_CONFIG_INVALID` when a value is malformed or does not fit the demo model's input
 * (`[3, 224, 224]`, RGB, channels first); mean and std may be anything: the model folds them back.
 */
export function servingPreprocessConfig(configFile: string = MODEL_CONFIG_FILE): PreprocessConfig {
  let config: PreprocessConfig;
  try {
    config = preprocessConfigFromParameters(preprocessParameters(configFile));
  } catch (cause) {
    if (cause instanceof FoodModelError) throw cause;
    throw new FoodModelError('PREPROCESS_CONFIG_INVALID', `${configFile}: ${(cause as Error).message}`, {
      cause,
    });
  }
  const problems: string[] = [];
  if (config.width !== INPUT_SIZE || config.height !== INPUT_SIZE)
    problems.push(`size ${config.height}×${config.width} (the model takes ${INPUT_SIZE}×${INPUT_SIZE})`);
  if (config.layout !== 'CHW') problems.push(`layout ${config.layout} (the model takes CHW)`);
  if (config.color !== 'RGB') problems.push(`colour order ${config.color} (the backbone takes RGB)`);
  if (problems.length > 0) {
    throw new FoodModelError(
      'PREPROCESS_CONFIG_INVALID',
      `${configFile} declares preprocessing the demo model cannot take: ${problems.join('; ')}`,
    );
  }
  return config;
}

/** The resolved config with its keys sorted: a stable string for hashes. */
export function preprocessConfigId(config: PreprocessConfig): string {
  return JSON.stringify(
    Object.fromEntries(Object.entries(config).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  );
}

/**
 * Identifies the preprocessing code that runs: the compiled `@gourmetgram/image-preprocess` files
 * Node actually loads (its `dist/`), its version and the sharp (libvips) version it resolves.
 */
export function preprocessImplementationId(): string {
  const h = createHash('sha256');
  const dir = packageDir('@gourmetgram/image-preprocess', import.meta.url);
  if (dir === undefined) {
    throw new FoodModelError('PREPROCESS_CONFIG_INVALID', '@gourmetgram/image-preprocess is not installed');
  }
  const dist = join(dir, 'dist');
  for (const f of readdirSync(dist)
    .filter((f) => f.endsWith('.js'))
    .sort()) {
    h.update(`${f}\0`);
    h.update(
      createHash('sha256')
        .update(readFileSync(join(dist, f)))
        .digest(),
    );
  }
  const manifest = join(dir, 'package.json');
  h.update(`image-preprocess@${packageVersion('@gourmetgram/image-preprocess', import.meta.url)}\0`);
  h.update(`sharp@${packageVersion('sharp', manifest)}\0`);
  return h.digest('hex');
}

/** Reads one photo and preprocesses it exactly like serving: a `[3,224,224]` Float32Array. */
export async function preprocessPhoto(
  path: string,
  config: PreprocessConfig,
  out?: Float32Array,
): Promise<Float32Array> {
  try {
    const { tensor } = await preprocessImage(readFileSync(path), config, {}, out);
    return tensor;
  } catch (cause) {
    throw new FoodModelError('IMAGE_DECODE_FAILED', `cannot preprocess ${path}`, { cause });
  }
}
