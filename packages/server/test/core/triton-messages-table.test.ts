/**
 * The README's table of messages copied from Triton stays equal to the code: every message in it is
 * produced by the server's source (or the client protocol codec the server decodes requests with) as
 * written there, `<…>` standing for one `${…}` value, and the messages that changed in Triton 2.73
 * are marked as checked against 2.73.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');

/** The rows between the README's triton-messages markers. */
function tableRows(): { message: string; source: string; checked: string }[] {
  const start = readme.indexOf('<!-- triton-messages:start -->');
  const end = readme.indexOf('<!-- triton-messages:end -->');
  expect(start, 'start marker').toBeGreaterThan(0);
  expect(end, 'end marker').toBeGreaterThan(start);
  return readme
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const cells = line
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim());
      const message = /^`(.*)`$/.exec(cells[0] ?? '')?.[1];
      if (message === undefined || cells.length !== 3) throw new Error(`cannot read row: ${line}`);
      return { message, source: cells[1] ?? '', checked: cells[2] ?? '' };
    });
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/**
 * The source text messages are looked for in: each file with its string constants (`const X = '…'`)
 * expanded where a template uses them (`${X}`), and quotes unescaped.
 */
function sourceText(): string {
  const dirs = [join(packageDir, 'src'), join(packageDir, '../protocol/src')];
  return dirs
    .flatMap(tsFiles)
    .map((file) => {
      let text = readFileSync(file, 'utf8');
      const constants = new Map<string, string>();
      for (const m of text.matchAll(/\bconst ([A-Z_][A-Z0-9_]*) = (?:'([^'\n]*)'|"([^"\n]*)");/g)) {
        constants.set(m[1] as string, m[2] ?? m[3] ?? '');
      }
      text = text.replace(/\$\{([A-Z_][A-Z0-9_]*)\}/g, (whole, name: string) => constants.get(name) ?? whole);
      return text.replace(/\\'/g, "'").replace(/\\"/g, '"');
    })
    .join('\n');
}

/** The message as a pattern over source text: literal text, each `<…>` one `${…}` expression. */
function pattern(message: string): RegExp {
  const parts = message.split(/<[^<>]+>/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(parts.join('\\$\\{[^`\\n]+?\\}'));
}

const rows = tableRows();
const source = sourceText();

describe("the README's table of messages copied from Triton", () => {
  it('has rows, each with a Triton source file and what it was checked against', () => {
    expect(rows.length).toBeGreaterThanOrEqual(40);
    for (const row of rows) {
      expect(row.source, row.message).toMatch(/^(server|core|common) `[^`]+`/);
      expect(['2.73', 'source', 'not re-checked'], row.message).toContain(row.checked);
    }
    expect(new Set(rows.map((r) => r.message)).size).toBe(rows.length);
  });

  it.each(rows.map((r) => [r.message]))('the code produces %s', (message) => {
    expect(source).toMatch(pattern(message));
  });

  it('marks the messages that changed in Triton 2.73 as checked against 2.73', () => {
    const changed = [
      'request JSON size of <N> exceeds the maximum allowed value of <M>. Use --http-max-input-size to increase the limit.',
      "Failed to parse 'data' field: shape does not match true shape",
      "Invalid value for 'ready': expected a boolean",
      "expected <n> string elements for inference input '<input>' for model '<model>', got <m>",
    ];
    for (const message of changed) {
      expect(rows.find((r) => r.message === message)?.checked, message).toBe('2.73');
    }
  });

  it('matches placeholders to values only, not to literal text', () => {
    expect('`x ${a} y`').toMatch(pattern('x <v> y'));
    expect("'x z y'").not.toMatch(pattern('x <v> y'));
    expect('`request JSON size of ${size} exceeds`').not.toMatch(pattern('Request JSON size of <N> exceeds'));
  });
});
