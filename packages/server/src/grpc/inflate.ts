/**
 * Compressed gRPC requests are inflated within limits (issue 23, item 3). grpc-js inflates a
 * `grpc-encoding: gzip|deflate` message in full before the application sees it, checking only
 * `grpc.max_receive_message_length` (tritonserver's 2 GiB here), so a 1 MiB message that inflates to
 * 1 GiB costs 1 GiB, times the calls that send one. This module replaces grpc-js's inflation step for
 * the methods of a server that asks for it ({@link inflatePolicyOf}): the output is reserved out of the
 * in-flight request budget the HTTP front end uses (`--http-max-inflight-body-bytes`) as it is
 * produced, and inflation stops with RESOURCE_EXHAUSTED the moment the message passes
 * `--grpc-max-message-bytes` or the budget, so memory never holds more than the budget allows. The
 * reservation is held by the decoded request until its call returns it ({@link releaseRequestMemory})
 * or the call's stream closes. Uncompressed messages are counted too, from the moment they are
 * decoded (grpc-js has already read them): a message the budget cannot hold becomes
 * {@link OverBudget} and its call is refused with UNAVAILABLE (HTTP's 503 for the same budget: the
 * request is fine, retry later), so decoded requests of both
 * front ends in flight stay within one budget. A request that is dropped without being returned
 * (a stream cancelled with requests still buffered) gives its reservation back when it is collected.
 *
 * grpc-js has no hook for this: the step is `BaseServerInterceptingCall.prototype.decompressMessage`
 * (grpc-js 1.14), replaced once per process; methods without a policy (other servers, other
 * libraries' services) get grpc-js's own. `test/grpc/memory-process.test.ts` fails if a grpc-js update
 * moves the step.
 * @packageDocumentation
 */
import { createRequire } from 'node:module';
import { createGunzip, createInflate } from 'node:zlib';

import { status as GrpcStatus } from '@grpc/grpc-js';

import type { MemoryBudget, Reservation } from '../http/memory-budget.js';
import { packedBytesOf } from './packed-request.js';

/** How one server's methods inflate: the shared budget and the reservations of inflated messages. */
export interface InflatePolicy {
  readonly budget: MemoryBudget;
}

/** Where a policy hangs on a method's request deserializer. */
const POLICY = Symbol('tritonserver-ts inflate policy');

/** Reservations of inflated message buffers, until their deserializer takes them. */
const bufferReservations = new WeakMap<Buffer, Reservation>();
/** Reservations of decoded requests, until their call returns them. */
const requestReservations = new WeakMap<object, Reservation>();
/** A request dropped without being returned gives its memory back when it is collected. */
const collected = new FinalizationRegistry<Reservation>((reservation) => reservation.release());

/** Stands for a request whose message the in-flight budget could not hold (see the module comment). */
export class OverBudget {
  constructor(
    /** The budget's refusal, for the call's status. */
    readonly message: string,
    /** The request's `id` when it has one (a stream's in-band answer carries it). */
    readonly id: string,
  ) {}
}

/** True when `message` is a request the in-flight budget could not hold. */
export function isOverBudget(message: unknown): message is OverBudget {
  return message instanceof OverBudget;
}

/** Marks `deserialize` (a method's request deserializer) as inflating under `policy`. */
export function withInflatePolicy<F extends (bytes: Buffer) => unknown>(
  deserialize: F,
  policy: InflatePolicy,
): F {
  (deserialize as F & { [POLICY]?: InflatePolicy })[POLICY] = policy;
  return deserialize;
}

/** The policy `deserialize` was marked with. */
export function inflatePolicyOf(deserialize: unknown): InflatePolicy | undefined {
  return typeof deserialize === 'function'
    ? (deserialize as { [POLICY]?: InflatePolicy })[POLICY]
    : undefined;
}

/**
 * Called by a deserializer with the bytes it decoded into `request`: the reservation of those bytes
 * (if they were inflated under a policy) now belongs to the request.
 */
export function adoptMessageMemory(bytes: Buffer, request: unknown): void {
  const reservation = bufferReservations.get(bytes);
  if (reservation === undefined) return;
  bufferReservations.delete(bytes);
  hold(request, reservation);
}

function hold(request: unknown, reservation: Reservation): void {
  if (typeof request !== 'object' || request === null) {
    reservation.release();
    return;
  }
  requestReservations.set(request, reservation);
  collected.register(request, reservation, reservation);
}

/**
 * Called by a deserializer with the bytes it decoded into `request` under `policy`: an inflated
 * message's reservation passes to the request; an uncompressed message is reserved now. Returns
 * `request`, or {@link OverBudget} when the budget cannot hold the message.
 */
export function accountMessage(bytes: Buffer, request: unknown, policy: InflatePolicy): unknown {
  // BYTES contents the reader packed out of the message are the request's too (decoded size).
  const packed = packedBytesOf(request);
  if (bufferReservations.has(bytes)) {
    adoptMessageMemory(bytes, request);
    if (packed === 0) return request;
    try {
      requestReservations.get(request as object)?.grow(packed);
    } catch (error) {
      releaseRequestMemory(request);
      const id = (request as { id?: unknown }).id;
      return new OverBudget((error as Error).message, typeof id === 'string' ? id : '');
    }
    return request;
  }
  if (typeof request !== 'object' || request === null) return request;
  const reservation = policy.budget.open();
  try {
    reservation.grow(bytes.byteLength + packed);
  } catch (error) {
    const id = (request as { id?: unknown }).id;
    return new OverBudget((error as Error).message, typeof id === 'string' ? id : '');
  }
  hold(request, reservation);
  return request;
}

