import { expect, test } from '@playwright/test';
import { photoPath, shot } from './fixtures';

// The model picker on the real stack: the embedded server runs both GourmetGram models (the Python
// backend's model.py under /usr/bin/python3, its BLS call to the ONNX model), the gateway routes each
// upload to the model picked.

test.beforeEach(async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'ok');
});

test('the Python-backend path, then both paths compared on the same photo', async ({ page }) => {
  const picker = page.getByTestId('model-picker');
  await expect(picker.getByRole('radio', { name: /ONNX model, tensor path/ })).toBeChecked();

  await picker.getByRole('radio', { name: /Python backend \(food_classifier\)/ }).check();
  let chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await chooser).setFiles(photoPath('P005'));
  await expect(page.getByTestId('result-heading')).toContainText('Seafood');
  await expect(page.getByTestId('result')).toContainText('food_classifier v1 (python, python path)');
  // The Python model answers only its top class: one bar.
  await expect(page.getByRole('meter')).toHaveCount(1);
  await expect(page.getByTestId('comparison')).toHaveCount(0);
  await shot(page, '20-python-path');

  await picker.getByRole('radio', { name: 'Compare both' }).check();
  chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await chooser).setFiles(photoPath('A012'));
  const comparison = page.getByTestId('comparison');
  await expect(comparison).toBeVisible();
  const tensor = comparison.locator('tr[data-path="tensor"]');
  const python = comparison.locator('tr[data-path="python"]');
  await expect(tensor).toContainText('food_classifier_onnx');
  await expect(tensor).toContainText('Rice');
  await expect(python).toContainText('food_classifier');
  await expect(python).toContainText('Rice');
  // Each row has its own latencies (round trip, server total, Triton call), in milliseconds.
  for (const row of [tensor, python]) {
    await expect(row.locator('td')).toHaveCount(5);
    await expect(row).toContainText(/\d+ ms[\s\S]*\d+\.\d ms[\s\S]*\d+\.\d ms/);
  }
  await expect(comparison.getByText('fastest', { exact: true })).toHaveCount(1);
  await expect(page.getByTestId('comparison-verdict')).toContainText('Both paths agree on the label.');
  // The main result is the default (tensor) model's, with every class.
  await expect(page.getByTestId('result-heading')).toContainText('Rice');
  await expect(page.getByRole('meter')).toHaveCount(5);
  await shot(page, '21-compare-paths');
});
