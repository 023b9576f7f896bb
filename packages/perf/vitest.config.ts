import { defineConfig } from 'vitest/config';

/**
 * Test files that assert on measured time (throughput ≈ C/D, latency ≈ D, a generator's CPU per
 * request, a tuner's p99 budget). They run last and one at a time, after every other file, so no
 * other test file competes with them for the two cores: run in parallel with the CLI tests, a
 * 100 ms model's latency read 115–128 ms on a loaded CI host, where the tolerance is 15 ms.
 */
const TIMING_SENSITIVE = [
  'test/load-concurrency.test.ts',
  'test/load-rate.test.ts',
  'test/load-generator-cost.test.ts',
  'test/measure-embedded.test.ts',
  'test/tune-embedded.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default', ['json', { outputFile: '../../test-results/perf.vitest.json' }]],
    projects: [
      {
        extends: true,
        test: {
          name: 'perf',
          include: ['test/**/*.test.ts'],
          exclude: TIMING_SENSITIVE,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'perf timing',
          include: TIMING_SENSITIVE,
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