/** Returns the memory `request`'s inflated message held to the budget (idempotent). */
export function releaseRequestMemory(request: unknown): void {
  if (typeof request !== 'object' || request === null) return;
  const reservation = requestReservations.get(request);
  if (reservation === undefined) return;
  requestReservations.delete(request);
  collected.unregister(reservation);
  reservation.release();
}

/** The parts of grpc-js's server call this module uses. */
interface ServerCallInternals {
  readonly handler: { readonly deserialize?: unknown } | null;
  readonly maxReceiveMessageSize: number;
  readonly stream: { once(event: 'close', listener: () => void): unknown };
  decompressMessage(message: Buffer, encoding: string): Buffer | Promise<Buffer>;
}

/**
 * A gRPC status grpc-js sends for a message it could not take (grpc-js rejects with a plain
 * `{ code, details }`; an Error carrying both works the same).
 */
class InflateRefusal extends Error {
  constructor(
    readonly code: GrpcStatus,
    readonly details: string,
  ) {
    super(details);
    this.name = 'InflateRefusal';
  }
}

const INFLATE_CHUNK_BYTES = 64 * 1024;

function inflateWithin(
  contents: Buffer,
  encoding: 'gzip' | 'deflate',
  maxBytes: number,
  reservation: Reservation,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const inflater =
      encoding === 'gzip'
        ? createGunzip({ chunkSize: INFLATE_CHUNK_BYTES })
        : createInflate({ chunkSize: INFLATE_CHUNK_BYTES });
    const parts: Buffer[] = [];
    let total = 0;
    let failed = false;
    const fail = (status: InflateRefusal): void => {
      if (failed) return;
      failed = true;
      parts.length = 0;
      inflater.destroy();
      reservation.release();
      reject(status);
    };
    inflater.on('data', (chunk: Buffer) => {
      total += chunk.byteLength;
      if (maxBytes !== -1 && total > maxBytes) {
        // grpc-js's words for the same limit.
        fail(
          new InflateRefusal(
            GrpcStatus.RESOURCE_EXHAUSTED,
            `Received message that decompresses to a size larger than ${maxBytes}`,
          ),
        );
        return;
      }
      try {
        reservation.grow(chunk.byteLength);
      } catch (error) {
        fail(new InflateRefusal(GrpcStatus.RESOURCE_EXHAUSTED, (error as Error).message));
        return;
      }
      parts.push(chunk);
    });
    inflater.on('error', () => fail(new InflateRefusal(GrpcStatus.INTERNAL, 'Failed to decompress message')));
    inflater.on('end', () => {
      if (failed) return;
      if (parts.length === 1) {
        resolve(parts[0] as Buffer);
        return;
      }
      // Joining the parts holds them twice for a moment: reserve that too.
      try {
        reservation.grow(total);
      } catch (error) {
        fail(new InflateRefusal(GrpcStatus.RESOURCE_EXHAUSTED, (error as Error).message));
        return;
      }
      const joined = Buffer.concat(parts, total);
      parts.length = 0;
      reservation.shrink(total);
      resolve(joined);
    });
    inflater.end(contents);
  });
}

let installed = false;

/**
 * Replaces grpc-js's inflation step (once per process) so that methods marked with
 * {@link withInflatePolicy} inflate within their policy.
 * @throws Error when the installed grpc-js has no such step (a version this module does not know)
 */
export function installBudgetedInflate(): void {
  if (installed) return;
  const require = createRequire(import.meta.url);
  const internals = require('@grpc/grpc-js/build/src/server-interceptors.js') as {
    BaseServerInterceptingCall?: { prototype: ServerCallInternals };
  };
  const proto = internals.BaseServerInterceptingCall?.prototype;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the call as `this` below
  const original = proto?.decompressMessage;
  if (proto === undefined || typeof original !== 'function') {
    throw new Error(
      '@grpc/grpc-js has no BaseServerInterceptingCall.decompressMessage: update src/grpc/inflate.ts',
    );
  }
  proto.decompressMessage = function decompressMessage(
    this: ServerCallInternals,
    message: Buffer,
    encoding: string,
  ): Buffer | Promise<Buffer> {
    const policy = inflatePolicyOf(this.handler?.deserialize);
    if (policy === undefined || (encoding !== 'gzip' && encoding !== 'deflate')) {
      return original.call(this, message, encoding);
    }
    const reservation = policy.budget.open();
    // Whatever becomes of the message, its memory is returned when the call's stream closes.
    this.stream.once('close', () => reservation.release());
    return inflateWithin(message.subarray(5), encoding, this.maxReceiveMessageSize, reservation).then(
      (inflated) => {
        bufferReservations.set(inflated, reservation);
        return inflated;
      },
    );
  };
  installed = true;
}
