'use client';

import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import { FOOD11_CLASSES } from '@gourmetgram/food-model/contract';
import { markText, type FeedbackMark } from '@/lib/history';
import type { ApiError, FeedbackKind } from '@/lib/types';

/**
 * Feedback a labelling person can use, stored with the upload by prediction id: "Looks right" (when
 * the verdict names a class), "Flag", or the right class ("Save correction"; the list starts at the
 * model's top class). The same event sent twice is stored once (the gateway answers 200); what was
 * saved is shown here and in the session history.
 */
export function FeedbackForm({
  predictionId,
  predicted,
  claimed,
  labels,
  marks,
  onSaved,
}: {
  predictionId: string;
  /** The model's top class: the correction list starts there. */
  predicted: string;
  /** The class the verdict names (`likely`), else null: "Looks right" confirms it. */
  claimed: string | null;
  labels: string[];
  /** Feedback already given on this prediction from this browser. */
  marks: readonly FeedbackMark[];
  onSaved: (mark: FeedbackMark) => void;
}) {
  // The model's labels when the gateway knows them, else the Food-11 classes of the model contract.
  const options: readonly string[] = labels.length ? labels : FOOD11_CLASSES;
  const [label, setLabel] = useState(options.includes(predicted) ? predicted : (options[0] ?? ''));
  const [status, setStatus] = useState<{ ok: boolean; text: string } | null>(null);
  const [sending, setSending] = useState(false);
  const selectId = useId();

  // Buttons are never `disabled` while sending: disabling the focused button would drop keyboard
  // focus to the page; repeated activations are ignored instead.
  const send = async (kind: FeedbackKind, correctLabel?: string) => {
    if (sending) return;
    setSending(true);
    const mark: FeedbackMark = {
      kind,
      ...(correctLabel !== undefined ? { label: correctLabel } : {}),
      at: new Date().toISOString(),
    };
    try {
      const res = await fetch('/api/feedback', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ predictionId, kind, ...(correctLabel !== undefined ? { correctLabel } : {}) }),
      });
      if (res.ok) {
        onSaved(mark);
        const what =
          kind === 'confirm'
            ? 'looks right'
            : kind === 'flag'
              ? 'flagged for review'
              : `corrected to ${correctLabel ?? ''}`;
        setStatus({
          ok: true,
          text: res.status === 200 ? `Already saved: ${what} (kept once).` : `Thanks — saved: ${what}.`,
        });
      } else {
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
    if (label) void send('correction', label);
  };

  return (
    <form
      onSubmit={onCorrect}
      className="mt-5 rounded-lg bg-stone-50 p-3"
      aria-labelledby={`${selectId}-h`}
      data-testid="feedback"
    >
      <h3 id={`${selectId}-h`} className="font-semibold">
        Is this right?
      </h3>
      <div className="mt-2 flex flex-wrap items-end gap-2">
        {claimed !== null && (
          <button
            type="button"
            aria-disabled={sending}
            onClick={() => void send('confirm')}
            className="rounded-md border border-emerald-800 bg-white px-3 py-2 text-sm font-medium text-emerald-900 aria-disabled:opacity-60"
          >
            Looks right
          </button>
        )}
        <button
          type="button"
          aria-disabled={sending}
          onClick={() => void send('flag')}
          className="rounded-md border border-slate-700 bg-white px-3 py-2 text-sm font-medium aria-disabled:opacity-60"
        >
          Flag
        </button>
        <div className="flex flex-col">
          <label htmlFor={selectId} className="text-sm">
            Right category
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
      {marks.length > 0 && (
        <p className="mt-2 text-sm text-slate-700" data-testid="feedback-marks">
          Saved from this browser: {marks.map(markText).join(', ')}.
        </p>
      )}
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
