import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { readPhoto, shot } from './fixtures';

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  'x-error-codes': { code: string; status: number }[];
}

test('the footer links to /api, which lists every route and the error-code table of /api/openapi.json', async ({
  page,
  request,
}) => {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  const res = await request.get('/api/openapi.json');
  expect(res.status()).toBe(200);
  const doc = (await res.json()) as Doc;
  expect(doc.openapi).toBe('3.1.0');

  await page.goto('/');
  const footer = page.getByRole('contentinfo');
  await footer.getByRole('link', { name: 'API', exact: true }).click();
  await expect(page).toHaveURL(/\/api$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('The GourmetGram API');

  // One section per documented route and method, in the page's words.
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops).map((method) => ({ method, path })),
  );
  const sections = page.getByTestId('api-operation');
  await expect(sections).toHaveCount(operations.length);
  for (const { method, path } of operations) {
    await expect(
      sections.filter({ has: page.getByRole('heading', { name: `${method} ${path}`, exact: true }) }),
    ).toHaveCount(1);
  }
  // The error-code table: every code with its status.
  const rows = page.getByTestId('error-codes').locator('tbody tr');
  await expect(rows).toHaveCount(doc['x-error-codes'].length);
  for (const { code, status } of doc['x-error-codes']) {
    const row = page.locator(`#code-${code}`);
    await expect(row.locator('td').nth(0)).toHaveText(code);
    await expect(row.locator('td').nth(1)).toHaveText(String(status));
  }
  // The machine-readable link works from the page too.
  const link = page.getByRole('link', { name: 'OpenAPI 3.1 document' });
  expect(await link.getAttribute('href')).toBe('/api/openapi.json');
  await shot(page, '12-api-page');
  expect(violations).toEqual([]);
});

test('the curl examples of /api run as shown, top to bottom, against the app', async ({ page, baseURL }) => {
  await page.goto('/api');
  const snippets = await page.getByTestId('curl').allTextContents();
  expect(snippets.length).toBeGreaterThanOrEqual(8);
  for (const s of snippets) expect(s).toContain('http://localhost:3000/');
  // What a reader copies, pointed at this test's server instead of port 3000. Every HTTP error fails
  // the run (--fail-with-body), and each snippet's output is marked so it can be checked.
  const script = [
    'set -euo pipefail',
    'curl() { command curl -sS --fail-with-body "$@"; }',
    ...snippets.flatMap((s, i) => [
      `echo '=== ${i}'`,
      ...s
        .replaceAll('http://localhost:3000', baseURL!)
        .split('\n')
        .flatMap((line) => [line, 'echo']),
    ]),
  ].join('\n');
  const dir = mkdtempSync(join(tmpdir(), 'gg-curl-'));
  try {
    const run = spawnSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const outputs = run.stdout.split(/^=== \d+\n/m).slice(1);
    expect(outputs).toHaveLength(snippets.length);
    // JSON lines, and the JSON of each Server-Sent Event (`data: {…}`) of a streaming route.
    const jsonOf = (i: number) =>
      outputs[i]!.split('\n')
        .map((l) => (l.startsWith('data: ') ? l.slice('data: '.length) : l))
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const at = (needle: string) => snippets.findIndex((s) => s.includes(needle));
    // The example photo was downloaded, classified, confirmed, flagged and corrected; the record shows all.
    expect(readFileSync(join(dir, 'dish.jpg')).equals(readPhoto('P005'))).toBe(true);
    expect(jsonOf(at('-F file=@dish.jpg'))[0]).toMatchObject({ label: 'Seafood' });
    expect(jsonOf(at('"kind":"flag"')).map((e) => e.kind)).toEqual(['confirm', 'flag', 'correction']);
    const record = jsonOf(at('/api/feedback/$ID'))[0] as { events: { kind: string }[] };
    expect(record.events.map((e) => e.kind)).toEqual(['confirm', 'flag', 'correction']);
    // The caption of the same photo, word by word, then the end of the stream.
    const caption = jsonOf(at('/api/caption'));
    expect(caption.map((e) => (typeof e.text === 'string' ? e.text : '')).join('')).toMatch(
      /^Likely Seafood, \d+\s%/,
    );
    expect(caption.at(-1)).toEqual({ done: true });
    expect(jsonOf(at('/api/health'))[0]).toMatchObject({ ok: true });
    expect(jsonOf(at('/api/openapi.json'))[0]).toMatchObject({ openapi: '3.1.0' });
    for (let i = 0; i < outputs.length; i++) {
      if (!snippets[i]!.includes('-o dish.jpg')) expect(jsonOf(i).length, snippets[i]).toBeGreaterThan(0);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
