'use client';

import { useState } from 'react';
import type { ClassProbability } from '@/lib/types';

const SHOWN = 5;

function pct(p: number) {
  return Math.round(p * 1000) / 10;
}

/**
 * Top-k probabilities as meters (role="meter" with ARIA values), all classes on request. The top bar
 * is coloured only when the verdict names that class (`highlightTop`).
 */
export function ProbabilityBars({
  top,
  highlightTop = false,
}: {
  top: ClassProbability[];
  highlightTop?: boolean;
}) {
  const [all, setAll] = useState(false);
  const rows = all ? top : top.slice(0, SHOWN);
  return (
    <div className="mt-3">
      <h3 className="mb-2 font-semibold">
        {top.length > 1 ? 'Probability of each category' : 'Probability'}
      </h3>
      <ul className="space-y-2" data-testid="bars">
        {rows.map((t, i) => {
          const v = pct(t.probability);
          const id = `bar-${i}`;
          return (
            <li
              key={t.label}
              className="grid grid-cols-[8.5rem_1fr_3.5rem] items-center gap-2 text-sm sm:grid-cols-[10rem_1fr_3.5rem]"
            >
              <span id={id} className={`truncate ${i === 0 ? 'font-semibold' : ''}`}>
                {t.label}
              </span>
              <div
                role="meter"
                aria-labelledby={id}
                aria-valuemin={0}
                aria-valuemax={100}
                aria-valuenow={v}
                aria-valuetext={`${v}%`}
                className="h-3 overflow-hidden rounded-full bg-stone-200"
              >
                <div
                  className={`h-full rounded-full ${i === 0 && highlightTop ? 'bg-emerald-700' : 'bg-slate-500'}`}
                  style={{ width: `${Math.max(v, 0.5)}%` }}
                />
              </div>
              <span className="text-right tabular-nums">{v.toFixed(1)}%</span>
            </li>
          );
        })}
      </ul>
      {top.length > SHOWN && (
        <button
          type="button"
          aria-expanded={all}
          onClick={() => setAll((a) => !a)}
          className="mt-2 text-sm font-medium text-emerald-900 underline underline-offset-4"
        >
          {all ? `Show top ${SHOWN}` : `Show all ${top.length} categories`}
        </button>
      )}
    </div>
  );
}
