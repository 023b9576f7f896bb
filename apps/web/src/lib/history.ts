/**
 * The session history of the classify page: the last predictions with a small thumbnail and the
 * feedback given on each, kept in `localStorage` so a reload keeps it (browser only; nothing leaves
 * the browser that was not already sent).
 */
import type { FeedbackKind, Prediction } from './types';

/** Feedback given on a prediction from this browser. */
export interface FeedbackMark {
  kind: FeedbackKind;
  /** The class a correction names. */
  label?: string;
  at: string;
}

/** One history entry. */
export interface HistoryEntry {
  prediction: Prediction;
  fileName: string;
  /** A small JPEG data URL of the photo ('' when it could not be drawn). */
  thumb: string;
  /** Browser-measured round trip, ms. */
  roundTripMs: number;
  feedback: FeedbackMark[];
}

export const HISTORY_KEY = 'gourmetgram.history.v1';
export const MAX_HISTORY = 12;

function isEntry(v: unknown): v is HistoryEntry {
  const e = v as HistoryEntry | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.fileName === 'string' &&
    typeof e.thumb === 'string' &&
    typeof e.roundTripMs === 'number' &&
    Array.isArray(e.feedback) &&
    typeof e.prediction?.requestId === 'string' &&
    typeof e.prediction.verdict?.kind === 'string' &&
    Array.isArray(e.prediction.top)
  );
}

/** The stored history, newest first (empty when there is none or it cannot be read). */
export function loadHistory(storage: Storage | undefined = globalThis.localStorage): HistoryEntry[] {
  try {
    const raw = storage?.getItem(HISTORY_KEY);
    const parsed: unknown = raw ? JSON.parse(raw) : [];
    return Array.isArray(parsed) ? parsed.filter(isEntry).slice(0, MAX_HISTORY) : [];
  } catch {
    return [];
  }
}

/** Stores the history (the newest {@link MAX_HISTORY}); drops thumbnails when storage is full. */
export function saveHistory(
  entries: readonly HistoryEntry[],
  storage: Storage | undefined = globalThis.localStorage,
): void {
  const kept = entries.slice(0, MAX_HISTORY);
  try {
    storage?.setItem(HISTORY_KEY, JSON.stringify(kept));
  } catch {
    try {
      storage?.setItem(HISTORY_KEY, JSON.stringify(kept.map((e) => ({ ...e, thumb: '' }))));
    } catch {
      // Storage off or full: the history lives for this page only.
    }
  }
}

/** `entries` with `mark` added to the entry of `requestId` (once per kind and label). */
export function withFeedback(
  entries: readonly HistoryEntry[],
  requestId: string,
  mark: FeedbackMark,
): HistoryEntry[] {
  return entries.map((e) =>
    e.prediction.requestId !== requestId ||
    e.feedback.some((f) => f.kind === mark.kind && f.label === mark.label)
      ? e
      : { ...e, feedback: [...e.feedback, mark] },
  );
}

/** Words for a mark, e.g. "Corrected to Rice". */
export function markText(mark: FeedbackMark): string {
  return mark.kind === 'confirm'
    ? 'Looks right'
    : mark.kind === 'flag'
      ? 'Flagged'
      : `Corrected to ${mark.label ?? '?'}`;
}
