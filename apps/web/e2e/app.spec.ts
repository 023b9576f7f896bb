import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from '@playwright/test';
import { control, fileTransfer, photoPath, readPhoto, shot } from './fixtures';
import { E2E } from './ports';

/** The verdict names `label`; the details (opened here) hold the bars and the timings. */
async function expectResult(page: Page, label: string) {
  const heading = page.getByTestId('result-heading');
  await expect(heading).toHaveText(`Likely ${label}`);
  await page.getByTestId('details').locator('summary').click();
  const meters = page.getByRole('meter');
  await expect(meters).toHaveCount(5);
  const first = meters.first();
  const now = Number(await first.getAttribute('aria-valuenow'));
  expect(now).toBeGreaterThan(50);
  await expect(first).toHaveAttribute('aria-valuemin', '0');
  await expect(first).toHaveAttribute('aria-valuemax', '100');
  await expect(page.getByTestId('timings')).toContainText('Inference (Triton)');
}

test.beforeEach(async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'ok');
});

test('upload by file chooser: result heading, bars, latency, history', async ({ page }) => {
  await shot(page, '01-home');
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await chooser).setFiles(photoPath('P005'));
  await expectResult(page, 'Seafood');
  await expect(page.getByRole('img', { name: /Your photo: P005.jpeg/ })).toBeVisible();
  await expect(page.getByTestId('history').getByRole('listitem')).toHaveCount(1);
  await page.getByRole('button', { name: /Show all 11 categories/ }).click();
  await expect(page.getByRole('meter')).toHaveCount(11);
  await shot(page, '02-result');
});

test('a photo unlike the food the model knows gets that verdict and no label; held-out food its class', async ({
  page,
}) => {
  // A street scene from Debian's opencv-doc (scripts/test.mjs installs it): clearly not food.
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await chooser).setFiles('/usr/share/doc/opencv-doc/examples/data/leuvenA.jpg');
  const heading = page.getByTestId('result-heading');
  await expect(heading).toHaveText('This does not look like food the model knows');
  await expect(page.getByTestId('verdict')).toHaveAttribute('data-kind', 'unfamiliar');
  // The heading (focused on arrival) is described by the explanation; the raw answer is in the details.
  await expect(heading).toBeFocused();
  await expect(heading).toHaveAccessibleDescription(/unlike every photo the model was trained on/);
  await page.getByTestId('details').locator('summary').click();
  await expect(page.getByRole('meter')).toHaveCount(5);
  await expect(page.getByTestId('scores')).toContainText('(over: not like the food the model knows)');
  await shot(page, '09-out-of-distribution');
  // A held-out food photo (never trained on): its class.
  const again = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await again).setFiles(photoPath('P023'));
  await expect(page.getByRole('img', { name: /Your photo: P023.jpeg/ })).toBeVisible();
  await expect(heading).toHaveText('Likely Seafood');
});

test('drag and drop shows a drop state and classifies the dropped photo', async ({ page }) => {
  const zone = page.getByTestId('dropzone');
  const dt = await fileTransfer(page, readPhoto('E010'), 'bananas.jpeg', 'image/jpeg');
  await zone.dispatchEvent('dragenter', { dataTransfer: dt });
  await zone.dispatchEvent('dragover', { dataTransfer: dt });
  await expect(zone).toHaveAttribute('data-dragging', 'true');
  await expect(zone).toContainText('Drop the photo to classify it');
  await shot(page, '03-drag-over');
  await zone.dispatchEvent('drop', { dataTransfer: dt });
  await expect(zone).not.toHaveAttribute('data-dragging', 'true');
  await expectResult(page, 'Vegetable/Fruit');
});

test('paste from the clipboard classifies the pasted image', async ({ page }) => {
  const b64 = readPhoto('L001').toString('base64');
  await page.evaluate((b64) => {
    const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bin], 'image.png', { type: 'image/jpeg' }));
    document.body.dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }),
    );
  }, b64);
  await expectResult(page, 'Dairy product');
});

test('clicking an example classifies it', async ({ page }) => {
  await page.getByRole('button', { name: /Classify example: Anchovy/ }).click();
  await expectResult(page, 'Seafood');
  // every image on the page has alt text (decorative history thumbnails use alt="")
  const missing = await page.locator('img:not([alt])').count();
  expect(missing).toBe(0);
});

test('a non-image is refused with a clear inline error', async ({ page }) => {
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (
    await chooser
  ).setFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not a photo') });
  const alert = page.getByTestId('error');
  await expect(alert).toHaveAttribute('role', 'alert');
  await expect(alert).toHaveAttribute('data-code', 'UNSUPPORTED_MEDIA_TYPE');
  await expect(alert).toContainText('“notes.txt” is not a photo we can read.');
  await expect(alert.getByRole('button', { name: 'Choose another photo' })).toBeVisible();
  await shot(page, '04-error-not-image');
});

