import type { Metadata, Viewport } from 'next';
import { headers } from 'next/headers';
import Link from 'next/link';
import type { ReactNode } from 'react';
import './globals.css';

export const metadata: Metadata = {
  title: 'GourmetGram — what food is in your photo?',
  description: 'Classify a food photo into one of 11 Food-11 categories, served by Triton Inference Server.',
};

export const viewport: Viewport = { width: 'device-width', initialScale: 1, themeColor: '#065f46' };

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Reading the request makes every page render per request, so Next can put that request's CSP
  // nonce (set by src/proxy.ts) on its inline scripts.
  await headers();
  return (
    <html lang="en">
      <body className="min-h-screen bg-stone-50 text-slate-900 antialiased">
        <a
          href="#main"
          className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2"
        >
          Skip to content
        </a>
        <header className="border-b border-stone-200 bg-white">
          <nav
            aria-label="Main"
            className="mx-auto flex max-w-6xl items-center justify-between gap-4 px-4 py-3"
          >
            <Link href="/" className="text-xl font-bold tracking-tight text-emerald-800">
              GourmetGram
            </Link>
            <div className="flex gap-4 text-sm font-medium">
              <Link href="/" className="text-slate-700 underline-offset-4 hover:underline">
                Classify
              </Link>
              <Link href="/stats" className="text-slate-700 underline-offset-4 hover:underline">
                Server stats
              </Link>
            </div>
          </nav>
        </header>
        <main id="main" className="mx-auto max-w-6xl px-4 py-6">
          {children}
        </main>
        <footer className="border-t border-stone-200 bg-white">
          <div className="mx-auto flex max-w-6xl flex-wrap gap-x-4 gap-y-1 px-4 py-4 text-sm text-slate-600">
            <span>GourmetGram: Food-11 classification served by Triton Inference Server.</span>
            <Link href="/api" className="text-emerald-800 underline underline-offset-2">
              API
            </Link>
            <a href="/api/openapi.json" className="text-emerald-800 underline underline-offset-2">
              OpenAPI 3.1 (JSON)
            </a>
          </div>
        </footer>
      </body>
    </html>
  );
}
