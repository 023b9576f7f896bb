import { defineConfig, devices } from '@playwright/test';
import { E2E } from './e2e/ports';

/** Debian's chromium, never a downloaded browser (`playwright install` is not used). */
const chromium = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

/**
 * The same browser with Chromium's fake camera (a test pattern, 640×480) for e2e/camera.spec.ts. No
 * `--use-fake-ui-for-media-stream`: the project grants the `camera` permission instead, so a test
 * that withholds it gets Chromium's real denial (headless Chromium refuses permission prompts).
 */
const fakeCamera = { ...chromium, args: [...chromium.args, '--use-fake-device-for-media-stream'] };

export default defineConfig({
  testDir: 'e2e',
  testMatch: '*.spec.ts',
  outputDir: 'test-results/playwright',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [['list'], ['json', { outputFile: '../../test-results/web.playwright.json' }]],
  use: {
    baseURL: `http://127.0.0.1:${E2E.webPort}`,
    launchOptions: chromium,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  projects: [
    {
      name: 'desktop',
      use: { ...devices['Desktop Chrome'], launchOptions: chromium },
      testIgnore: /phone\.spec|camera\.spec/,
    },
    // trust.spec runs on both: every state of an answer on a desktop and on a phone.
    {
      name: 'phone',
      use: { ...devices['Pixel 7'], launchOptions: chromium },
      testMatch: /phone\.spec|trust\.spec/,
    },
    {
      name: 'camera',
      use: { ...devices['Desktop Chrome'], launchOptions: fakeCamera, permissions: ['camera'] },
      testMatch: /camera\.spec/,
    },
  ],
  webServer: {
    command: 'node --import tsx e2e/stack.ts',
    url: `http://127.0.0.1:${E2E.webPort}/api/health`,
    timeout: 120_000,
    reuseExistingServer: false,
    stdout: 'pipe',
    stderr: 'pipe',
  },
});
