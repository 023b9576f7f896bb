/** The server under test and a client for it. */
import { inject } from 'vitest';
import { TritonClient, type ClientOptions } from '@tritonserver-ts/client';

/** `http://host:port` (embedded) or whatever TRITON_URL says. */
export const tritonUrl = inject('tritonUrl');

/** True when the suite started the embedded server itself. */
export const embedded = inject('embedded');

/** A client for the server under test; close it in `afterAll`. */
export function newClient(options: Omit<ClientOptions, 'url'> = {}): TritonClient {
  return new TritonClient({ url: tritonUrl, ...options });
}

/** The origin to use with raw HTTP (fetch / undici) in tests that check the wire itself. */
export const httpBase = /^https?:\/\//.test(tritonUrl)
  ? tritonUrl.replace(/\/+$/, '')
  : `http://${tritonUrl}`;
