'use client';

import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { ChangeEvent, DragEvent } from 'react';
import type { Example } from '@/lib/gallery';
import { modelsToRun, PATH_TEXT, selectionOf, type Measured, type ModelChoice } from '@/lib/compare';
import { prepareUpload, thumbnail, type Prepared } from '@/lib/downscale';
import {
  loadHistory,
  markText,
  MAX_HISTORY,
  saveHistory,
  withFeedback,
  type FeedbackMark,
  type HistoryEntry,
} from '@/lib/history';
import type { ApiError, Prediction } from '@/lib/types';
import { CameraPanel } from './camera-panel';
import { HealthBadge } from './health-badge';
import { FeedbackForm } from './feedback-form';
import { LatencySplit } from './latency-split';
import { ModelPicker } from './model-picker';
import { PathComparison } from './path-comparison';
import { ProbabilityBars } from './probability-bars';
import { StreamedCaption } from './streamed-caption';
import { VerdictView } from './verdict-view';

/**
 * What went wrong, for people, naming the file: a title per stable error code; the server's message
 * adds the detail.
 */
const ERROR_TITLES: Record<string, (name: string) => string> = {
  FILE_TOO_LARGE: (n) => `“${n}” is too large.`,
  UNSUPPORTED_MEDIA_TYPE: (n) => `“${n}” is not a photo we can read.`,
  CORRUPT_IMAGE: (n) => `“${n}” is damaged or incomplete.`,
  TOO_MANY_PIXELS: (n) => `“${n}” has too many pixels.`,
  IMAGE_TOO_SMALL: (n) => `“${n}” is too small to classify.`,
  IMAGE_UNIFORM: (n) => `“${n}” is a single flat colour.`,
  EMPTY_FILE: (n) => `“${n}” is empty.`,
  MISSING_FILE: () => 'No photo was sent.',
  INFERENCE_UNAVAILABLE: (n) => `Could not classify “${n}”: the classifier is not reachable right now.`,
  MODEL_UNAVAILABLE: (n) => `Could not classify “${n}”: the food model is not loaded right now.`,
  INFERENCE_TIMEOUT: (n) => `Could not classify “${n}”: the classifier took too long to answer.`,
  INFERENCE_FAILED: (n) => `The classifier failed on “${n}”.`,
  NETWORK: (n) => `Could not send “${n}”: GourmetGram is not reachable.`,
};
const RETRYABLE = new Set([
  'INFERENCE_UNAVAILABLE',
  'MODEL_UNAVAILABLE',
  'INFERENCE_TIMEOUT',
  'INFERENCE_FAILED',
  'NETWORK',
  'INTERNAL_ERROR',
]);

/** The result on screen: a history entry, its preview, and the comparison when one was run. */
interface Shown {
  entry: HistoryEntry;
  /** The photo as uploaded this session (object URL), or the stored thumbnail after a reload. */
  previewUrl: string;
  /** "Compare": the same photo through every way, the shown prediction first. */
  comparison?: Measured[];
  /** Set when the photo was reduced in the browser before upload. */
  reduced?: Prepared['reduced'];
  /** The photo as uploaded this session (for its streamed caption); absent after a reload. */
  file?: Blob;
}

interface Failure {
  code: string;
  message: string;
  fileName: string;
  file: File;
}

interface Busy {
  fileName: string;
  previewUrl: string;
  what: string;
}

function percent(p: number): string {
  const v = p * 100;
  return `${v >= 99.95 || v < 0.05 ? v.toFixed(0) : v.toFixed(1)}%`;
}

function prefersReducedMotion(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;
}

