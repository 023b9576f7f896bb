import type { Ref } from 'react';
import type { Prediction } from '@/lib/types';

const STYLE = {
  likely: 'border-emerald-300 bg-emerald-50 text-emerald-950',
  unsure: 'border-slate-300 bg-slate-50 text-slate-900',
  unfamiliar: 'border-amber-400 bg-amber-50 text-amber-950',
} as const;

/**
 * The verdict of a prediction, as the gateway decided it: one headline in words ("Likely Seafood",
 * "Not sure", "This does not look like food the model knows") and why; for "not sure", the three
 * most likely classes, muted. No percentages here: the numbers are in the details below it.
 */
export function VerdictView({
  prediction,
  headingRef,
  describedBy,
}: {
  prediction: Prediction;
  headingRef?: Ref<HTMLHeadingElement>;
  describedBy?: string;
}) {
  const v = prediction.verdict;
  return (
    <div
      data-testid="verdict"
      data-kind={v.kind}
      data-reason={v.reason}
      className={`rounded-lg border p-3 ${STYLE[v.kind]}`}
    >
      <h2
        ref={headingRef}
        tabIndex={-1}
        data-testid="result-heading"
        aria-describedby={describedBy}
        className={`font-bold ${v.kind === 'likely' ? 'text-2xl' : 'text-xl'}`}
      >
        {v.headline}
      </h2>
      <p id={describedBy} className="mt-1 text-sm" data-testid="verdict-explanation">
        {v.explanation}
      </p>
      {v.kind === 'unsure' && v.candidates.length > 0 && (
        <div className="mt-2 text-sm text-slate-600">
          <span>Most likely first: </span>
          <ol className="inline" data-testid="candidates">
            {v.candidates.map((c, i) => (
              <li key={c.label} className="inline">
                {i > 0 && <span aria-hidden="true"> · </span>}
                {c.label}
              </li>
            ))}
          </ol>
        </div>
      )}
    </div>
  );
}
