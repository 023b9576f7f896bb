/**
 * The web app's security headers. Pages get a Content-Security-Policy with a fresh nonce per request
 * (`src/proxy.ts`): Next.js streams its hydration data in inline scripts and puts the nonce on them,
 * so no other inline script can run. Every response (pages and `/api`) gets the static headers.
 */

/** Headers every response carries (set in `next.config.ts`). */
export const STATIC_SECURITY_HEADERS: readonly { readonly key: string; readonly value: string }[] = [
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'X-Frame-Options', value: 'DENY' },
  { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
  // The camera is used by the page itself (file input `capture`, live camera); nothing else is.
  {
    key: 'Permissions-Policy',
    value: 'camera=(self), microphone=(), geolocation=(), payment=(), usb=(), browsing-topics=()',
  },
  { key: 'Cross-Origin-Opener-Policy', value: 'same-origin' },
];

/**
 * The Content-Security-Policy of a page rendered with `nonce`.
 * - scripts: only Next's own (same origin, or inline with the nonce; `strict-dynamic` lets them load
 *   their chunks); development adds `unsafe-eval` for React Refresh;
 * - styles: the same origin plus inline `style` attributes, which React renders for bar widths;
 * - images: same origin, and `blob:` / `data:` for the preview of the photo being uploaded;
 * - no plugins, no framing, forms and `<base>` only to this origin.
 */
export function contentSecurityPolicy(nonce: string, options: { development?: boolean } = {}): string {
  const script = [`'self'`, `'nonce-${nonce}'`, `'strict-dynamic'`];
  if (options.development === true) script.push(`'unsafe-eval'`);
  return [
    `default-src 'self'`,
    `script-src ${script.join(' ')}`,
    `style-src 'self' 'unsafe-inline'`,
    `img-src 'self' blob: data:`,
    `media-src 'self' blob:`,
    `font-src 'self'`,
    `connect-src 'self'`,
    `object-src 'none'`,
    `base-uri 'self'`,
    `form-action 'self'`,
    `frame-ancestors 'none'`,
  ].join('; ');
}

/** A fresh nonce: 16 random bytes, base64. */
export function createNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}
