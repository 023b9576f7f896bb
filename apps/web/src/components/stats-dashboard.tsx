'use client';

import { useEffect, useRef, useState } from 'react';
import type { ApiError, ModelStats } from '@/lib/types';
import { BarChart, LineChart } from './charts';

const POLL_MS = 2000;
const KEEP = 60;

interface Point {
  t: string;
  success: number;
  fail: number;
  queueMs: number;
  computeMs: number;
}

/** Cumulative {count, ns} pairs → per-interval numbers (Triton's stats are cumulative). */
function delta(prev: ModelStats, cur: ModelStats): Point {
  const d = (a: number, b: number) => Math.max(0, b - a);
  const n = d(prev.success.count, cur.success.count);
  const q = d(prev.queue.ms, cur.queue.ms);
  const qn = d(prev.queue.count, cur.queue.count);
  const c =
    d(prev.computeInput.ms, cur.computeInput.ms) +
    d(prev.computeInfer.ms, cur.computeInfer.ms) +
    d(prev.computeOutput.ms, cur.computeOutput.ms);
  return {
    t: new Date(cur.at).toLocaleTimeString(),
    success: n,
    fail: d(prev.fail.count, cur.fail.count),
    queueMs: qn ? q / qn : 0,
    computeMs: n ? c / n : 0,
  };
}

export function StatsDashboard() {
  const [latest, setLatest] = useState<ModelStats | null>(null);
  const [points, setPoints] = useState<Point[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [load, setLoad] = useState<string | null>(null);
  const prev = useRef<ModelStats | null>(null);

  useEffect(() => {
    let stop = false;
    const poll = async () => {
      try {
        const res = await fetch('/api/stats', { cache: 'no-store' });
        const body = (await res.json()) as ModelStats | ApiError;
        if (stop) return;
        if ('error' in body) {
          setError(body.error.message);
          return;
        }
        setError(null);
        if (prev.current) {
          const p = delta(prev.current, body);
          setPoints((ps) => [...ps, p].slice(-KEEP));
        }
        prev.current = body;
        setLatest(body);
      } catch {
        if (!stop) setError('GourmetGram is not reachable.');
      }
    };
    void poll();
    const t = setInterval(() => void poll(), POLL_MS);
    return () => {
      stop = true;
      clearInterval(t);
    };
  }, []);

  const runLoad = async () => {
    setLoad('Sending 24 test requests…');
    let ok = 0;
    const one = async () => {
      const r = await fetch('/api/test', { cache: 'no-store' }).catch(() => null);
      if (r?.ok) ok++;
    };
    for (let i = 0; i < 24; i += 8) await Promise.all(Array.from({ length: 8 }, one));
    setLoad(`Sent 24 test requests, ${ok} succeeded.`);
  };

  const avg = (ms: number, count: number) => (count ? ms / count : 0);
  const labels = points.map((p) => p.t);

  return (
    <div className="space-y-6">
      {error && (
        <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-4 text-red-950">
          Statistics unavailable: {error}
        </div>
      )}
      <div className="flex flex-wrap items-center gap-3">
        <button
          type="button"
          onClick={() => void runLoad()}
          className="rounded-lg bg-emerald-800 px-4 py-2 font-semibold text-white hover:bg-emerald-900"
        >
          Send 24 test requests
        </button>
        <p role="status" className="text-sm text-slate-700">
          {load}
        </p>
      </div>
      {latest && (
        <dl className="grid grid-cols-2 gap-3 sm:grid-cols-4" data-testid="totals">
          {[
            ['Model', `${latest.name} v${latest.version}`],
            ['Successful requests', latest.success.count.toLocaleString('en')],
            ['Failed requests', latest.fail.count.toLocaleString('en')],
            ['Executions (batches)', latest.executionCount.toLocaleString('en')],
            ['Avg queue time', `${avg(latest.queue.ms, latest.queue.count).toFixed(2)} ms`],
            [
              'Avg compute time',
              `${avg(latest.computeInput.ms + latest.computeInfer.ms + latest.computeOutput.ms, latest.success.count).toFixed(2)} ms`,
            ],
            ['Inferences', latest.inferenceCount.toLocaleString('en')],
            [
              'Avg batch size',
              (latest.executionCount ? latest.inferenceCount / latest.executionCount : 0).toFixed(2),
            ],
            // Only when the model uses the server's response cache (Triton's cache_hit / cache_miss).
            ...(latest.cacheHit.count + latest.cacheMiss.count > 0
              ? [
                  ['Cache hits', latest.cacheHit.count.toLocaleString('en')],
                  ['Cache misses', latest.cacheMiss.count.toLocaleString('en')],
                ]
              : []),
          ].map(([k, v]) => (
            <div key={k} className="rounded-lg border border-stone-200 bg-white p-3">
              <dt className="text-xs text-slate-700">{k}</dt>
              <dd className="text-lg font-semibold tabular-nums">{v}</dd>
            </div>
          ))}
        </dl>
      )}
      <div className="grid gap-6 lg:grid-cols-2">
        <LineChart
          title="Requests per 2 s"
          unit="requests"
          labels={labels}
          series={[
            { name: 'Successful', color: '#047857', values: points.map((p) => p.success) },
            { name: 'Failed', color: '#b91c1c', values: points.map((p) => p.fail) },
          ]}
        />
        <LineChart
          title="Average queue vs compute time per request"
          unit="ms"
          labels={labels}
          series={[
            { name: 'Queue', color: '#b45309', values: points.map((p) => p.queueMs) },
            { name: 'Compute', color: '#1d4ed8', values: points.map((p) => p.computeMs) },
          ]}
        />
        <BarChart
          title="Batch sizes the scheduler executed"
          xLabel="Batch size"
          bars={(latest?.batches ?? []).map((b) => ({ label: String(b.batchSize), value: b.count }))}
        />
      </div>
    </div>
  );
}
