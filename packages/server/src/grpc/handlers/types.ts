/**
 * The shape of one unary RPC handler of the gRPC front end.
 * @packageDocumentation
 */
import type { Metadata } from '@grpc/grpc-js';

import type { InferenceServer } from '../../core/server.js';

/** What a handler is given besides its request. */
export interface CallContext {
  readonly core: InferenceServer;
  /** The call's metadata (lower-case keys). */
  readonly metadata: Metadata;
  /** Aborted when the client cancels the call or goes away. */
  readonly signal: AbortSignal;
  /** `process.hrtime.bigint()` when the call arrived. */
  readonly receivedAt: bigint;
}

/** One unary RPC: request message → response message (or a thrown `ServerError`). */
export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Res | Promise<Res>;
