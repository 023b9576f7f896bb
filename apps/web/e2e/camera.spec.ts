/**
 * The live camera in Chromium with its fake camera device (`--use-fake-device-for-media-stream`: a
 * moving test pattern, 640×480), run by the `camera` project, which grants the `camera` permission.
 * Chromium's real answers cover the granted and denied cases; faults Chromium cannot be made to
 * produce here (no camera, camera busy, no camera API, a camera that disappears, a hidden page) are
 * faked inside the page, and each such test says so.
 */
import { devices, expect, test } from '@playwright/test';
import type { JSHandle, Page } from '@playwright/test';
import { shot } from './fixtures';

const MIRRORED = 'matrix(-1, 0, 0, 1, 0, 0)';

async function openCamera(page: Page) {
  await page.goto('/');
  await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'ok');
  await page.getByRole('button', { name: 'Use camera' }).click();
  return page.getByTestId('camera-panel');
}

/** Waits until the preview shows frames from the camera. */
async function expectLive(page: Page) {
  const panel = page.getByTestId('camera-panel');
  await expect(panel).toHaveAttribute('data-state', 'live');
  const video = page.getByTestId('camera-video');
  await expect(video).toBeVisible();
  await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.videoWidth)).toBeGreaterThan(0);
  await expect(page.getByRole('button', { name: 'Capture' })).not.toHaveAttribute('aria-disabled');
  await expect(panel.getByRole('status')).toHaveText('Camera on. Frame the dish, then press Capture.');
}

/** Any verdict: the fake camera shows a test pattern, not food. */
async function expectResult(page: Page) {
  await expect(page.getByTestId('result-heading')).toHaveText(
    /^(Likely \S.*|Not sure|This does not look like food the model knows)$/,
  );
  // The bars are in the (closed) details; the heading keeps the focus it gets on arrival.
  await expect(page.getByTestId('details').locator('[role="meter"]')).toHaveCount(5);
  await expect(page.getByRole('img', { name: 'Your photo: camera.jpg' })).toBeVisible();
}

/** The preview's MediaStream, kept so its tracks can be checked after the panel is gone. */
function liveStream(page: Page): Promise<JSHandle<MediaStream>> {
  return page.getByTestId('camera-video').evaluateHandle((v: HTMLVideoElement) => v.srcObject as MediaStream);
}

function trackStates(stream: JSHandle<MediaStream>) {
  return stream.evaluate((s) => s.getTracks().map((t) => t.readyState));
}

test('live preview, capture → classified, retake → live again, no CSP violation', async ({ page }) => {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content.Security.Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  const panel = await openCamera(page);
  await expect(page.getByRole('button', { name: 'Use camera' })).toHaveAttribute('aria-expanded', 'true');
  await expect(panel.getByRole('heading', { name: 'Camera' })).toBeFocused();
  await expectLive(page);
  const first = await liveStream(page);
  await shot(page, '10-camera-live');

  await page.getByRole('button', { name: 'Capture' }).click();
  await expect(panel).toHaveAttribute('data-state', 'captured');
  await expect(page.getByRole('img', { name: 'The photo you took' })).toBeVisible();
  await expectResult(page);
  // The camera is off while the photo is shown.
  expect(await trackStates(first)).toEqual(['ended']);
  await expect(page.getByTestId('result-heading')).toBeFocused();
  await shot(page, '11-camera-captured');

  await page.getByRole('button', { name: 'Retake' }).click();
  await expect(page.getByRole('button', { name: 'Capture' })).toBeFocused();
  await expectLive(page);
  await expect(page.getByTestId('camera-still')).toHaveCount(0);
  expect(await trackStates(await liveStream(page))).toEqual(['live']);
  expect(violations).toEqual([]);
});

