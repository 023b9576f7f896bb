// Sums the JSON reports the test runners write into one directory: vitest's (`numPassedTests`, …)
// and Playwright's (`stats`). Used by `npm test` (scripts/test.mjs) and the Node 24 leg
// (scripts/test-node24.mjs) for their closing `Tests: N passed, N failed, N skipped` line.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** @returns {{ files: string[], passed: number, failed: number, skipped: number }} */
export function sumTestReports(dir) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
  for (const file of files) {
    const report = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    if (typeof report.numPassedTests === 'number') {
      // vitest JSON reporter
      passed += report.numPassedTests;
      failed += report.numFailedTests;
      skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
    } else if (report.stats) {
      // Playwright JSON reporter
      passed += (report.stats.expected ?? 0) + (report.stats.flaky ?? 0);
      failed += report.stats.unexpected ?? 0;
      skipped += report.stats.skipped ?? 0;
    }
  }
  return { files, passed, failed, skipped };
}
