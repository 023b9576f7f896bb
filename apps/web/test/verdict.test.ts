/**
 * The verdict rules (src/server/verdict.ts), the refusal of tiny and flat images
 * (src/server/image-checks.ts) and the session history's storage (src/lib/history.ts), on their own.
 */
import calibration from '@gourmetgram/food-model/ood-calibration.json';
import { DEFAULT_PREPROCESS_CONFIG } from '@gourmetgram/image-preprocess';
import { describe, expect, it } from 'vitest';
import { HISTORY_KEY, loadHistory, saveHistory, withFeedback, type HistoryEntry } from '../src/lib/history';
import type { ClassProbability, Prediction } from '../src/lib/types';
import {
  checkImageSize,
  checkNotFlatRgb,
  checkNotFlatTensor,
  MIN_IMAGE_SIDE,
} from '../src/server/image-checks';
import { outOfDistribution } from '../src/server/ood';
import { scoreKeeping, VERDICT_RULES, verdictOf } from '../src/server/verdict';

/** The gateway error `fn` throws: its code and status. */
function thrown(fn: () => void): { code?: string; status?: number; message?: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: string; status: number; message: string };
  }
  return {};
}

const top = (...ps: [string, number][]): ClassProbability[] =>
  ps.map(([label, probability], index) => ({ index, label, probability }));

describe('verdictOf', () => {
  const sure = top(['Seafood', 0.95], ['Rice', 0.03], ['Egg', 0.02]);
  const close = top(['Seafood', 0.5], ['Rice', 0.3], ['Egg', 0.15], ['Bread', 0.05]);

  it('says "likely X" only for a clear winner on a photo like the training photos', () => {
    const v = verdictOf(sure, outOfDistribution(0.02));
    expect(v).toMatchObject({
      kind: 'likely',
      reason: 'confident',
      label: 'Seafood',
      headline: 'Likely Seafood',
    });
    expect(v.candidates.map((c) => c.label)).toEqual(['Seafood']);
    expect(v.explanation).not.toMatch(/\d/);
  });

  it('says "not sure" with the three most likely classes when none is clearly ahead', () => {
    const v = verdictOf(close, outOfDistribution(0.02));
    expect(v).toMatchObject({ kind: 'unsure', reason: 'no-clear-winner', label: null, headline: 'Not sure' });
    expect(v.candidates.map((c) => c.label)).toEqual(['Seafood', 'Rice', 'Egg']);
    expect(v.explanation).toBe('Its best guesses are Seafood, Rice or Egg, none clearly ahead.');
  });

  it('never names a class for a photo unlike the training photos, however sure the model is', () => {
    const v = verdictOf(top(['Dairy product', 1]), outOfDistribution(calibration.threshold + 0.001));
    expect(v).toMatchObject({ kind: 'unfamiliar', reason: 'unlike-training', label: null, candidates: [] });
    expect(v.headline).toBe('This does not look like food the model knows');
  });

  it('between the familiar bound and the threshold, a clear winner is only "not sure"', () => {
    const { familiarBelow } = VERDICT_RULES;
    expect(familiarBelow).toBeGreaterThan(0.05);
    expect(familiarBelow).toBeLessThan(calibration.threshold);
    expect(verdictOf(sure, outOfDistribution(familiarBelow)).kind).toBe('likely');
    expect(verdictOf(sure, outOfDistribution(familiarBelow + 1e-6))).toMatchObject({
      kind: 'unsure',
      reason: 'far-from-training',
    });
    expect(verdictOf(sure, outOfDistribution(calibration.threshold)).kind).toBe('unsure');
  });

  it('the probability bound is inclusive; without an OOD signal a clear winner is "likely", unchecked', () => {
    expect(verdictOf(top(['Rice', 0.8], ['Egg', 0.2]), outOfDistribution(0)).kind).toBe('likely');
    expect(verdictOf(top(['Rice', 0.7999], ['Egg', 0.2001]), outOfDistribution(0)).kind).toBe('unsure');
    expect(verdictOf(sure, null)).toMatchObject({ kind: 'likely', reason: 'confident-unchecked' });
    expect(verdictOf(top(['Rice', 0.6]), null)).toMatchObject({
      kind: 'unsure',
      candidates: [{ label: 'Rice' }],
    });
  });

  it('computes the familiar bound with the calibration rule (keep 90 % of held-out food)', () => {
    expect(scoreKeeping([0.1, 0.2, 0.3, 0.4], 0.5)).toBeCloseTo(0.25, 12);
    expect(scoreKeeping([0.1, 0.2, 0.3, 0.4], 1)).toBe(0.4);
    const held = Object.values(calibration.scores.heldOutFood);
    expect(scoreKeeping(held, 0.95)).toBeCloseTo(calibration.threshold, 6);
    const kept = held.filter((s) => s <= VERDICT_RULES.familiarBelow).length;
    expect(kept).toBe(Math.ceil(0.9 * held.length));
  });
});

