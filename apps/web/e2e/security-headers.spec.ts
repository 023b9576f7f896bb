import { expect, test } from '@playwright/test';
import { photoPath } from './fixtures';

test('pages carry a nonce-based CSP that Next’s own scripts satisfy, and the usual headers', async ({
  page,
  request,
}) => {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  const response = await page.goto('/');
  const headers = response?.headers() ?? {};
  const csp = headers['content-security-policy'] ?? '';
  const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
  expect(nonce, csp).toBeTruthy();
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("object-src 'none'");
  expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
  expect(headers['permissions-policy']).toContain('camera=(self)');

  // Every script Next rendered carries this response's nonce; a second load gets a fresh one.
  const html = await response?.text();
  const scripts = [...(html ?? '').matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
  expect(scripts.length).toBeGreaterThan(0);
  for (const tag of scripts) expect(tag, tag).toContain(`nonce="${nonce}"`);
  const again = (await request.get('/')).headers()['content-security-policy'] ?? '';
  expect(again).not.toContain(`'nonce-${nonce}'`);

  // The app still works under the policy: hydrated, classifies an upload, shows the preview (blob:).
  await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'ok');
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await chooser).setFiles(photoPath('P005'));
  await expect(page.getByTestId('result-heading')).toHaveText('Likely Seafood');
  await expect(page.getByRole('img', { name: /Your photo: P005.jpeg/ })).toBeVisible();
  await page.goto('/stats');
  await expect(page.getByRole('heading').first()).toBeVisible();
  expect(violations).toEqual([]);

  // The JSON API gets the static headers, without a page policy.
  const api = await request.get('/api/health');
  expect(api.headers()['x-content-type-options']).toBe('nosniff');
  expect(api.headers()['content-security-policy']).toBeUndefined();
});
