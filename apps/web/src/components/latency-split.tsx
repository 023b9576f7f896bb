import type { Prediction } from '@/lib/types';

const PARTS = [
  ['decode', 'Decode', 'bg-sky-700'],
  ['preprocess', 'Resize + normalise', 'bg-violet-700'],
  ['infer', 'Inference (Triton)', 'bg-emerald-700'],
  ['postprocess', 'Softmax + ranking', 'bg-amber-600'],
] as const;

/** Where the time went: server-side steps as a stacked bar, plus the browser's round trip. */
export function LatencySplit({
  timings,
  roundTripMs,
}: {
  timings: Prediction['timings'];
  roundTripMs: number;
}) {
  const sum = PARTS.reduce((s, [k]) => s + timings[k], 0) || 1;
  return (
    <div className="mt-5">
      <h3 className="mb-2 font-semibold">Where the time went</h3>
      <div className="flex h-3 overflow-hidden rounded-full bg-stone-200" aria-hidden="true">
        {PARTS.map(([k, , color]) => (
          <div key={k} className={color} style={{ width: `${(timings[k] / sum) * 100}%` }} />
        ))}
      </div>
      <dl className="mt-2 grid grid-cols-1 gap-x-6 gap-y-1 text-sm sm:grid-cols-2" data-testid="timings">
        {PARTS.map(([k, label, color]) => (
          <div key={k} className="flex items-center gap-2">
            <span aria-hidden="true" className={`h-2.5 w-2.5 rounded-sm ${color}`} />
            <dt>{label}</dt>
            <dd className="ml-auto tabular-nums">{timings[k].toFixed(1)} ms</dd>
          </div>
        ))}
        <div className="flex items-center gap-2 font-medium">
          <dt>Server total</dt>
          <dd className="ml-auto tabular-nums">{timings.total.toFixed(1)} ms</dd>
        </div>
        <div className="flex items-center gap-2 font-medium">
          <dt>Round trip (incl. upload)</dt>
          <dd className="ml-auto tabular-nums">{roundTripMs.toFixed(0)} ms</dd>
        </div>
      </dl>
    </div>
  );
}
