import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { escapeHtml, niceTicks, tuneHtmlReport } from '../src/tune/html-report.js';
import { csvField, TUNE_CSV_COLUMNS, tuneCsv } from '../src/tune/results-csv.js';
import { formatTuneTable, summarySentence } from '../src/tune/results-table.js';
import { bestConfigPbtxt, writeTuneOutputs } from '../src/tune/write-outputs.js';
import { sampleResult } from './helpers/tune-fixtures.js';

describe('tuner outputs', () => {
  it("CSV: Model Analyzer's column names first, one row per measurement", () => {
    const r = sampleResult();
    const lines = tuneCsv('m', r.measurements).trimEnd().split('\n');
    expect(lines[0]).toBe(TUNE_CSV_COLUMNS.join(','));
    expect(
      lines[0]?.startsWith(
        'Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,Dynamic Batching,Preferred Batch Sizes,Max Queue Delay (us),Intra Op Thread Count,Satisfies Constraints,Throughput (infer/sec),p50 Latency (ms),p90 Latency (ms),p95 Latency (ms),p99 Latency (ms),Avg Latency (ms)',
      ),
    ).toBe(true);
    expect(lines).toHaveLength(1 + r.measurements.length);
    const best = r.best;
    const row = lines.find((l) => l.startsWith(`m,1,8,${best?.variant ?? '?'},`))?.split(',');
    const col = (name: (typeof TUNE_CSV_COLUMNS)[number]): string | undefined =>
      row?.[TUNE_CSV_COLUMNS.indexOf(name)];
    expect(col('Instance Group')).toBe('2:CPU');
    expect(col('Dynamic Batching')).toBe('Enabled');
    expect(col('Throughput (infer/sec)')).toBe('200.0');
    expect(col('Satisfies Constraints')).toBe('Yes');
    expect(csvField('a,"b"')).toBe('"a,""b"""');
  });

  it('console table marks the winner and the summary names it against the default', () => {
    const r = sampleResult();
    const table = formatTuneTable(r);
    expect(table.split('\n')[0]).toMatch(
      /^Model Config Path\s+Instance Group\s+Max Batch Size\s+Dynamic Batching\s+Concurrency\s+Throughput \(infer\/sec\)\s+p99 Latency \(ms\)/,
    );
    const starred = table.split('\n').filter((l) => l.startsWith('*'));
    expect(starred).toHaveLength(1);
    expect(starred[0]).toMatch(
      new RegExp(`^\\*${r.best?.variant ?? '?'}\\s+2:CPU\\s+4\\s+Enabled\\s+8\\s+200\\.0`),
    );
    expect(summarySentence(r)).toBe(
      `In 8 measurements across 4 configurations, ${r.best?.variant ?? '?'} (2 CPU instances, max batch 4, dynamic batching) delivers maximum throughput under the given constraints (none): 200.0 infer/sec at concurrency 8, p99 latency 42.00 ms. That is 8.00x the default configuration's 25.0 infer/sec.`,
    );
    const none = sampleResult({ latencyBudgetMs: 1 });
    expect(none.best).toBeUndefined();
    expect(summarySentence(none)).toMatch(
      /no configuration satisfies the constraints \(p99 latency <= 1 ms\)/,
    );
    const unstable = sampleResult();
    const shaky = {
      ...unstable,
      best: undefined,
      measurements: unstable.measurements.map((m) => ({ ...m, stable: false })),
    };
    expect(summarySentence(shaky)).toMatch(
      /no configuration satisfies the constraints \(none\) with a stable measurement \(--allow-unstable lets unstable ones win\)\.$/,
    );
  });

  it('HTML: self-contained, both charts with one line/bar per configuration, the winner highlighted, the pbtxt', () => {
    const r = sampleResult({ latencyBudgetMs: 100 });
    const pbtxt = bestConfigPbtxt(r);
    const html = tuneHtmlReport(r, pbtxt);
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    // Nothing external and nothing executable.
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\bsrc=|\bhref=|https?:|@import|url\(/i);
    const chart1 = /<svg id="chart-latency-throughput"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? '';
    const chart2 = /<svg id="chart-best-throughput"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? '';
    expect(chart1.match(/<polyline /g)).toHaveLength(4);
    expect(chart1.match(/<circle /g)).toHaveLength(8);
    expect(chart1).toContain(`<g class="series winner" data-config="${r.best?.variant ?? '?'}">`);
    expect(chart1.match(/class="series winner"/g)).toHaveLength(1);
    expect(chart1).toContain('class="budget"');
    expect(chart2.match(/<rect /g)).toHaveLength(4);
    expect(chart2).toContain(`<rect class="bar winner" data-config="${r.best?.variant ?? '?'}"`);
    expect(html).toContain(`<p class="summary" id="summary">${escapeHtml(summarySentence(r))}</p>`);
    expect(html.match(/<tr class="winner">/g)).toHaveLength(2); // ranking row + measurement row
    expect(html).toContain(`<pre id="best-config">${escapeHtml(pbtxt ?? '')}</pre>`);
    expect(pbtxt).toContain('dynamic_batching { }');
    expect(pbtxt).toMatch(/instance_group \[\n {2}\{\n {4}kind: KIND_CPU\n {4}count: 2\n {2}\}\n\]/);
  });

  it('escapes names in the HTML and has round axis ticks', () => {
    const r = sampleResult();
    const evil = { ...r, modelName: '<b>&"x' };
    const html = tuneHtmlReport(evil);
    expect(html).toContain('&lt;b&gt;&amp;&quot;x');
    expect(html).not.toContain('<b>&"x');
    expect(niceTicks(200)).toEqual([0, 50, 100, 150, 200]);
    expect(niceTicks(42)).toEqual([0, 10, 20, 30, 40, 50]);
    expect(niceTicks(0)).toEqual([0, 1]);
  });

  it('writes report.html, results.csv and best/config.pbtxt; no pbtxt without a winner', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tune-out-'));
    try {
      const files = await writeTuneOutputs(sampleResult(), dir);
      expect(files.bestConfig).toBe(join(dir, 'best', 'config.pbtxt'));
      expect(await readFile(join(dir, 'best', 'config.pbtxt'), 'utf8')).toMatch(
        /^name: "m"\nbackend: "identity"\nmax_batch_size: 4\n/,
      );
      expect(await readFile(join(dir, 'results.csv'), 'utf8')).toMatch(/^Model,Batch,Concurrency,/);
      expect(await readFile(join(dir, 'report.html'), 'utf8')).toContain('chart-latency-throughput');
      const again = await writeTuneOutputs(sampleResult({ latencyBudgetMs: 1 }), dir);
      expect(again.bestConfig).toBeUndefined();
      expect(again.bestConfigError).toBe('no configuration satisfies the constraints');
      await expect(stat(join(dir, 'best', 'config.pbtxt'))).rejects.toThrow(/ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