test('mirror toggle flips the preview and the still alike', async ({ page }) => {
  await openCamera(page);
  await expectLive(page);
  const video = page.getByTestId('camera-video');
  const mirror = page.getByRole('button', { name: 'Mirror view' });
  // The fake camera reports no facing mode, like most laptop cameras: treated as user-facing, mirrored.
  await expect(mirror).toHaveAttribute('aria-pressed', 'true');
  await expect(video).toHaveCSS('transform', MIRRORED);
  await mirror.click();
  await expect(mirror).toHaveAttribute('aria-pressed', 'false');
  await expect(video).toHaveCSS('transform', 'none');
  await mirror.click();
  await expect(video).toHaveCSS('transform', MIRRORED);
  await page.getByRole('button', { name: 'Capture' }).click();
  const still = page.getByTestId('camera-still');
  await expect(still).toHaveCSS('transform', MIRRORED);
  await mirror.click();
  await expect(still).toHaveCSS('transform', 'none');
});

test('the photo sent is never mirrored, whatever the preview shows', async ({ page }) => {
  // In-page fake camera: a canvas stream, red on the left and blue on the right, so the orientation of
  // the JPEG can be read back (Chromium's test pattern has no fixed left and right).
  await page.addInitScript(() => {
    navigator.mediaDevices.getUserMedia = () => {
      const canvas = document.createElement('canvas');
      canvas.width = 320;
      canvas.height = 240;
      const paint = () => {
        const c = canvas.getContext('2d')!;
        c.fillStyle = '#ff0000';
        c.fillRect(0, 0, 160, 240);
        c.fillStyle = '#0000ff';
        c.fillRect(160, 0, 160, 240);
      };
      paint();
      setInterval(paint, 50);
      return Promise.resolve(canvas.captureStream(20));
    };
  });
  await openCamera(page);
  await expectLive(page);
  await expect(page.getByTestId('camera-video')).toHaveCSS('transform', MIRRORED);
  await page.getByRole('button', { name: 'Capture' }).click();
  await expectResult(page);
  const leftAndRight = await page
    .getByRole('img', { name: 'Your photo: camera.jpg' })
    .evaluate(async (img: HTMLImageElement) => {
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const c = canvas.getContext('2d')!;
      c.drawImage(img, 0, 0);
      const y = img.naturalHeight / 2;
      return [
        [...c.getImageData(10, y, 1, 1).data.slice(0, 3)],
        [...c.getImageData(img.naturalWidth - 10, y, 1, 1).data.slice(0, 3)],
      ];
    });
  const [left, right] = leftAndRight;
  expect(left![0]).toBeGreaterThan(200); // red stays on the left
  expect(left![2]).toBeLessThan(60);
  expect(right![2]).toBeGreaterThan(200); // blue on the right
  expect(right![0]).toBeLessThan(60);
});

test('Close stops every track and returns focus; Escape closes too', async ({ page }) => {
  const panel = await openCamera(page);
  await expectLive(page);
  const stream = await liveStream(page);
  const video = await page.getByTestId('camera-video').elementHandle();
  expect(await trackStates(stream)).toEqual(['live']);
  await page.getByRole('button', { name: 'Close camera' }).click();
  await expect(panel).toHaveCount(0);
  expect(await trackStates(stream)).toEqual(['ended']);
  expect(await video.evaluate((v: HTMLVideoElement) => v.srcObject)).toBeNull();
  const open = page.getByRole('button', { name: 'Use camera' });
  await expect(open).toBeFocused();
  await expect(open).toHaveAttribute('aria-expanded', 'false');

  await open.click();
  await expectLive(page);
  const again = await liveStream(page);
  await page.keyboard.press('Escape');
  await expect(panel).toHaveCount(0);
  expect(await trackStates(again)).toEqual(['ended']);
});

test('keyboard only: open, capture, retake, close', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('health')).toHaveAttribute('data-state', 'ok');
  const open = page.getByRole('button', { name: 'Use camera' });
  for (let i = 0; i < 15 && !(await open.evaluate((el) => el === document.activeElement)); i++) {
    await page.keyboard.press('Tab');
  }
  await expect(open).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { name: 'Camera' })).toBeFocused();
  await expectLive(page);
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Capture' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expectResult(page);
  await expect(page.getByTestId('result-heading')).toBeFocused();
  await page.getByRole('button', { name: 'Retake' }).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('button', { name: 'Capture' })).toBeFocused();
  await expectLive(page);
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('camera-panel')).toHaveCount(0);
  await expect(open).toBeFocused();
});

