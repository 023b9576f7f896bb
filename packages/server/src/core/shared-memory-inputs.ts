/**
 * A request's shared-memory inputs, read before the request is checked against its model (Triton's
 * front ends resolve shared-memory references while they read a request). Every reference is
 * resolved first (inputs, then requested outputs, with Triton's messages); then the inputs' bytes are
 * held to the front end's {@link InputBudget} before a byte is read, as body bytes are (issue 23 item
 * 6): over the per-request limit the request is refused (400 / INVALID_ARGUMENT, in the words of
 * Triton's body limit), over the in-flight budget it waits for nothing and gets 503 / UNAVAILABLE.
 * Only then are they read, off the event loop (`SystemSharedMemoryManager.read`).
 * @packageDocumentation
 */
import { ServerError } from '../common/errors.js';
import type { SystemSharedMemoryManager } from './shared-memory.js';
import type { CoreInferRequest, SharedMemoryRef } from '../common/types.js';

/**
 * A request whose shared-memory inputs, with the bytes it already holds, exceed its front end's
 * per-request limit (INVALID_ARG: HTTP 400, gRPC INVALID_ARGUMENT). The wording is that of Triton's
 * body limit ("Request JSON size of … exceeds the maximum allowed value of …").
 */
export class SharedMemoryInputTooLargeError extends ServerError {
  constructor(size: number, limit: number, flag: string) {
    super(
      'INVALID_ARG',
      `Request size of ${size} including shared memory inputs exceeds the maximum allowed value of ${limit}. Use ${flag} to increase the limit.`,
    );
    this.name = 'SharedMemoryInputTooLargeError';
  }
}

/** The bytes of a request's shared-memory inputs, and their share of the in-flight budget. */
export interface SharedMemoryInputs {
  /** The bytes of each input reference (keyed by the request's reference objects). */
  readonly bytes: ReadonlyMap<SharedMemoryRef, Uint8Array>;
  /** Gives the bytes back to the in-flight budget once the request is answered (idempotent). */
  release(): void;
}

/** The names of the regions `request` refers to (inputs and requested outputs). */
export function sharedMemoryRegionsOf(request: CoreInferRequest): string[] {
  const names: string[] = [];
  for (const input of request.inputs)
    if (input.sharedMemory !== undefined) names.push(input.sharedMemory.region);
  for (const output of request.outputs ?? []) {
    if (output.sharedMemory !== undefined) names.push(output.sharedMemory.region);
  }
  return names;
}

/** Whether any input of `request` is in shared memory. */
export function hasSharedMemoryInputs(request: CoreInferRequest): boolean {
  for (const input of request.inputs) if (input.sharedMemory !== undefined) return true;
  return false;
}

/**
 * Resolves the request's shared-memory references, bounds its inputs' bytes by its
 * {@link CoreInferRequest.inputBudget} and reads them.
 * @throws ServerError the reference errors (NOT_FOUND, INVALID_ARG), {@link SharedMemoryInputTooLargeError},
 *   the budget's refusal (UNAVAILABLE), or a read failure; the budget is given back on every failure
 */
export async function readSharedMemoryInputs(
  request: CoreInferRequest,
  manager: SystemSharedMemoryManager,
): Promise<SharedMemoryInputs> {
  const refs: SharedMemoryRef[] = [];
  let total = 0;
  for (const input of request.inputs) {
    if (input.sharedMemory === undefined) continue;
    total += manager.check(input.sharedMemory);
    refs.push(input.sharedMemory);
  }
  for (const output of request.outputs ?? []) {
    if (output.sharedMemory !== undefined) manager.check(output.sharedMemory);
  }
  const budget = request.inputBudget;
  let giveBack: (() => void) | undefined;
  if (budget !== undefined) {
    const size = budget.heldBytes + total;
    if (size > budget.maxBytes)
      throw new SharedMemoryInputTooLargeError(size, budget.maxBytes, budget.maxBytesFlag);
    giveBack = budget.acquire(total);
  }
  const release = (): void => {
    const f = giveBack;
    giveBack = undefined;
    f?.();
  };
  const bytes = new Map<SharedMemoryRef, Uint8Array>();
  try {
    for (const ref of refs) bytes.set(ref, await manager.read(ref));
  } catch (error) {
    release();
    throw error;
  }
  return { bytes, release };
}