describe('tiny and flat images', () => {
  it(`refuses a side under ${MIN_IMAGE_SIDE} px`, () => {
    expect(thrown(() => checkImageSize(1, 1))).toMatchObject({ code: 'IMAGE_TOO_SMALL', status: 422 });
    expect(() => checkImageSize(31, 400)).toThrow(/31×400/);
    expect(() => checkImageSize(MIN_IMAGE_SIDE, MIN_IMAGE_SIDE)).not.toThrow();
  });

  it('refuses one flat colour (within 2 levels) and keeps anything with a little more', () => {
    const rgb = new Uint8Array(64 * 64 * 3).map((_, i) => [200, 40, 40][i % 3]! + (i % 7 === 0 ? 2 : 0));
    expect(thrown(() => checkNotFlatRgb(rgb))).toMatchObject({ code: 'IMAGE_UNIFORM', status: 422 });
    rgb[5000] = 100;
    expect(() => checkNotFlatRgb(rgb)).not.toThrow();
  });

  it('reads the model input back in 8-bit levels (CHW, per-channel std)', () => {
    const cfg = DEFAULT_PREPROCESS_CONFIG;
    const n = 224 * 224;
    const tensor = new Float32Array(3 * n).fill(0.3);
    expect(thrown(() => checkNotFlatTensor(tensor, cfg))).toMatchObject({ code: 'IMAGE_UNIFORM' });
    // 2 levels of blue: still flat; 4 levels: not.
    tensor[2 * n + 10] = 0.3 + 2 / 255 / cfg.std[2];
    expect(() => checkNotFlatTensor(tensor, cfg)).toThrow();
    tensor[2 * n + 10] = 0.3 + 4 / 255 / cfg.std[2];
    expect(() => checkNotFlatTensor(tensor, cfg)).not.toThrow();
  });
});

describe('session history in localStorage', () => {
  class MemoryStorage {
    data = new Map<string, string>();
    quota = Infinity;
    getItem(k: string) {
      return this.data.get(k) ?? null;
    }
    setItem(k: string, v: string) {
      if (v.length > this.quota) throw new Error('QuotaExceededError');
      this.data.set(k, v);
    }
  }
  const entry = (id: string): HistoryEntry => ({
    prediction: {
      requestId: id,
      top: [],
      verdict: { kind: 'likely' },
    } as unknown as Prediction,
    fileName: `${id}.jpg`,
    thumb: `data:image/jpeg;base64,${'A'.repeat(1000)}`,
    roundTripMs: 12,
    feedback: [],
  });

  it('keeps entries and their feedback across a reload, each mark once', () => {
    const storage = new MemoryStorage() as unknown as Storage;
    let h = [entry('b'), entry('a')];
    h = withFeedback(h, 'a', { kind: 'correction', label: 'Rice', at: 't1' });
    h = withFeedback(h, 'a', { kind: 'correction', label: 'Rice', at: 't2' });
    h = withFeedback(h, 'a', { kind: 'flag', at: 't3' });
    saveHistory(h, storage);
    const back = loadHistory(storage);
    expect(back.map((e) => e.prediction.requestId)).toEqual(['b', 'a']);
    expect(back[1]!.feedback.map((f) => `${f.kind}:${f.label ?? ''}`)).toEqual(['correction:Rice', 'flag:']);
  });

  it('drops thumbnails when storage is full, and ignores what it cannot read', () => {
    const storage = new MemoryStorage();
    storage.quota = 1000;
    saveHistory([entry('a')], storage as unknown as Storage);
    expect(loadHistory(storage as unknown as Storage)[0]?.thumb).toBe('');
    storage.data.set(HISTORY_KEY, '{not json');
    expect(loadHistory(storage as unknown as Storage)).toEqual([]);
    storage.data.set(HISTORY_KEY, JSON.stringify([{ nonsense: true }, entry('c')]));
    expect(loadHistory(storage as unknown as Storage).map((e) => e.fileName)).toEqual(['c.jpg']);
  });
});
