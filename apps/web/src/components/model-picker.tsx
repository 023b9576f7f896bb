import { useId } from 'react';
import { COMPARE, PATH_TEXT, readyChoices, type ModelChoice } from '@/lib/compare';

/**
 * How the next photo is classified: one radio per way the server can run now (`GET /api/version`
 * lists the models; those it could not describe are not offered), in plain words. Under "Advanced":
 * the models' own names and paths, the ways that are not available, and the side-by-side comparison
 * (the same photo through every way in turn). Hidden while fewer than two ways are ready.
 */
export function ModelPicker({
  choices,
  value,
  onChange,
}: {
  choices: readonly ModelChoice[];
  value: string;
  onChange: (value: string) => void;
}) {
  const name = useId();
  const ready = readyChoices(choices);
  if (ready.length < 2) return null;
  const comparing = value === COMPARE;
  const fallback = ready.find((c) => c.default)?.name ?? ready[0]?.name ?? '';
  const unavailable = choices.filter((c) => !ready.includes(c));
  return (
    <fieldset data-testid="model-picker" className="rounded-xl border border-stone-200 bg-white p-4">
      <legend className="px-1 font-semibold">How to classify</legend>
      <div className="flex flex-col gap-2">
        {ready.map((c) => {
          const text = PATH_TEXT[c.path!];
          return (
            <label key={c.name} className="flex items-start gap-2 text-sm">
              <input
                type="radio"
                name={name}
                value={c.name}
                checked={value === c.name}
                disabled={comparing}
                onChange={() => onChange(c.name)}
                className="mt-0.5 accent-emerald-800"
              />
              <span>
                <span className="font-medium">{text.title}</span>
                {c.default && <span className="text-slate-600"> (default)</span>}
                <span className="block text-xs text-slate-600">
                  {text.hint}
                  {c.outOfDistribution === false &&
                    ' It cannot tell when a photo is unlike the food the model knows.'}
                </span>
              </span>
            </label>
          );
        })}
      </div>
      <details className="mt-3 text-sm" data-testid="picker-advanced" open={comparing || undefined}>
        <summary className="cursor-pointer font-medium text-emerald-900">Advanced</summary>
        <label className="mt-2 flex items-start gap-2">
          <input
            type="checkbox"
            checked={comparing}
            onChange={(e) => onChange(e.target.checked ? COMPARE : fallback)}
            className="mt-0.5 accent-emerald-800"
          />
          <span>
            <span className="font-medium">Compare every way side by side</span>
            <span className="block text-xs text-slate-600">
              The same photo through each of the {ready.length} ways in turn: verdicts and latencies.
            </span>
          </span>
        </label>
        <ul className="mt-2 space-y-1 text-xs text-slate-600" data-testid="picker-models">
          {ready.map((c) => (
            <li key={c.name}>
              {PATH_TEXT[c.path!].title}: Triton model <code>{c.name}</code> v{c.version} ({c.backend},{' '}
              {c.path} path)
            </li>
          ))}
          {unavailable.map((c) => (
            <li key={c.name}>
              Not available: <code>{c.name}</code> ({c.error ?? 'not described'})
            </li>
          ))}
        </ul>
      </details>
    </fieldset>
  );
}
