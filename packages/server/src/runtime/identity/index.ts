/**
 * The identity backend behind the runtime's `Backend` interface (Triton's test backend: outputs are
 * the inputs). Its instances answer request by request, so of Triton's batching features only
 * ragged inputs change which requests may share a batch.
 * @packageDocumentation
 */
import type { Backend } from '../registry.js';
import { createIdentityInstance } from './identity-backend.js';

/** The identity backend. */
export function identityBackend(): Omit<Backend, 'name'> {
  return {
    createInstance: ({ modelVersion: _modelVersion, ...base }) => createIdentityInstance(base),
    batchInputs: 'ragged',
  };
}
