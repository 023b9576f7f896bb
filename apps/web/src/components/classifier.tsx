'use client';

import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { ChangeEvent, DragEvent } from 'react';
import type { Example } from '@/lib/gallery';
import { modelsToRun, selectionOf, type Measured, type ModelChoice } from '@/lib/compare';
import type { ApiError, Prediction } from '@/lib/types';
import { CameraPanel } from './camera-panel';
import { HealthBadge } from './health-badge';
import { FeedbackForm } from './feedback-form';
import { LatencySplit } from './latency-split';
import { ModelPicker } from './model-picker';
import { PathComparison } from './path-comparison';
import { ProbabilityBars } from './probability-bars';

/** What went wrong, for people: a title per stable error code; the server's message adds the detail. */
const ERROR_TITLES: Record<string, string> = {
  FILE_TOO_LARGE: 'That file is too large.',
  UNSUPPORTED_MEDIA_TYPE: 'That file is not a photo we can read.',
  CORRUPT_IMAGE: 'That image is damaged or incomplete.',
  TOO_MANY_PIXELS: 'That image has too many pixels.',
  EMPTY_FILE: 'That file is empty.',
  MISSING_FILE: 'No photo was sent.',
  INFERENCE_UNAVAILABLE: 'The classifier is not reachable right now.',
  MODEL_UNAVAILABLE: 'The food model is not loaded right now.',
  INFERENCE_TIMEOUT: 'The classifier took too long to answer.',
  INFERENCE_FAILED: 'The classifier failed on this photo.',
  NETWORK: 'Could not reach GourmetGram.',
};
const RETRYABLE = new Set([
  'INFERENCE_UNAVAILABLE',
  'MODEL_UNAVAILABLE',
  'INFERENCE_TIMEOUT',
  'INFERENCE_FAILED',
  'NETWORK',
  'INTERNAL_ERROR',
]);

interface Shown {
  prediction: Prediction;
  previewUrl: string;
  fileName: string;
  /** Browser-measured round trip (upload + server + download), ms. */
  roundTripMs: number;
  /** "Compare": the same photo through every model, the shown prediction first. */
  comparison?: Measured[];
}

interface Failure {
  code: string;
  message: string;
  file: File;
}

const MAX_HISTORY = 12;

function percent(p: number): string {
  const v = p * 100;
  return `${v >= 99.95 || v < 0.05 ? v.toFixed(0) : v.toFixed(1)}%`;
}

