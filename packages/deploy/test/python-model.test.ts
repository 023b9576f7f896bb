// Runs the food_classifier Python-backend model's unittest suite (packages/deploy/python_tests) under
// Debian python3 and reports each Python test as a vitest test, so the counts reach the JSON report.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

interface PythonTestRecord {
  id: string;
  status: 'passed' | 'failed' | 'skipped';
  message: string;
}
interface PythonReport {
  tests: PythonTestRecord[];
  ran: number;
  passed: number;
  failed: number;
}

const runner = fileURLToPath(new URL('../python_tests/run_tests.py', import.meta.url));
const python = process.env.DEPLOY_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const run = spawnSync(python, [runner], { encoding: 'utf8', timeout: 120_000 });
const lastLine = run.stdout.trim().split('\n').at(-1) ?? '';
const report: PythonReport | undefined = lastLine.startsWith('{')
  ? (JSON.parse(lastLine) as PythonReport)
  : undefined;

describe('food_classifier model.py (python3 + numpy + PIL; stand-ins for Triton with BLS and for food_classifier_onnx)', () => {
  it('the Python suite ran to completion and passed', () => {
    expect(report, `python output:\n${run.stdout}\n${run.stderr}`).toBeDefined();
    expect(report?.ran).toBeGreaterThanOrEqual(20);
    expect(report?.failed, run.stderr).toBe(0);
    expect(run.status, run.stderr).toBe(0);
  });

  for (const test of report?.tests ?? []) {
    it(`python: ${test.id}`, () => {
      expect(test.status, test.message).toBe('passed');
    });
  }
});
