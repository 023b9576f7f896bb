import { expect, test } from '@playwright/test';
import { ServerSentEventReader } from '@tritonserver-ts/protocol/sse';
import { photoPath, readPhoto, shot } from './fixtures';

// The streamed caption under the result, on the real stack: the embedded server has
// models_staging/food_caption (decoupled, Python backend, BLS to food_classifier), the gateway's
// POST /api/caption relays its generate_stream as Server-Sent Events, and the page reads them with
// fetch streaming, word by word. The verdict above comes from /api/predict as before.

test.beforeEach(async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'ok');
});

test('a photo gets its caption streamed word by word under the unchanged verdict', async ({ page }) => {
  // Every state the caption passes through, recorded in the page as it changes.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { captionTexts: string[] }).captionTexts = seen;
    new MutationObserver(() => {
      const text = document.querySelector('[data-testid="caption-text"]')?.textContent;
      if (text && seen.at(-1) !== text) seen.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a photo…' }).click();
  await (await chooser).setFiles(photoPath('P005'));
  await expect(page.getByTestId('result-heading')).toHaveText('Likely Seafood');
  const caption = page.getByTestId('caption');
  await expect(caption).toHaveAttribute('data-state', 'done');
  await expect(page.getByTestId('caption-text')).toHaveText(
    /^Likely Seafood, \d+\u00a0%(, or [^,]+, (\d+|<1)\u00a0%)*\.$/,
  );
  // It arrived in pieces: the page showed growing prefixes of the final text.
  const texts = await page.evaluate(() => (window as unknown as { captionTexts: string[] }).captionTexts);
  const final = texts.at(-1) ?? '';
  // (P005's caption is short: "Likely Seafood, 100 %." arrives in three states.)
  expect(texts.length).toBeGreaterThanOrEqual(Math.min(3, final.split(' ').length));
  for (const t of texts) expect(final.startsWith(t)).toBe(true);
  await expect(page.getByTestId('result-heading')).toHaveText('Likely Seafood');
  await shot(page, '30-streamed-caption');
});

test('POST /api/caption streams Server-Sent Events from the page origin, and refuses what /api/predict refuses', async ({
  page,
}) => {
  // fetch streaming in Chromium, reading the events as they arrive.
  const result = await page.evaluate(async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const form = new FormData();
    form.set('file', new File([bytes], 'A012.jpeg', { type: 'image/jpeg' }));
    const res = await fetch('/api/caption', { method: 'POST', body: form });
    const reader = res.body!.getReader();
    const chunks: string[] = [];
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(decoder.decode(value, { stream: true }));
    }
    return { status: res.status, type: res.headers.get('content-type'), chunks };
  }, readPhoto('A012').toString('base64'));
  expect(result.status).toBe(200);
  expect(result.type).toBe('text/event-stream; charset=utf-8');
  const events = new ServerSentEventReader()
    .push(result.chunks.join(''))
    .map((e) => JSON.parse(e.data) as { text?: string; done?: boolean });
  expect(events.at(-1)).toEqual({ done: true });
  expect(
    events
      .slice(0, -1)
      .map((e) => e.text)
      .join(''),
  ).toMatch(/^(Likely|Perhaps) Rice, \d+\u00a0%/);
  // More than one network chunk: the words were sent as they came, not in one piece.
  expect(result.chunks.length).toBeGreaterThan(1);

  const refused = await page.evaluate(async () => {
    const form = new FormData();
    form.set('file', new File([new TextEncoder().encode('not a photo')], 'x.jpg', { type: 'image/jpeg' }));
    const res = await fetch('/api/caption', { method: 'POST', body: form });
    return { status: res.status, body: (await res.json()) as { error: { code: string } } };
  });
  // What /api/predict answers for the same upload (415, the gateway's code).
  expect(refused.status).toBe(415);
  expect(refused.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
});
