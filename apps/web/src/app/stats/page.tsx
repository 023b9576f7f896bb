import type { Metadata } from 'next';
import { StatsDashboard } from '@/components/stats-dashboard';

export const metadata: Metadata = { title: 'Server stats — GourmetGram' };

export default function StatsPage() {
  return (
    <>
      <h1 className="mb-1 text-2xl font-bold tracking-tight sm:text-3xl">Inference server statistics</h1>
      <p className="mb-6 max-w-3xl text-slate-700">
        Live numbers from the model&apos;s Triton statistics (<code>/v2/models/&lt;model&gt;/stats</code>),
        read every two seconds: how many requests it served, how long they waited in the queue versus how long
        the model computed, and how the dynamic batcher grouped them.
      </p>
      <StatsDashboard />
    </>
  );
}