test('a hidden page releases the camera and gets it back when visible', async ({ page }) => {
  await openCamera(page);
  await expectLive(page);
  const stream = await liveStream(page);
  // In-page fake of the page being hidden (headless Chromium keeps every page visible).
  const setVisibility = (state: 'hidden' | 'visible') =>
    page.evaluate((state) => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
      document.dispatchEvent(new Event('visibilitychange'));
    }, state);
  await setVisibility('hidden');
  await expect(page.getByTestId('camera-panel')).toHaveAttribute('data-state', 'paused');
  expect(await trackStates(stream)).toEqual(['ended']);
  await setVisibility('visible');
  await expectLive(page);
  expect(await trackStates(await liveStream(page))).toEqual(['live']);
});

test.describe('permission withheld', () => {
  test.use({ permissions: [] });

  test('Chromium denies the camera: a clear message, then Try again once allowed', async ({
    page,
    context,
  }) => {
    const panel = await openCamera(page);
    await expect(panel).toHaveAttribute('data-state', 'denied');
    const alert = panel.getByRole('alert');
    await expect(alert).toContainText('Camera access is blocked.');
    await expect(alert).toContainText('Allow the camera for this site');
    await expect(page.getByTestId('camera-video')).toHaveCount(0);
    await shot(page, '12-camera-denied');
    await context.grantPermissions(['camera']);
    await panel.getByRole('button', { name: 'Try again' }).click();
    await expectLive(page);
  });
});

// In-page fakes of faults this machine cannot produce on demand: getUserMedia rejects with the
// DOMException a browser gives for them, or the camera API is missing (as on a plain-http page).
const FAULTS = [
  { name: 'NotFoundError', state: 'no-camera', text: 'No camera found.' },
  { name: 'OverconstrainedError', state: 'no-camera', text: 'No camera found.' },
  { name: 'NotReadableError', state: 'busy', text: 'The camera is in use.' },
  { name: 'no mediaDevices', state: 'unsupported', text: 'This browser cannot use a camera here.' },
] as const;

for (const fault of FAULTS) {
  test(`in-page fake fault ${fault.name}: ${fault.state} state`, async ({ page }) => {
    await page.addInitScript((name) => {
      if (name === 'no mediaDevices') {
        Object.defineProperty(Navigator.prototype, 'mediaDevices', {
          configurable: true,
          get: () => undefined,
        });
        return;
      }
      navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException('fake fault', name));
    }, fault.name);
    const panel = await openCamera(page);
    await expect(panel).toHaveAttribute('data-state', fault.state);
    await expect(panel.getByRole('alert')).toContainText(fault.text);
    await expect(panel.getByRole('button', { name: 'Try again' })).toBeVisible();
    if (fault.state === 'no-camera' && fault.name === 'NotFoundError') await shot(page, '13-camera-none');
  });
}

test('in-page fake fault: the camera disappears while in use', async ({ page }) => {
  await openCamera(page);
  await expectLive(page);
  const stream = await liveStream(page);
  // A browser fires `ended` on the track when the camera is unplugged; here it is dispatched by hand.
  await stream.evaluate((s) => s.getVideoTracks()[0]!.dispatchEvent(new Event('ended')));
  const panel = page.getByTestId('camera-panel');
  await expect(panel).toHaveAttribute('data-state', 'stopped');
  await expect(panel.getByRole('alert')).toContainText('The camera stopped.');
  expect(await trackStates(stream)).toEqual(['ended']);
});

test.describe('phone layout', () => {
  const { defaultBrowserType: _, ...pixel } = devices['Pixel 7'];
  test.use(pixel);

  test('live camera fits the phone screen next to the capture input', async ({ page }) => {
    const panel = await openCamera(page);
    await expectLive(page);
    await expect(page.getByTestId('camera-input')).toHaveAttribute('capture', 'environment');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    for (const name of ['Capture', 'Mirror view', 'Close camera']) {
      const box = await panel.getByRole('button', { name }).boundingBox();
      expect(box!.height, name).toBeGreaterThanOrEqual(44);
    }
    await shot(page, '14-camera-phone-live');
    await page.getByRole('button', { name: 'Capture' }).click();
    await expectResult(page);
    await shot(page, '15-camera-phone-captured');
  });
});
