'use client';

import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import type { ApiError } from '@/lib/types';

const FOOD11 = [
  'Bread',
  'Dairy product',
  'Dessert',
  'Egg',
  'Fried food',
  'Meat',
  'Noodles/Pasta',
  'Rice',
  'Seafood',
  'Soup',
  'Vegetable/Fruit',
];

/** Flag a prediction or give the correct label; stored with the upload by prediction id. */
export function FeedbackForm({
  predictionId,
  predicted,
  suggested,
  labels,
}: {
  predictionId: string;
  predicted: string;
  /** Preselected correction: the runner-up class. */
  suggested?: string | undefined;
  labels: string[];
}) {
  const options = (labels.length ? labels : FOOD11).filter((l) => l !== predicted);
  const [label, setLabel] = useState(
    suggested && options.includes(suggested) ? suggested : (options[0] ?? ''),
  );
  const [status, setStatus] = useState<{ ok: boolean; text: string } | null>(null);
  const [sending, setSending] = useState(false);
  const selectId = useId();

  // Buttons are never `disabled` while sending: disabling the focused button would drop keyboard
  // focus to the page; repeated activations are ignored instead.
  const send = async (body: Record<string, string>, done: string) => {
    if (sending) return;
    setSending(true);
    try {
      const res = await fetch('/api/feedback', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ predictionId, ...body }),
      });
      if (res.ok) setStatus({ ok: true, text: done });
      else {
        const e = (await res.json().catch(() => null)) as ApiError | null;
        setStatus({ ok: false, text: e?.error.message ?? `Could not save feedback (HTTP ${res.status}).` });
      }
    } catch {
      setStatus({ ok: false, text: 'Could not save feedback: GourmetGram is not reachable.' });
    } finally {
      setSending(false);
    }
  };

  const onCorrect = (e: FormEvent) => {
    e.preventDefault();
    if (!label) return;
    void send({ kind: 'correction', correctLabel: label }, `Thanks — saved “${label}” as the correct label.`);
  };

  return (
    <form onSubmit={onCorrect} className="mt-5 rounded-lg bg-stone-50 p-3" aria-labelledby={`${selectId}-h`}>
      <h3 id={`${selectId}-h`} className="font-semibold">
        Is this wrong?
      </h3>
      <div className="mt-2 flex flex-wrap items-end gap-2">
        <button
          type="button"
          aria-disabled={sending}
          onClick={() => void send({ kind: 'flag' }, 'Thanks — flagged for review.')}
          className="rounded-md border border-slate-700 bg-white px-3 py-2 text-sm font-medium aria-disabled:opacity-60"
        >
          Flag this prediction
        </button>
        <div className="flex flex-col">
          <label htmlFor={selectId} className="text-sm">
            Correct category
          </label>
          <select
            id={selectId}
            value={label}
            onChange={(e) => setLabel(e.target.value)}
            className="rounded-md border border-slate-500 bg-white px-2 py-2 text-sm"
          >
            {options.map((l) => (
              <option key={l}>{l}</option>
            ))}
          </select>
        </div>
        <button
          type="submit"
          aria-disabled={sending || !label}
          className="rounded-md bg-slate-800 px-3 py-2 text-sm font-medium text-white aria-disabled:opacity-60"
        >
          Save correction
        </button>
      </div>
      <p
        role="status"
        className={`mt-2 min-h-5 text-sm ${status?.ok === false ? 'text-red-800' : 'text-emerald-900'}`}
        data-testid="feedback-status"
      >
        {status?.text}
      </p>
    </form>
  );
}
