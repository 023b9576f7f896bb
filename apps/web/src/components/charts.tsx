/** Small dependency-free SVG charts, each with its data as a table for screen readers and keyboard users. */

export interface Series {
  name: string;
  color: string;
  values: number[];
}

const W = 600;
const H = 180;
const PAD = { l: 44, r: 8, t: 10, b: 22 };

function niceMax(v: number) {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export function LineChart({
  title,
  series,
  labels,
  unit,
}: {
  title: string;
  series: Series[];
  labels: string[];
  unit: string;
}) {
  const n = Math.max(...series.map((s) => s.values.length), 2);
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const x = (i: number) => PAD.l + (i / (n - 1)) * (W - PAD.l - PAD.r);
  const y = (v: number) => H - PAD.b - (v / max) * (H - PAD.t - PAD.b);
  return (
    <figure className="rounded-xl border border-stone-200 bg-white p-4">
      <figcaption className="mb-2 font-semibold">{title}</figcaption>
      <ul className="mb-2 flex flex-wrap gap-4 text-sm" aria-hidden="true">
        {series.map((s) => (
          <li key={s.name} className="flex items-center gap-1.5">
            <span className="inline-block h-2.5 w-4 rounded-sm" style={{ background: s.color }} />
            {s.name}
          </li>
        ))}
      </ul>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        className="h-auto w-full"
        role="img"
        aria-label={`${title} chart; data in the table below`}
      >
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line
              x1={PAD.l}
              x2={W - PAD.r}
              y1={y(max * f)}
              y2={y(max * f)}
              stroke="#d6d3d1"
              strokeDasharray={f ? '4 4' : undefined}
            />
            <text x={PAD.l - 6} y={y(max * f) + 4} fontSize="11" textAnchor="end" fill="#334155">
              {+(max * f).toFixed(2)}
            </text>
          </g>
        ))}
        <text x={PAD.l} y={H - 4} fontSize="11" fill="#334155">
          {labels[0] ?? ''}
        </text>
        <text x={W - PAD.r} y={H - 4} fontSize="11" fill="#334155" textAnchor="end">
          {labels.at(-1) ?? ''} ({unit})
        </text>
        {series.map((s) =>
          s.values.length > 1 ? (
            <polyline
              key={s.name}
              fill="none"
              stroke={s.color}
              strokeWidth="2.5"
              strokeLinejoin="round"
              points={s.values.map((v, i) => `${x(i)},${y(v)}`).join(' ')}
            />
          ) : s.values.length === 1 ? (
            <circle key={s.name} cx={x(0)} cy={y(s.values[0] ?? 0)} r="3" fill={s.color} />
          ) : null,
        )}
      </svg>
      <details className="mt-2 text-sm">
        <summary className="cursor-pointer text-slate-700">Show data</summary>
        <table className="mt-2 w-full text-left tabular-nums">
          <thead>
            <tr>
              <th scope="col">Time</th>
              {series.map((s) => (
                <th key={s.name} scope="col">
                  {s.name} ({unit})
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {labels.map((l, i) => (
              <tr key={`${l}-${i}`}>
                <th scope="row" className="font-normal">
                  {l}
                </th>
                {series.map((s) => (
                  <td key={s.name}>{(s.values[i] ?? 0).toFixed(2)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

export function BarChart({
  title,
  bars,
  xLabel,
}: {
  title: string;
  bars: { label: string; value: number }[];
  xLabel: string;
}) {
  const max = niceMax(Math.max(0, ...bars.map((b) => b.value)));
  const slot = (W - PAD.l - PAD.r) / Math.max(bars.length, 1);
  const y = (v: number) => H - PAD.b - (v / max) * (H - PAD.t - PAD.b);
  return (
    <figure className="rounded-xl border border-stone-200 bg-white p-4">
      <figcaption className="mb-2 font-semibold">{title}</figcaption>
      {bars.length === 0 ? (
        <p className="text-sm text-slate-700">No executions yet.</p>
      ) : (
        <svg
          viewBox={`0 0 ${W} ${H}`}
          className="h-auto w-full"
          role="img"
          aria-label={`${title} chart; data in the table below`}
        >
          {[0, 0.5, 1].map((f) => (
            <g key={f}>
              <line x1={PAD.l} x2={W - PAD.r} y1={y(max * f)} y2={y(max * f)} stroke="#d6d3d1" />
              <text x={PAD.l - 6} y={y(max * f) + 4} fontSize="11" textAnchor="end" fill="#334155">
                {+(max * f).toFixed(1)}
              </text>
            </g>
          ))}
          {bars.map((b, i) => (
            <g key={b.label}>
              <rect
                x={PAD.l + i * slot + slot * 0.15}
                width={slot * 0.7}
                y={y(b.value)}
                height={H - PAD.b - y(b.value)}
                fill="#047857"
                rx="3"
              />
              <text
                x={PAD.l + i * slot + slot / 2}
                y={H - 6}
                fontSize="11"
                textAnchor="middle"
                fill="#334155"
              >
                {b.label}
              </text>
            </g>
          ))}
        </svg>
      )}
      <details className="mt-2 text-sm">
        <summary className="cursor-pointer text-slate-700">Show data</summary>
        <table className="mt-2 w-full text-left tabular-nums">
          <thead>
            <tr>
              <th scope="col">{xLabel}</th>
              <th scope="col">Executions</th>
            </tr>
          </thead>
          <tbody>
            {bars.map((b) => (
              <tr key={b.label}>
                <th scope="row" className="font-normal">
                  {b.label}
                </th>
                <td>{b.value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
