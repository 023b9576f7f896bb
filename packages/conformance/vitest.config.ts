import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // One shared server; files that change server state (load/unload, settings) must not race others.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default', ['json', { outputFile: '../../test-results/conformance.vitest.json' }]],
  },
});
