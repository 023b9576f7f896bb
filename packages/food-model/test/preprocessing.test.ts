import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { preprocessConfigFromParameters, preprocessImage } from '@gourmetgram/image-preprocess';
import { afterAll, describe, expect, it } from 'vitest';
import { loadNsfwjsMobileNetV2 } from '../src/convert/tfjs-artifacts.js';
import { buildInputsHash } from '../src/ensure.js';
import { FoodModelError } from '../src/errors.js';
import { extractFeatures, featureCacheKey } from '../src/features.js';
import { buildFeatureExtractor } from '../src/graph.js';
import { MODEL_CONFIG_FILE } from '../src/paths.js';
import { parameterMap, parsePbtxt } from '../src/pbtxt.js';
import type { PreprocessConfig } from '../src/preprocessing.js';
import { preprocessParameters, preprocessPhoto, servingPreprocessConfig } from '../src/preprocessing.js';
import { samplePhotos } from './fixtures.js';

const committedConfig = readFileSync(MODEL_CONFIG_FILE, 'utf8');

/** config.pbtxt with one preprocess_* parameter set (added when absent). */
function withParameter(key: string, value: string): string {
  const entry = new RegExp(`(key: "${key}"\\s*value: \\{ string_value: )"[^"]*"`);
  return entry.test(committedConfig)
    ? committedConfig.replace(entry, `$1"${value}"`)
    : `${committedConfig}\nparameters: {\n  key: "${key}"\n  value: { string_value: "${value}" }\n}\n`;
}

describe('the build preprocesses like serving (config.pbtxt parameters + @gourmetgram/image-preprocess)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'food-preprocess-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const preprocess = servingPreprocessConfig();
  const photos = samplePhotos(2);

  it("reads config.pbtxt's preprocess_* parameters and resolves them like the web app", () => {
    const all = parameterMap(parsePbtxt(committedConfig));
    expect(preprocessParameters()).toEqual(all);
    expect(preprocess).toEqual(preprocessConfigFromParameters(all));
    expect(preprocess).toMatchObject({ resize: 'squash', width: 224, height: 224, kernel: 'linear' });
  });

  it('gives the exact tensor of the serving path for a photo', async () => {
    const bytes = readFileSync(photos[0] as string);
    const { tensor } = await preprocessImage(
      new Uint8Array(bytes),
      preprocessConfigFromParameters(parameterMap(parsePbtxt(committedConfig))),
    );
    const ours = await preprocessPhoto(photos[0] as string, preprocess);
    expect(Buffer.from(ours.buffer).equals(Buffer.from(tensor.buffer))).toBe(true);
  });

  it('the feature cache key changes whenever the preprocessing does', () => {
    const extractor = new Uint8Array([1, 2, 3]);
    const key = (c: PreprocessConfig): string => featureCacheKey(extractor, photos, c);
    expect(key({ ...preprocess })).toBe(key(preprocess));
    const variants: Partial<PreprocessConfig>[] = [
      { kernel: 'cubic' },
      { resampler: 'libvips' },
      { resize: 'center-crop' },
      { mean: [0.5, 0.5, 0.5] },
      { std: [0.5, 0.5, 0.5] },
    ];
    const keys = new Set([key(preprocess), ...variants.map((v) => key({ ...preprocess, ...v }))]);
    expect(keys.size).toBe(variants.length + 1);
  });

  it('model:ensure rebuilds when the preprocessing in config.pbtxt changes, not for unrelated edits', () => {
    const base = buildInputsHash();
    expect(buildInputsHash(configFile('same.pbtxt', `# a comment\n${committedConfig}`))).toBe(base);
    expect(buildInputsHash(configFile('kernel.pbtxt', withParameter('preprocess_kernel', 'cubic')))).not.toBe(
      base,
    );
    expect(
      buildInputsHash(configFile('resampler.pbtxt', withParameter('preprocess_resampler', 'libvips'))),
    ).not.toBe(base);
  });

  it('refuses preprocessing the demo model cannot take, naming the problem', () => {
    const refused = (text: string, pattern: RegExp): void => {
      let error: unknown;
      try {
        servingPreprocessConfig(configFile('bad.pbtxt', text));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(FoodModelError);
      expect((error as FoodModelError).code).toBe('PREPROCESS_CONFIG_INVALID');
      expect((error as Error).message).toMatch(pattern);
    };
    refused(withParameter('preprocess_layout', 'HWC'), /layout HWC/);
    refused(withParameter('preprocess_color', 'BGR'), /BGR/);
    refused(withParameter('preprocess_size', '299'), /299×299/);
    refused(withParameter('preprocess_mean', '0.5,0.5'), /preprocess_mean/);
  });

  it('follows the configured mean/std: the model folds them back, so the features do not change', async () => {
    const backbone = loadNsfwjsMobileNetV2();
    const other: PreprocessConfig = { ...preprocess, mean: [0.5, 0.5, 0.5], std: [0.25, 0.25, 0.25] };
    const a = await extractFeatures(buildFeatureExtractor(backbone, preprocess), photos, preprocess);
    const b = await extractFeatures(buildFeatureExtractor(backbone, other), photos, other);
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)));
    expect(worst).toBeLessThan(1e-3);
  }, 60_000);
});