test('a file over the upload limit is refused (413)', async ({ page }) => {
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  const big = Buffer.alloc(E2E.maxUploadBytes + 200 * 1024, 0xab);
  await (await chooser).setFiles({ name: 'huge.jpg', mimeType: 'image/jpeg', buffer: big });
  const alert = page.getByTestId('error');
  await expect(alert).toHaveAttribute('role', 'alert');
  await expect(alert).toHaveAttribute('data-code', 'FILE_TOO_LARGE');
  await expect(alert).toContainText('“huge.jpg” is too large.');
  await expect(alert).toContainText('1.0 MB');
});

test('inference server stopped: status and error with retry, then recovery', async ({ page }) => {
  await control('stop');
  try {
    await page.getByRole('button', { name: /Classify example: Anchovy/ }).click();
    const alert = page.getByTestId('error');
    await expect(alert).toHaveAttribute('role', 'alert');
    await expect(alert).toHaveAttribute('data-code', 'INFERENCE_UNAVAILABLE');
    await expect(alert).toContainText(
      'Could not classify “P003.jpeg”: the classifier is not reachable right now.',
    );
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'server');
    await expect(page.getByTestId('health')).toContainText('Inference server unreachable');
    await shot(page, '05-error-server-stopped');
  } finally {
    await control('start');
  }
  await page.getByRole('button', { name: 'Try again' }).click();
  await expectResult(page, 'Seafood');
});

test('feedback is stored with the upload by prediction id', async ({ page, request }) => {
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await chooser).setFiles(photoPath('M001'));
  await expectResult(page, 'Egg');
  const id = (await page.getByTestId('result').getAttribute('data-request-id'))!;
  await page.getByRole('button', { name: 'Flag', exact: true }).click();
  await expect(page.getByTestId('feedback-status')).toContainText('flagged');
  await page.getByLabel('Right category').selectOption('Dairy product');
  await page.getByRole('button', { name: 'Save correction', exact: true }).click();
  await expect(page.getByTestId('feedback-status')).toContainText('Dairy product');
  await shot(page, '06-feedback');
  const rec = (await (await request.get(`/api/feedback/${id}`)).json()) as {
    events: { kind: string; correctLabel?: string }[];
    upload: { key: string };
    prediction: { label: string };
  };
  expect(rec.events.map((e) => e.kind).sort()).toEqual(['correction', 'flag']);
  expect(rec.events.find((e) => e.kind === 'correction')?.correctLabel).toBe('Dairy product');
  expect(rec.prediction.label).toBe('Egg');
  const stored = join(E2E.feedbackDir, rec.upload.key);
  expect(existsSync(stored)).toBe(true);
  expect(readFileSync(stored).equals(readPhoto('M001'))).toBe(true);
});

test('keyboard only: choose a file, read the result, give feedback', async ({ page }) => {
  const choose = page.getByRole('button', { name: 'Choose a photo…' });
  for (let i = 0; i < 15 && !(await choose.evaluate((el) => el === document.activeElement)); i++) {
    await page.keyboard.press('Tab');
  }
  await expect(choose).toBeFocused();
  const chooser = page.waitForEvent('filechooser');
  await page.keyboard.press('Enter');
  await (await chooser).setFiles(photoPath('R005'));
  // Focus moves to the result heading so keyboard and screen-reader users land on the answer.
  await expect(page.getByTestId('result-heading')).toHaveText('Likely Seafood');
  await expect(page.getByTestId('result-heading')).toBeFocused();
  const flag = page.getByRole('button', { name: 'Flag', exact: true });
  for (let i = 0; i < 20 && !(await flag.evaluate((el) => el === document.activeElement)); i++) {
    await page.keyboard.press('Tab');
  }
  await expect(flag).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('feedback-status')).toContainText('flagged');
  // Focus stays on the control the user activated.
  await expect(flag).toBeFocused();
  // The correction list starts at the predicted class; pick another and submit with the keyboard.
  await page.keyboard.press('Tab');
  const select = page.getByLabel('Right category');
  await expect(select).toBeFocused();
  await expect(select).toHaveValue('Seafood');
  await select.selectOption('Egg');
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Save correction', exact: true })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('feedback-status')).toContainText('corrected to Egg');
  await shot(page, '07-keyboard');
});

test('stats page charts live statistics', async ({ page }) => {
  await page.goto('/stats');
  await page.getByRole('button', { name: 'Send 24 test requests' }).click();
  await expect(page.getByText(/Sent 24 test requests, 24 succeeded/)).toBeVisible({ timeout: 30_000 });
  const totals = page.getByTestId('totals');
  await expect(totals).toContainText('food_classifier_onnx');
  await expect(page.getByRole('img', { name: /Requests per 2 s chart/ })).toBeVisible();
  await expect(page.getByRole('img', { name: /Batch sizes the scheduler executed chart/ })).toBeVisible();
  // Wait for an interval that saw the load so the charts have a non-zero point.
  await expect
    .poll(
      async () =>
        Number(
          (
            await totals
              .getByText(/^[\d,]+$/)
              .first()
              .textContent()
          )?.replace(/,/g, ''),
        ),
      { timeout: 10_000 },
    )
    .toBeGreaterThanOrEqual(24);
  await page.waitForTimeout(4500);
  await shot(page, '08-stats');
});
