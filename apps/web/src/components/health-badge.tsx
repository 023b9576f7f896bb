'use client';

import { useEffect, useState } from 'react';
import type { Health } from '@/lib/types';

type State = { kind: 'checking' } | { kind: 'ok' } | { kind: 'model' | 'server'; detail: string };

/** Server and model status, polled; visible text, announced politely when it changes. */
export function HealthBadge() {
  const [state, setState] = useState<State>({ kind: 'checking' });
  useEffect(() => {
    let stop = false;
    const check = async () => {
      try {
        const h = (await (await fetch('/api/health', { cache: 'no-store' })).json()) as Health;
        if (stop) return;
        if (h.ok) setState({ kind: 'ok' });
        else if (!h.server.live) setState({ kind: 'server', detail: h.server.error ?? 'not reachable' });
        else setState({ kind: 'model', detail: h.model.error ?? 'not ready' });
      } catch {
        if (!stop) setState({ kind: 'server', detail: 'GourmetGram is not reachable' });
      }
    };
    void check();
    const t = setInterval(() => void check(), 10_000);
    const onFocus = () => void check();
    window.addEventListener('focus', onFocus);
    return () => {
      stop = true;
      clearInterval(t);
      window.removeEventListener('focus', onFocus);
    };
  }, []);
  const look = {
    checking: ['bg-stone-100 text-slate-800 border-stone-300', 'Checking the classifier…'],
    ok: ['bg-emerald-50 text-emerald-900 border-emerald-300', 'Classifier ready'],
    model: ['bg-amber-50 text-amber-950 border-amber-400', 'Model not ready'],
    server: ['bg-red-50 text-red-900 border-red-300', 'Inference server unreachable'],
  }[state.kind];
  return (
    <p
      role="status"
      data-testid="health"
      data-state={state.kind}
      title={'detail' in state ? state.detail : undefined}
      className={`inline-flex items-center gap-2 rounded-full border px-3 py-1 text-sm font-medium ${look[0]}`}
    >
      <span
        aria-hidden="true"
        className={`h-2 w-2 rounded-full ${state.kind === 'ok' ? 'bg-emerald-600' : state.kind === 'checking' ? 'bg-slate-400' : state.kind === 'model' ? 'bg-amber-600' : 'bg-red-600'}`}
      />
      {look[1]}
    </p>
  );
}
