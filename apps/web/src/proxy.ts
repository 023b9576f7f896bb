import { NextResponse, type NextRequest } from 'next/server';
import { contentSecurityPolicy, createNonce } from '@/lib/security-headers';

/**
 * Next.js proxy (Next 16's name for middleware): gives every page a Content-Security-Policy with a
 * fresh nonce. Next reads the policy from the request headers while rendering and puts the nonce on
 * its own inline scripts; the browser gets the same policy on the response.
 */
export function proxy(request: NextRequest): NextResponse {
  const nonce = createNonce();
  // NODE_ENV is fixed by Next at build time (not runtime configuration, which lives in env.ts).
  const policy = contentSecurityPolicy(nonce, { development: process.env.NODE_ENV === 'development' });
  const headers = new Headers(request.headers);
  headers.set('x-nonce', nonce);
  headers.set('Content-Security-Policy', policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set('Content-Security-Policy', policy);
  return response;
}

export const config = {
  // Pages only: the JSON API and static assets need no nonce (and the predict path stays lean).
  matcher: [
    {
      source: '/((?!api/|_next/static|_next/image|favicon.ico).*)',
      missing: [{ type: 'header', key: 'next-router-prefetch' }],
    },
  ],
};
