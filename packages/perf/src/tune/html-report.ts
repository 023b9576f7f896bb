/**
 * The tuner's HTML report: one self-contained file (inline CSS and SVG, no script, no external
 * resource) with Model Analyzer's summary content: the summary sentence, a throughput-vs-latency
 * chart (one line per configuration over its concurrencies), a bar chart of each configuration's
 * best throughput, the ranking, every measurement, and the winning `config.pbtxt`. The winner is
 * highlighted in each.
 * @packageDocumentation
 */
import { describeSettings, instanceGroupLabel } from './search-space.js';
import type { TuneMeasurement } from './select.js';
import type { TuneResult } from './tuner.js';
import { constraintsText, summarySentence } from './results-table.js';

/** Escapes text for HTML (element content and attribute values). */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
  '#d62728',
];
const WINNER = '#76b900';

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

/** Round tick values from 0 to at least `max` (about `count` of them). */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * magnitude).find((s) => s >= raw) ?? 10 * magnitude;
  const ticks: number[] = [];
  for (let v = 0; v < max + step * 0.999; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

interface Frame {
  readonly width: number;
  readonly height: number;
  readonly left: number;
  readonly right: number;
  readonly top: number;
  readonly bottom: number;
}

/** The plot area's size; the legend's width is added on the right, sized for the longest name. */
const PLOT = { width: 560, height: 380, left: 70, top: 20, bottom: 50 };

/** A frame whose right margin fits a legend of `names` (11 px text, about 6.5 px a character). */
function frameFor(names: readonly string[]): Frame {
  const right = 50 + Math.ceil(6.5 * Math.max(10, ...names.map((n) => n.length)));
  return { ...PLOT, width: PLOT.width + right, right };
}

function axes(frame: Frame, xTicks: number[], yTicks: number[], xLabel: string, yLabel: string): string {
  const x0 = frame.left;
  const x1 = frame.width - frame.right;
  const y0 = frame.height - frame.bottom;
  const y1 = frame.top;
  const xMax = xTicks[xTicks.length - 1] ?? 1;
  const yMax = yTicks[yTicks.length - 1] ?? 1;
  const parts: string[] = [];
  for (const t of yTicks) {
    const y = y0 - (t / yMax) * (y0 - y1);
    parts.push(
      `<line class="grid" x1="${String(x0)}" x2="${String(x1)}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}"/>`,
      `<text class="tick" x="${String(x0 - 6)}" y="${(y + 4).toFixed(1)}" text-anchor="end">${escapeHtml(String(t))}</text>`,
    );
  }
  for (const t of xTicks) {
    const x = x0 + (t / xMax) * (x1 - x0);
    parts.push(
      `<line class="grid" x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${String(y0)}" y2="${String(y1)}"/>`,
      `<text class="tick" x="${x.toFixed(1)}" y="${String(y0 + 16)}" text-anchor="middle">${escapeHtml(String(t))}</text>`,
    );
  }
  parts.push(
    `<line class="axis" x1="${String(x0)}" x2="${String(x1)}" y1="${String(y0)}" y2="${String(y0)}"/>`,
    `<line class="axis" x1="${String(x0)}" x2="${String(x0)}" y1="${String(y0)}" y2="${String(y1)}"/>`,
    `<text class="label" x="${String((x0 + x1) / 2)}" y="${String(frame.height - 10)}" text-anchor="middle">${escapeHtml(xLabel)}</text>`,
    `<text class="label" transform="translate(16 ${String((y0 + y1) / 2)}) rotate(-90)" text-anchor="middle">${escapeHtml(yLabel)}</text>`,
  );
  return parts.join('\n');
}

/** SVG: throughput (y) against the chosen latency (x), one line per configuration over concurrency. */
export function latencyThroughputChart(result: TuneResult): string {
  const metric = result.options.latencyMetric;
  const points = result.measurements.filter(
    (m) => Number.isFinite(m.latencyMs[metric]) && Number.isFinite(m.throughput),
  );
  const f = frameFor([...new Set(points.map((m) => m.variant))]);
  const budget = result.options.latencyBudgetMs;
  const xTicks = niceTicks(Math.max(budget ?? 0, ...points.map((m) => m.latencyMs[metric]), 1));
  const yTicks = niceTicks(Math.max(...points.map((m) => m.throughput), 1));
  const xMax = xTicks[xTicks.length - 1] ?? 1;
  const yMax = yTicks[yTicks.length - 1] ?? 1;
  const sx = (v: number): number => f.left + (v / xMax) * (f.width - f.left - f.right);
  const sy = (v: number): number => f.height - f.bottom - (v / yMax) * (f.height - f.bottom - f.top);
  const winner = result.best?.variant;
  const parts = [axes(f, xTicks, yTicks, `${metric} latency (ms)`, 'throughput (infer/sec)')];
  if (budget !== undefined) {
    const x = sx(budget).toFixed(1);
    parts.push(
      `<line class="budget" x1="${x}" x2="${x}" y1="${String(f.top)}" y2="${String(f.height - f.bottom)}"/>`,
      `<text class="tick" x="${x}" y="${String(f.top - 6)}" text-anchor="middle">budget ${escapeHtml(String(budget))} ms</text>`,
    );
  }
  const variants = [...new Set(points.map((m) => m.variant))];
  const legend: string[] = [];
  variants.forEach((variant, i) => {
    const color = variant === winner ? WINNER : (PALETTE[i % PALETTE.length] ?? '#333');
    const series = points.filter((m) => m.variant === variant).sort((a, b) => a.concurrency - b.concurrency);
    const cls = variant === winner ? 'series winner' : 'series';
    const path = series
      .map((m) => `${sx(m.latencyMs[metric]).toFixed(1)},${sy(m.throughput).toFixed(1)}`)
      .join(' ');
    parts.push(`<g class="${cls}" data-config="${escapeHtml(variant)}">`);
    parts.push(`<polyline points="${path}" fill="none" stroke="${color}"/>`);
    for (const m of series) {
      const best = m === result.best;
      parts.push(
        `<circle cx="${sx(m.latencyMs[metric]).toFixed(1)}" cy="${sy(m.throughput).toFixed(1)}" r="${best ? '7' : '3.5'}" fill="${best ? '#fff' : color}" stroke="${color}"${best ? ' stroke-width="3"' : ''}><title>${escapeHtml(`${m.variant}, concurrency ${String(m.concurrency)}: ${fixed(m.throughput, 1)} infer/sec, ${metric} ${fixed(m.latencyMs[metric], 2)} ms${m.satisfiesConstraints ? '' : ' (violates constraints)'}`)}</title></circle>`,
      );
    }
    parts.push('</g>');
    const y = f.top + 14 + i * 18;
    const lx = f.width - f.right + 16;
    legend.push(
      `<line x1="${String(lx)}" x2="${String(lx + 18)}" y1="${String(y - 4)}" y2="${String(y - 4)}" stroke="${color}" stroke-width="${variant === winner ? '4' : '2'}"/>`,
      `<text class="legend${variant === winner ? ' winner' : ''}" x="${String(lx + 24)}" y="${String(y)}">${escapeHtml(variant)}</text>`,
    );
  });
  return `<svg id="chart-latency-throughput" viewBox="0 0 ${String(f.width)} ${String(f.height)}" role="img" aria-label="throughput versus ${metric} latency per configuration">\n${parts.join('\n')}\n${legend.join('\n')}\n</svg>`;
}

/** SVG: each configuration's best throughput under the constraints (grey: none met them). */
export function bestThroughputChart(result: TuneResult): string {
  const rows = result.ranking;
  const barHeight = 22;
  const gap = 8;
  const left = 24 + Math.ceil(7 * Math.max(10, ...rows.map((r) => r.variant.length)));
  const right = rows.some((r) => r.best === undefined) ? 300 : 130;
  const width = left + 420 + right;
  const height = 40 + rows.length * (barHeight + gap) + 30;
  const max = Math.max(1, ...rows.map((r) => r.best?.throughput ?? r.maxThroughput));
  const ticks = niceTicks(max);
  const tMax = ticks[ticks.length - 1] ?? 1;
  const sx = (v: number): number => left + (v / tMax) * (width - left - right);
  const parts: string[] = [];
  const bottom = 20 + rows.length * (barHeight + gap);
  for (const t of ticks) {
    const x = sx(t).toFixed(1);
    parts.push(
      `<line class="grid" x1="${x}" x2="${x}" y1="10" y2="${String(bottom)}"/>`,
      `<text class="tick" x="${x}" y="${String(bottom + 16)}" text-anchor="middle">${escapeHtml(String(t))}</text>`,
    );
  }
  rows.forEach((r, i) => {
    const y = 20 + i * (barHeight + gap);
    const value = r.best?.throughput ?? r.maxThroughput;
    const isWinner = result.best !== undefined && r.variant === result.best.variant;
    const cls = isWinner ? 'bar winner' : r.best === undefined ? 'bar violates' : 'bar';
    const label =
      r.best === undefined
        ? `${fixed(value, 1)} (no measurement meets the constraints)`
        : `${fixed(value, 1)} @ c=${String(r.best.concurrency)}`;
    parts.push(
      `<text class="tick${isWinner ? ' winner' : ''}" x="${String(left - 8)}" y="${String(y + 15)}" text-anchor="end">${escapeHtml(r.variant)}</text>`,
      `<rect class="${cls}" data-config="${escapeHtml(r.variant)}" x="${String(left)}" y="${String(y)}" width="${Math.max(1, sx(value) - left).toFixed(1)}" height="${String(barHeight)}"><title>${escapeHtml(`${r.variant}: ${describeSettings(r.settings)}`)}</title></rect>`,
      `<text class="tick" x="${(sx(value) + 6).toFixed(1)}" y="${String(y + 15)}">${escapeHtml(label)}</text>`,
    );
  });
  parts.push(
    `<text class="label" x="${String((left + width - right) / 2)}" y="${String(height - 4)}" text-anchor="middle">best throughput under the constraints (infer/sec)</text>`,
  );
  return `<svg id="chart-best-throughput" viewBox="0 0 ${String(width)} ${String(height)}" role="img" aria-label="best throughput per configuration">\n${parts.join('\n')}\n</svg>`;
}

function htmlTable(
  header: readonly string[],
  rows: readonly { cells: readonly string[]; winner: boolean }[],
): string {
  const head = `<tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>`;
  const body = rows
    .map(
      (r) =>
        `<tr${r.winner ? ' class="winner"' : ''}>${r.cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<table>\n<thead>${head}</thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
}

function measurementRow(m: TuneMeasurement, metric: TuneResult['options']['latencyMetric']): string[] {
  return [
    m.variant,
    String(m.concurrency),
    fixed(m.throughput, 1),
    fixed(m.latencyMs[metric], 2),
    fixed(m.latencyMs.avg, 2),
    fixed(m.serverQueueMs, 2),
    fixed(m.serverComputeInputMs + m.serverComputeInferMs + m.serverComputeOutputMs, 2),
    fixed(m.clientSendRecvMs, 3),
    fixed(m.generatorCpuUsPerRequest, 1),
    m.stable ? 'Yes' : 'No',
    m.satisfiesConstraints ? 'Yes' : 'No',
  ];
}

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
.summary { border-left: 6px solid ${WINNER}; background: #f3f9e6; padding: 0.8em 1em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.winner td { background: #e4f3c8; font-weight: bold; }
svg { width: 100%; height: auto; background: #fff; border: 1px solid #ddd; }
.grid { stroke: #eee; } .axis { stroke: #444; }
.tick { font-size: 11px; fill: #444; } .label { font-size: 12px; fill: #222; }
.legend { font-size: 11px; fill: #222; } .winner { font-weight: bold; }
.series polyline { stroke-width: 1.5; opacity: 0.75; }
.series.winner polyline { stroke-width: 4; opacity: 1; }
.budget { stroke: #d62728; stroke-dasharray: 6 4; stroke-width: 1.5; }
.bar { fill: #7aa6d6; } .bar.winner { fill: ${WINNER}; } .bar.violates { fill: #ccc; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 1em; }
dt { font-weight: bold; }
`;

/**
 * The report as one HTML document. `bestConfigPbtxt`: the winner's `config.pbtxt` text, shown at
 * the end (omit when there is no winner or it could not be written).
 */
export function tuneHtmlReport(result: TuneResult, bestConfigPbtxt?: string): string {
  const o = result.options;
  const metric = o.latencyMetric;
  const title = `model-analyzer-ts report: ${result.modelName}`;
  const meta: [string, string][] = [
    ['Model', result.modelName],
    ['Server', `${o.url} (${o.protocol})`],
    ['Started', new Date(result.startedAtMs).toISOString()],
    ['Duration', `${(result.durationMs / 1000).toFixed(1)} s`],
    ['Constraints', constraintsText(result)],
    [
      'Configurations',
      `${String(result.space.variants.length)} (${String(result.space.skipped.length)} combinations skipped as invalid)`,
    ],
    ['Concurrency', result.space.concurrency.join(', ')],
    ['Measurement interval', `${String(o.perf.measurementIntervalMs ?? 5000)} ms`],
  ];
  if (result.aborted) meta.push(['Note', 'the run was aborted; the measurements taken so far are reported']);
  if (result.restoreError !== undefined) meta.push(['Restore failed', result.restoreError]);

  const ranking = htmlTable(
    [
      'Model Config Path',
      'Configuration',
      'Instance Group',
      'Max Batch Size',
      'Best Throughput (infer/sec)',
      'Concurrency',
      `${metric} Latency (ms)`,
      'Satisfies Constraints',
    ],
    result.ranking.map((r) => ({
      winner: result.best?.variant === r.variant,
      cells: [
        r.variant,
        describeSettings(r.settings),
        instanceGroupLabel(r.settings),
        String(r.settings.maxBatchSize),
        fixed(r.best?.throughput ?? r.maxThroughput, 1),
        r.best === undefined ? '-' : String(r.best.concurrency),
        r.best === undefined ? '-' : fixed(r.best.latencyMs[metric], 2),
        r.best === undefined ? 'No' : 'Yes',
      ],
    })),
  );
  const all = htmlTable(
    [
      'Model Config Path',
      'Concurrency',
      'Throughput (infer/sec)',
      `${metric} Latency (ms)`,
      'Avg Latency (ms)',
      'Server Queue (ms)',
      'Server Compute (ms)',
      'Client Send/Recv (ms)',
      'Generator CPU/Request (us)',
      'Stable',
      'Satisfies Constraints',
    ],
    result.measurements.map((m) => ({ winner: m === result.best, cells: measurementRow(m, metric) })),
  );
  const problems = [
    ...result.configs
      .filter((c) => c.error !== undefined)
      .map(
        (c) => `${c.variant.name} (${describeSettings(c.variant.settings)}): not measured: ${c.error ?? ''}`,
      ),
    ...result.configs
      .filter((c) => c.skippedConcurrency.length > 0)
      .map(
        (c) =>
          `${c.variant.name}: concurrency ${c.skippedConcurrency.join(', ')} skipped (over the latency budget)`,
      ),
    ...result.space.skipped.map((s) => `skipped: ${describeSettings(s.settings)}: ${s.reason}`),
  ];
  const sections = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="summary" id="summary">${escapeHtml(summarySentence(result))}</p>`,
    `<dl>${meta.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('')}</dl>`,
    `<h2>Throughput vs ${escapeHtml(metric)} latency</h2>`,
    '<p>One line per configuration over its concurrencies; the winner is the thick green line and its measurement the ringed point.</p>',
    latencyThroughputChart(result),
    '<h2>Best throughput per configuration</h2>',
    bestThroughputChart(result),
    '<h2>Configurations</h2>',
    ranking,
    '<h2>Measurements</h2>',
    all,
  ];
  if (problems.length > 0) {
    sections.push('<h2>Notes</h2>', `<ul>${problems.map((p) => `<li>${escapeHtml(p)}</li>`).join('')}</ul>`);
  }
  if (bestConfigPbtxt !== undefined && result.best !== undefined) {
    sections.push(
      `<h2>Winning configuration: ${escapeHtml(result.best.variant)}</h2>`,
      `<pre id="best-config">${escapeHtml(bestConfigPbtxt)}</pre>`,
    );
  }
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${sections.join('\n')}
</body>
</html>
`;
}