export function Classifier({
  examples,
  maxUploadBytes,
}: {
  examples: readonly Example[];
  /** The gateway's MAX_UPLOAD_BYTES: photos over it (or over 1600 px) are reduced before upload. */
  maxUploadBytes: number;
}) {
  const [dragging, setDragging] = useState(false);
  const [busy, setBusy] = useState<Busy | null>(null);
  const [shown, setShown] = useState<Shown | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [history, setHistory] = useState<HistoryEntry[]>([]);
  const [historyLoaded, setHistoryLoaded] = useState(false);
  const [labels, setLabels] = useState<string[]>([]);
  const [choices, setChoices] = useState<ModelChoice[]>([]);
  const [pick, setPick] = useState('');
  // Read by classify() (kept stable for the paste and camera handlers): the current choice.
  const picked = useRef({ pick, choices });
  picked.current = { pick, choices };
  const fileInput = useRef<HTMLInputElement>(null);
  const cameraInput = useRef<HTMLInputElement>(null);
  const cameraButton = useRef<HTMLButtonElement>(null);
  const [cameraOpen, setCameraOpen] = useState(false);
  const resultHeading = useRef<HTMLHeadingElement>(null);
  const errorBox = useRef<HTMLDivElement>(null);
  const inflight = useRef<AbortController | null>(null);
  const sessionUrls = useRef(new Map<string, string>());
  const dragDepth = useRef(0);
  const hintId = useId();
  const verdictId = useId();
  // Bumped on each new result; the effect runs after the commit, when the heading exists.
  const [focusTick, setFocusTick] = useState(0);
  useEffect(() => {
    if (focusTick > 0) resultHeading.current?.focus();
  }, [focusTick]);

  // An error is brought into view and focused on every viewport (on a phone it sits below the fold).
  useEffect(() => {
    if (!failure || busy) return;
    const box = errorBox.current;
    if (!box) return;
    box.focus({ preventScroll: true });
    box.scrollIntoView({ block: 'center', behavior: prefersReducedMotion() ? 'auto' : 'smooth' });
  }, [failure, busy]);

  // The session history survives a reload (localStorage); read after mount, written on every change.
  useEffect(() => {
    setHistory(loadHistory());
    setHistoryLoaded(true);
  }, []);
  useEffect(() => {
    if (historyLoaded) saveHistory(history);
  }, [history, historyLoaded]);

  useEffect(() => {
    fetch('/api/version')
      .then((r) => r.json() as Promise<{ model?: { labels?: string[] }; models?: ModelChoice[] }>)
      .then((v) => {
        setLabels(v.model?.labels ?? []);
        const models = v.models ?? [];
        setChoices(models);
        setPick((p) => p || (models.find((m) => m.default)?.name ?? ''));
      })
      .catch(() => undefined);
  }, []);

  const classify = useCallback(
    async (original: File) => {
      inflight.current?.abort();
      const ac = new AbortController();
      inflight.current = ac;
      const fileName = original.name || 'pasted photo';
      // The old result goes at once: nothing on screen may look like the answer for this photo.
      setFailure(null);
      setShown(null);
      const previewUrl = URL.createObjectURL(original);
      const { pick, choices } = picked.current;
      // No list of models (an older gateway, or /api/version failed): the gateway's default model.
      const models: (string | undefined)[] = choices.length
        ? modelsToRun(selectionOf(pick, choices), choices)
        : [undefined];
      setBusy({ fileName, previewUrl, what: models.length > 1 ? ' every way' : '' });
      let kept = false;
      try {
        const prepared = await prepareUpload(original, maxUploadBytes);
        const file = prepared.file;
        // One model after the other, so their latencies are not measured against each other.
        const results: Measured[] = [];
        for (const model of models) {
          const form = new FormData();
          form.set('file', file, file.name || 'photo');
          if (model !== undefined) form.set('model', model);
          const started = performance.now();
          const res = await fetch('/api/predict', { method: 'POST', body: form, signal: ac.signal });
          const body = (await res.json().catch(() => null)) as Prediction | ApiError | null;
          if (ac.signal.aborted) return;
          if (!res.ok || !body || 'error' in body) {
            const err =
              body && 'error' in body
                ? body.error
                : { code: 'INTERNAL_ERROR', message: `HTTP ${res.status}` };
            const which =
              models.length > 1 && model !== undefined
                ? `${PATH_TEXT[choices.find((c) => c.name === model)?.path ?? 'tensor'].title}: `
                : '';
            setFailure({ code: err.code, message: `${which}${err.message}`, fileName, file: original });
            return;
          }
          results.push({ prediction: body, roundTripMs: performance.now() - started });
        }
        const first = results[0]!;
        const entry: HistoryEntry = {
          prediction: first.prediction,
          fileName,
          thumb: await thumbnail(file),
          roundTripMs: first.roundTripMs,
          feedback: [],
        };
        if (ac.signal.aborted) return;
        kept = true;
        sessionUrls.current.set(first.prediction.requestId, previewUrl);
        setShown({
          entry,
          previewUrl,
          ...(results.length > 1 ? { comparison: results } : {}),
          ...(prepared.reduced ? { reduced: prepared.reduced } : {}),
          file,
        });
        setHistory((h) => {
          const next = [entry, ...h];
          for (const old of next.slice(MAX_HISTORY)) {
            const url = sessionUrls.current.get(old.prediction.requestId);
            if (url) URL.revokeObjectURL(url);
            sessionUrls.current.delete(old.prediction.requestId);
          }
          return next.slice(0, MAX_HISTORY);
        });
        setFocusTick((n) => n + 1);
      } catch (err) {
        if ((err as Error).name === 'AbortError') return;
        setFailure({
          code: 'NETWORK',
          message: 'Check your connection and try again.',
          fileName,
          file: original,
        });
      } finally {
        if (!kept) URL.revokeObjectURL(previewUrl);
        if (inflight.current === ac) {
          inflight.current = null;
          setBusy(null);
        }
      }
    },
    [maxUploadBytes],
  );

  // Paste a photo from the clipboard anywhere on the page.
  useEffect(() => {
    const onPaste = (e: ClipboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.isContentEditable))
        return;
      const file = Array.from(e.clipboardData?.files ?? []).find((f) => f.type.startsWith('image/'));
      const any = file ?? e.clipboardData?.files[0];
      if (any) {
        e.preventDefault();
        void classify(any);
      }
    };
    window.addEventListener('paste', onPaste);
    return () => window.removeEventListener('paste', onPaste);
  }, [classify]);

  const onPick = (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (file) void classify(file);
  };

  const onDrag = (e: DragEvent<HTMLDivElement>, kind: 'enter' | 'over' | 'leave') => {
    e.preventDefault();
    if (kind === 'enter') dragDepth.current++;
    if (kind === 'leave') dragDepth.current = Math.max(0, dragDepth.current - 1);
    setDragging(kind !== 'leave' || dragDepth.current > 0);
  };
  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault();
    dragDepth.current = 0;
    setDragging(false);
    const file = e.dataTransfer.files[0];
    if (file) void classify(file);
  };

  const pickExample = async (ex: Example) => {
    try {
      const res = await fetch(`/api/examples/${ex.code}`);
      const blob = await res.blob();
      await classify(new File([blob], `${ex.code}.jpeg`, { type: 'image/jpeg' }));
    } catch {
      setFailure({
        code: 'NETWORK',
        message: 'Could not load the example photo.',
        fileName: `${ex.code}.jpeg`,
        file: new File([], `${ex.code}.jpeg`),
      });
    }
  };

  const showEntry = (entry: HistoryEntry) => {
    setFailure(null);
    setShown({ entry, previewUrl: sessionUrls.current.get(entry.prediction.requestId) ?? entry.thumb });
    setFocusTick((n) => n + 1);
  };

  const onFeedback = (requestId: string, mark: FeedbackMark) => {
    setHistory((h) => withFeedback(h, requestId, mark));
    setShown((s) =>
      s && s.entry.prediction.requestId === requestId
        ? { ...s, entry: withFeedback([s.entry], requestId, mark)[0]! }
        : s,
    );
  };

  const closeCamera = () => {
    setCameraOpen(false);
    cameraButton.current?.focus();
  };

  const p = shown?.entry.prediction;
  const ood = p?.outOfDistribution;

  return (
    <div className="grid grid-cols-1 gap-6 lg:grid-cols-[minmax(0,5fr)_minmax(0,6fr)]">
      <section aria-labelledby="choose-heading" className="space-y-6">
        <div className="flex items-center justify-between gap-2">
          <h2 id="choose-heading" className="text-lg font-semibold">
            Choose a photo
          </h2>
          <HealthBadge />
        </div>
        <ModelPicker choices={choices} value={pick} onChange={setPick} />
        <div
          data-testid="dropzone"
          onDragEnter={(e) => onDrag(e, 'enter')}
          onDragOver={(e) => onDrag(e, 'over')}
          onDragLeave={(e) => onDrag(e, 'leave')}
          onDrop={onDrop}
          data-dragging={dragging || undefined}
          className={`rounded-xl border-2 border-dashed p-6 text-center transition-colors ${
            dragging
              ? 'border-emerald-700 bg-emerald-50 ring-4 ring-emerald-200'
              : 'border-slate-400 bg-white'
          }`}
        >
          <p className="mb-4 font-medium text-slate-800" aria-hidden={!dragging}>
            {dragging ? 'Drop the photo to classify it' : 'Drag and drop a photo here'}
          </p>
          <div className="flex flex-wrap justify-center gap-3">
            <button
              type="button"
              onClick={() => fileInput.current?.click()}
              aria-describedby={hintId}
              className="rounded-lg bg-emerald-800 px-5 py-3 font-semibold text-white shadow-sm hover:bg-emerald-900"
            >
              Choose a photo…
            </button>
            <button
              type="button"
              onClick={() => cameraInput.current?.click()}
              className="rounded-lg border border-emerald-800 bg-white px-5 py-3 font-semibold text-emerald-900 hover:bg-emerald-50"
            >
              Take a photo
            </button>
            <button
              ref={cameraButton}
              type="button"
              onClick={() => (cameraOpen ? closeCamera() : setCameraOpen(true))}
              aria-expanded={cameraOpen}
              aria-controls={cameraOpen ? 'camera-panel' : undefined}
              className="rounded-lg border border-emerald-800 bg-white px-5 py-3 font-semibold text-emerald-900 hover:bg-emerald-50 aria-expanded:bg-emerald-50"
            >
              Use camera
            </button>
          </div>
          <p id={hintId} className="mt-4 text-sm text-slate-600">
            JPEG, PNG, WebP, GIF, TIFF or AVIF, at least 32×32 pixels. Large photos are reduced before upload.
            You can also paste an image (Ctrl+V / ⌘V).
          </p>
          <input
            ref={fileInput}
            type="file"
            accept="image/*"
            className="sr-only"
            tabIndex={-1}
            aria-hidden="true"
            data-testid="file-input"
            onChange={onPick}
          />
          <input
            ref={cameraInput}
            type="file"
            accept="image/*"
            capture="environment"
            className="sr-only"
            tabIndex={-1}
            aria-hidden="true"
            data-testid="camera-input"
            onChange={onPick}
          />
        </div>

        {cameraOpen && <CameraPanel onPhoto={(file) => void classify(file)} onClose={closeCamera} />}

        <div>
          <h2 id="examples-heading" className="mb-1 text-lg font-semibold">
            Or try an example
          </h2>
          <p className="mb-2 text-sm text-slate-700">
            Photos the model never saw while it was trained, including some it gets wrong.
          </p>
          <ul
            aria-labelledby="examples-heading"
            className="grid grid-cols-2 gap-3 sm:grid-cols-4"
            data-testid="gallery"
          >
            {examples.map((ex) => (
              <li key={ex.code}>
                <button
                  type="button"
                  onClick={() => void pickExample(ex)}
                  data-code={ex.code}
                  data-verdict={ex.verdict}
                  data-right={ex.right}
                  className="group block h-full w-full overflow-hidden rounded-lg border border-stone-300 bg-white text-left hover:border-emerald-700"
                >
                  <img
                    src={`/api/examples/${ex.code}`}
                    alt={ex.alt}
                    width={307}
                    height={173}
                    loading="lazy"
                    className="aspect-[307/173] w-full object-cover"
                  />
                  <span className="block px-2 py-1 text-xs text-slate-700">
                    <span className="sr-only">Classify example: </span>
                    <span className="font-medium">{ex.alt}</span>
                    <span className="block text-slate-600">{ex.expected}</span>
                    {!ex.right ? (
                      <span className="block font-medium text-red-800" data-testid="gets-wrong">
                        The model gets this one wrong (it says {ex.modelSays})
                      </span>
                    ) : (
                      ex.verdict === 'unsure' && (
                        <span className="block text-slate-600">The model is not sure about this one</span>
                      )
                    )}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        </div>
      </section>

      <section aria-labelledby="result-region-heading" className="space-y-4">
        <h2 id="result-region-heading" className="sr-only">
          Result
        </h2>
        <div aria-live="polite" aria-atomic="false" className="space-y-4" aria-busy={busy !== null}>
          {busy !== null && (
            <div
              role="status"
              data-testid="busy"
              className="flex items-center gap-3 rounded-lg border border-sky-300 bg-sky-50 p-4 text-sky-950"
            >
              <img src={busy.previewUrl} alt="" className="h-12 w-16 rounded object-cover" />
              <span
                aria-hidden="true"
                className="inline-block h-5 w-5 shrink-0 animate-spin rounded-full border-2 border-sky-800 border-t-transparent motion-reduce:animate-none"
              />
              <span className="min-w-0 break-words">
                Classifying “{busy.fileName}”{busy.what}…
              </span>
              <button
                type="button"
                onClick={() => inflight.current?.abort()}
                className="ml-auto rounded-md border border-sky-800 px-3 py-1 text-sm font-medium"
              >
                Cancel
              </button>
            </div>
          )}
          {failure && busy === null && (
            <div
              ref={errorBox}
              role="alert"
              tabIndex={-1}
              data-testid="error"
              data-code={failure.code}
              className="scroll-my-4 rounded-lg border border-red-300 bg-red-50 p-4 text-red-950"
            >
              <p className="font-semibold break-words">
                {(ERROR_TITLES[failure.code] ?? ((n: string) => `Something went wrong with “${n}”.`))(
                  failure.fileName,
                )}
              </p>
              <p className="mt-1 text-sm">{failure.message}</p>
              <p className="mt-1 text-xs text-red-900">Error code: {failure.code}</p>
              <div className="mt-3 flex flex-wrap gap-2">
                {RETRYABLE.has(failure.code) && failure.file.size > 0 && (
                  <button
                    type="button"
                    onClick={() => void classify(failure.file)}
                    className="rounded-md bg-red-800 px-4 py-2 text-sm font-semibold text-white hover:bg-red-900"
                  >
                    Try again
                  </button>
                )}
                <button
                  type="button"
                  onClick={() => fileInput.current?.click()}
                  className="rounded-md border border-red-800 bg-white px-4 py-2 text-sm font-semibold text-red-900"
                >
                  Choose another photo
                </button>
              </div>
            </div>
          )}
        </div>

        {shown && p ? (
          <article
            data-testid="result"
            data-request-id={p.requestId}
            className="rounded-xl border border-stone-200 bg-white p-5 shadow-sm"
          >
            <div className="flex flex-col gap-4 sm:flex-row">
              {shown.previewUrl ? (
                <img
                  src={shown.previewUrl}
                  alt={`Your photo: ${shown.entry.fileName}`}
                  className="h-40 w-full rounded-lg object-cover sm:w-56"
                />
              ) : null}
              <div className="min-w-0 flex-1">
                <VerdictView prediction={p} headingRef={resultHeading} describedBy={verdictId} />
                {shown.file && <StreamedCaption key={p.requestId} file={shown.file} />}
                <p className="mt-2 text-xs text-slate-600 break-words">
                  {shown.entry.fileName}
                  {shown.reduced &&
                    ` · reduced before upload from ${shown.reduced.from.width}×${shown.reduced.from.height} (${Math.round(shown.reduced.from.bytes / 1024)} KB) to ${shown.reduced.to.width}×${shown.reduced.to.height} (${Math.round(shown.reduced.to.bytes / 1024)} KB)`}
                </p>
              </div>
            </div>
            <FeedbackForm
              key={p.requestId}
              predictionId={p.requestId}
              predicted={p.label}
              claimed={p.verdict.label}
              labels={labels}
              marks={shown.entry.feedback}
              onSaved={(mark) => onFeedback(p.requestId, mark)}
            />
            {shown.comparison && (
              <details open className="mt-5" data-testid="comparison-details">
                <summary className="cursor-pointer font-semibold">Advanced: every way side by side</summary>
                <PathComparison results={shown.comparison} />
              </details>
            )}
            <details className="mt-5" data-testid="details">
              <summary className="cursor-pointer font-semibold">
                Details: probabilities, scores and timing
              </summary>
              <p className="mt-3 text-sm text-slate-700">
                The percentages are the model&apos;s softmax probabilities: how strongly it prefers each
                category over the others, all adding up to 100%. They are not a guarantee: the model can be
                confidently wrong, especially on food it never saw.
              </p>
              <ProbabilityBars top={p.top} highlightTop={p.verdict.kind === 'likely'} />
              <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm" data-testid="scores">
                <dt>Top class</dt>
                <dd>
                  {p.label} {percent(p.probability)}
                </dd>
                <dt>Unlike the training photos</dt>
                <dd>
                  {ood
                    ? `score ${ood.score.toFixed(3)}, threshold ${ood.threshold.toFixed(3)} (${ood.flagged ? 'over: not like the food the model knows' : 'under'})`
                    : 'not measured by this model'}
                </dd>
                <dt>Verdict rule</dt>
                <dd>{p.verdict.reason}</dd>
                <dt>Model</dt>
                <dd>
                  {p.model.name} v{p.model.version} ({p.model.backend}, {p.model.path} path)
                </dd>
                <dt>Request</dt>
                <dd className="break-all">{p.requestId}</dd>
              </dl>
              <LatencySplit timings={p.timings} roundTripMs={shown.entry.roundTripMs} />
            </details>
          </article>
        ) : (
          !busy &&
          !failure && (
            <p className="rounded-xl border border-stone-200 bg-white p-5 text-slate-700">
              Your result will appear here: whether the photo likely shows one of the categories the model
              knows, and the details behind that answer.
            </p>
          )
        )}

        {history.length > 0 && (
          <section aria-labelledby="history-heading">
            <h2 id="history-heading" className="mb-2 text-lg font-semibold">
              Your recent photos
            </h2>
            <ol
              className="divide-y divide-stone-200 rounded-xl border border-stone-200 bg-white"
              data-testid="history"
            >
              {history.map((h) => (
                <li
                  key={h.prediction.requestId}
                  data-testid="history-item"
                  data-verdict={h.prediction.verdict.kind}
                >
                  <button
                    type="button"
                    onClick={() => showEntry(h)}
                    aria-current={h.prediction.requestId === p?.requestId ? 'true' : undefined}
                    className="flex w-full items-center gap-3 p-2 text-left hover:bg-stone-50"
                  >
                    {h.thumb ? (
                      <img src={h.thumb} alt="" className="h-10 w-14 shrink-0 rounded object-cover" />
                    ) : (
                      <span aria-hidden="true" className="h-10 w-14 shrink-0 rounded bg-stone-200" />
                    )}
                    <span className="min-w-0 flex-1">
                      <span className="block truncate">
                        <span className="font-medium">{h.prediction.verdict.headline}</span>
                        <span className="text-slate-600"> · {h.fileName}</span>
                      </span>
                      {h.feedback.length > 0 && (
                        <span className="flex flex-wrap gap-1" data-testid="history-feedback">
                          {h.feedback.map((f) => (
                            <span
                              key={`${f.kind}-${f.label ?? ''}`}
                              data-kind={f.kind}
                              className="rounded bg-stone-100 px-1.5 text-xs text-slate-800"
                            >
                              {markText(f)}
                            </span>
                          ))}
                        </span>
                      )}
                    </span>
                    <time dateTime={h.prediction.createdAt} className="shrink-0 text-xs text-slate-600">
                      {new Date(h.prediction.createdAt).toLocaleTimeString()}
                    </time>
                  </button>
                </li>
              ))}
            </ol>
          </section>
        )}
      </section>
    </div>
  );
}
