import { expect, test } from '@playwright/test';
import { shot } from './fixtures';

test('phone viewport: usable without horizontal scrolling, camera capture offered', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'ok');
  await expect(page.getByTestId('camera-input')).toHaveAttribute('capture', 'environment');
  await expect(page.getByRole('button', { name: 'Take a photo' })).toBeVisible();
  // The first example: a held-out photo of tender maize the model gets right.
  await page.getByTestId('gallery').getByRole('button').first().click();
  await expect(page.getByTestId('result-heading')).toHaveText('Likely Vegetable/Fruit');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  // Tap targets of the main controls are at least 44 px tall.
  const box = await page.getByRole('button', { name: 'Choose a photo…' }).boundingBox();
  expect(box!.height).toBeGreaterThanOrEqual(44);
  await shot(page, '09-phone');
});
