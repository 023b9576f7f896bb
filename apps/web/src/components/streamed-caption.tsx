'use client';

import { readServerSentEvents } from '@tritonserver-ts/client/sse';
import { useEffect, useState } from 'react';

type CaptionState =
  | { kind: 'idle' }
  | { kind: 'streaming' | 'done'; text: string }
  | { kind: 'failed'; text: string; message: string };

/** One event of `POST /api/caption`. */
type CaptionEvent = { text: string } | { done: true } | { error: { code: string; message: string } };

/**
 * The photo's caption, streamed word by word from `POST /api/caption` (the server's decoupled
 * caption model) under the result. Renders nothing when the server has no caption model (204) or
 * the request fails before the first word: the result above never depends on it. Reads the
 * Server-Sent Events with `fetch` streaming; a new photo (or leaving) aborts the request, which
 * cancels the model's request on the inference server.
 */
export function StreamedCaption({ file }: { file: Blob }) {
  const [state, setState] = useState<CaptionState>({ kind: 'idle' });

  useEffect(() => {
    const ac = new AbortController();
    setState({ kind: 'idle' });
    void (async () => {
      const form = new FormData();
      form.set('file', file, file instanceof File && file.name ? file.name : 'photo');
      let text = '';
      try {
        const res = await fetch('/api/caption', { method: 'POST', body: form, signal: ac.signal });
        if (res.status !== 200 || res.body === null) return;
        setState({ kind: 'streaming', text });
        for await (const sse of readServerSentEvents(res.body)) {
          const event = JSON.parse(sse.data) as CaptionEvent;
          if ('text' in event) {
            text += event.text;
            setState({ kind: 'streaming', text });
          } else if ('done' in event) {
            setState({ kind: 'done', text });
          } else {
            setState({ kind: 'failed', text, message: event.error.message });
          }
        }
      } catch {
        if (!ac.signal.aborted && text !== '') {
          setState({ kind: 'failed', text, message: 'The caption stream broke off.' });
        }
      }
    })();
    return () => ac.abort();
  }, [file]);

  if (state.kind === 'idle') return null;
  return (
    <p
      className="mt-3 text-sm text-slate-700"
      data-testid="caption"
      data-state={state.kind}
      aria-live="polite"
      aria-busy={state.kind === 'streaming'}
    >
      <span className="font-semibold">Caption: </span>
      <span data-testid="caption-text">{state.text}</span>
      {state.kind === 'streaming' && <span aria-hidden="true"> …</span>}
      {state.kind === 'failed' && <span className="text-red-700"> ({state.message})</span>}
    </p>
  );
}
