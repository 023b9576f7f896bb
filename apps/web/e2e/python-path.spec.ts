import { expect, test } from '@playwright/test';
import { photoPath, shot } from './fixtures';

// The way to classify picked in the browser, on the real stack: the embedded server runs the three
// GourmetGram paths (the ONNX model; the Python backend's model.py under /usr/bin/python3 with its
// BLS call to the ONNX model; the ensemble of food_preprocess and the ONNX model), and the gateway
// routes each upload to the model picked. trust.spec.ts covers the verdicts on each way.

test.beforeEach(async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'ok');
});

test('the Python model answers every class, then every way compared on the same photo', async ({ page }) => {
  const picker = page.getByTestId('model-picker');
  await expect(picker.getByRole('radio', { name: /Standard/ })).toBeChecked();

  await picker.getByRole('radio', { name: /Python model/ }).check();
  let chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await chooser).setFiles(photoPath('P005'));
  await expect(page.getByTestId('result-heading')).toHaveText('Likely Seafood');
  await page.getByTestId('details').locator('summary').click();
  await expect(page.getByTestId('scores')).toContainText('food_classifier v1 (python, python path)');
  // PROBABILITIES: the Python model answers every class, not one bar.
  await expect(page.getByRole('meter')).toHaveCount(5);
  await page.getByRole('button', { name: /Show all 11 categories/ }).click();
  await expect(page.getByRole('meter')).toHaveCount(11);
  await expect(page.getByTestId('comparison')).toHaveCount(0);
  await shot(page, '20-python-path');

  await picker.getByTestId('picker-advanced').locator('summary').click();
  await picker.getByRole('checkbox', { name: /Compare every way side by side/ }).check();
  chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await chooser).setFiles(photoPath('A012'));
  const comparison = page.getByTestId('comparison');
  await expect(comparison).toBeVisible();
  const rows = ['tensor', 'python', 'ensemble'].map((p) => comparison.locator(`tr[data-path="${p}"]`));
  await expect(rows[0]!).toContainText('food_classifier_onnx');
  await expect(rows[1]!).toContainText('food_classifier (python path)');
  await expect(rows[2]!).toContainText('food_classifier_ensemble');
  for (const row of rows) {
    await expect(row).toContainText('Rice');
    // Each row has its verdict, class, probability and its own latencies (round trip, server total,
    // Triton call), in milliseconds.
    await expect(row.locator('td')).toHaveCount(6);
    await expect(row).toContainText(/\d+ ms[\s\S]*\d+\.\d ms[\s\S]*\d+\.\d ms/);
  }
  await expect(comparison.getByText('fastest', { exact: true })).toHaveCount(1);
  await expect(page.getByTestId('comparison-verdict')).toContainText('Every way gives the same verdict.');
  // The main result is the default (standard) way's.
  await expect(page.getByTestId('result-heading')).toContainText('Rice');
  await shot(page, '21-compare-paths');
});