export function Classifier({ examples }: { examples: readonly Example[] }) {
  const [dragging, setDragging] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [shown, setShown] = useState<Shown | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [history, setHistory] = useState<Shown[]>([]);
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
  const inflight = useRef<AbortController | null>(null);
  const dragDepth = useRef(0);
  const hintId = useId();
  const oodId = useId();
  // Bumped on each new result; the effect runs after the commit, when the heading exists.
  const [focusTick, setFocusTick] = useState(0);
  useEffect(() => {
    if (focusTick > 0) resultHeading.current?.focus();
  }, [focusTick]);

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

  const classify = useCallback(async (file: File) => {
    inflight.current?.abort();
    const ac = new AbortController();
    inflight.current = ac;
    setFailure(null);
    const { pick, choices } = picked.current;
    // No list of models (an older gateway, or /api/version failed): the gateway's default model.
    const models: (string | undefined)[] = choices.length
      ? modelsToRun(selectionOf(pick, choices), choices)
      : [undefined];
    setBusy(`${file.name || 'photo'}${models.length > 1 ? ' with each model' : ''}`);
    try {
      // One model after the other, so their latencies are not measured against each other.
      const results: Measured[] = [];
      for (const model of models) {
        const form = new FormData();
        form.set('file', file, file.name || 'photo');
        if (model !== undefined) form.set('model', model);
        const started = performance.now();
        const res = await fetch('/api/predict', { method: 'POST', body: form, signal: ac.signal });
        const body = (await res.json().catch(() => null)) as Prediction | ApiError | null;
        if (!res.ok || !body || 'error' in body) {
          const err =
            body && 'error' in body ? body.error : { code: 'INTERNAL_ERROR', message: `HTTP ${res.status}` };
          const which = models.length > 1 && model !== undefined ? `${model}: ` : '';
          setFailure({ code: err.code, message: `${which}${err.message}`, file });
          return;
        }
        results.push({ prediction: body, roundTripMs: performance.now() - started });
      }
      const first = results[0]!;
      const entry: Shown = {
        prediction: first.prediction,
        previewUrl: URL.createObjectURL(file),
        fileName: file.name || 'pasted photo',
        roundTripMs: first.roundTripMs,
        ...(results.length > 1 ? { comparison: results } : {}),
      };
      setShown(entry);
      setHistory((h) => {
        const next = [entry, ...h];
        for (const old of next.slice(MAX_HISTORY)) URL.revokeObjectURL(old.previewUrl);
        return next.slice(0, MAX_HISTORY);
      });
      setFocusTick((n) => n + 1);
    } catch (err) {
      if ((err as Error).name === 'AbortError') return;
      setFailure({ code: 'NETWORK', message: 'Check your connection and try again.', file });
    } finally {
      if (inflight.current === ac) {
        inflight.current = null;
        setBusy(null);
      }
    }
  }, []);

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
        file: new File([], 'example'),
      });
    }
  };

  const closeCamera = () => {
    setCameraOpen(false);
    cameraButton.current?.focus();
  };

  const p = shown?.prediction;

  return (
    <div className="grid gap-6 lg:grid-cols-[minmax(0,5fr)_minmax(0,6fr)]">
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
            JPEG, PNG, WebP, GIF, TIFF or AVIF. You can also paste an image (Ctrl+V / ⌘V).
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
          <h2 id="examples-heading" className="mb-2 text-lg font-semibold">
            Or try an example
          </h2>
          <ul aria-labelledby="examples-heading" className="grid grid-cols-2 gap-3 sm:grid-cols-4">
            {examples.map((ex) => (
              <li key={ex.code}>
                <button
                  type="button"
                  onClick={() => void pickExample(ex)}
                  className="group block w-full overflow-hidden rounded-lg border border-stone-300 bg-white text-left hover:border-emerald-700"
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
                    {ex.alt}
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
              className="flex items-center gap-3 rounded-lg border border-sky-300 bg-sky-50 p-4 text-sky-950"
            >
              <span
                aria-hidden="true"
                className="inline-block h-5 w-5 animate-spin rounded-full border-2 border-sky-800 border-t-transparent motion-reduce:animate-none"
              />
              <span>Classifying {busy}…</span>
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
              role="alert"
              data-testid="error"
              data-code={failure.code}
              className="rounded-lg border border-red-300 bg-red-50 p-4 text-red-950"
            >
              <p className="font-semibold">{ERROR_TITLES[failure.code] ?? 'Something went wrong.'}</p>
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
            className={`rounded-xl border border-stone-200 bg-white p-5 shadow-sm ${busy ? 'opacity-60' : ''}`}
          >
            <div className="flex flex-col gap-4 sm:flex-row">
              <img
                src={shown.previewUrl}
                alt={`Your photo: ${shown.fileName}`}
                className="h-40 w-full rounded-lg object-cover sm:w-56"
              />
              <div className="min-w-0">
                <h2
                  ref={resultHeading}
                  tabIndex={-1}
                  data-testid="result-heading"
                  aria-describedby={p.outOfDistribution?.flagged ? oodId : undefined}
                  className="text-2xl font-bold"
                >
                  {p.label} <span className="text-emerald-800">{percent(p.probability)}</span>
                </h2>
                <p className="mt-2 text-sm text-slate-700">
                  {p.probability >= 0.8
                    ? 'The model is confident.'
                    : p.probability >= 0.5
                      ? 'The model leans towards this class but is not sure.'
                      : 'The model is unsure; treat this as a guess.'}{' '}
                  The percentage is the model&apos;s softmax probability: how strongly it prefers this class
                  over the other {Math.max(p.top.length - 1, 10)}, with all classes adding up to 100%. It is
                  not a guarantee — the model can be confidently wrong, especially on foods it never saw.
                </p>
                {p.outOfDistribution?.flagged && (
                  <div
                    id={oodId}
                    role="note"
                    data-testid="ood-warning"
                    className="mt-3 rounded-lg border border-amber-400 bg-amber-50 p-3 text-sm text-amber-950"
                  >
                    <p className="font-semibold">This does not look like the food the model knows.</p>
                    <p className="mt-1">
                      The photo is far from every photo the model was trained on (score{' '}
                      {p.outOfDistribution.score.toFixed(3)}, threshold{' '}
                      {p.outOfDistribution.threshold.toFixed(3)}), so the label above is likely meaningless.
                    </p>
                  </div>
                )}
              </div>
            </div>
            <ProbabilityBars top={p.top} />
            <LatencySplit timings={p.timings} roundTripMs={shown.roundTripMs} />
            {shown.comparison && <PathComparison results={shown.comparison} />}
            <FeedbackForm
              key={p.requestId}
              predictionId={p.requestId}
              predicted={p.label}
              suggested={p.top[1]?.label}
              labels={labels}
            />
            <p className="mt-3 text-xs text-slate-600">
              Model {p.model.name} v{p.model.version} ({p.model.backend}, {p.model.path} path) · request{' '}
              {p.requestId}
            </p>
          </article>
        ) : (
          !busy &&
          !failure && (
            <p className="rounded-xl border border-stone-200 bg-white p-5 text-slate-700">
              Your result will appear here: the most likely food category, the probability of every category,
              and how long each step took.
            </p>
          )
        )}

        {history.length > 0 && (
          <section aria-labelledby="history-heading">
            <h2 id="history-heading" className="mb-2 text-lg font-semibold">
              This session
            </h2>
            <ol
              className="divide-y divide-stone-200 rounded-xl border border-stone-200 bg-white"
              data-testid="history"
            >
              {history.map((h) => (
                <li key={h.prediction.requestId}>
                  <button
                    type="button"
                    onClick={() => setShown(h)}
                    aria-current={h === shown ? 'true' : undefined}
                    className="flex w-full items-center gap-3 p-2 text-left hover:bg-stone-50"
                  >
                    <img src={h.previewUrl} alt="" className="h-10 w-14 rounded object-cover" />
                    <span className="min-w-0 flex-1 truncate">
                      <span className="font-medium">{h.prediction.label}</span>{' '}
                      <span className="text-slate-700">{percent(h.prediction.probability)}</span>
                      <span className="sr-only">, {h.fileName}</span>
                    </span>
                    <time dateTime={h.prediction.createdAt} className="text-xs text-slate-600">
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
