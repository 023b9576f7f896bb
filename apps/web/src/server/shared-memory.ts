/**
 * The gateway's choice between sending an input tensor in the request body ("the wire") and through
 * Triton's system shared memory, and the one call that does either ({@link inferTensor}).
 *
 * `TRITON_SHARED_MEMORY`:
 * - `none`: always the wire.
 * - `auto` (default): shared memory when the server's address is loopback (`localhost`,
 *   `127.0.0.0/8`, `::1`); else the wire.
 * - `system`: shared memory whatever the address (a server reached by name that shares this
 *   host's IPC namespace, e.g. compose with `ipc: service:…`).
 *
 * Input regions come from a {@link ShmPool} per input byte size (`TRITON_SHARED_MEMORY_SLOTS`
 * regions, created and registered once, reused); a request finding every region leased goes over
 * the wire rather than wait. Outputs stay in the response body (11 floats). When a region cannot be
 * created or the server refuses to register it (it cannot open the key from another IPC namespace,
 * or refuses client shared memory, e.g. Triton ≥ 26.05 without `--allow-client-shm=true`), the
 * gateway logs one line and uses the wire from then on (for this server address); a register call
 * without an answer only sends that request over the wire. When an inference through a region
 * fails and the server no longer lists the region (it restarted), the regions are registered again
 * and the inference retried once; if the server refuses, the wire.
 *
 * Regions are unregistered and their objects removed when the process ends (SIGTERM / SIGINT:
 * both, best effort within a second; `exit`: the objects), and a new process sweeps what a killed
 * one left behind (see `shm-names.ts`).
 * @packageDocumentation
 */
import 'server-only';
import {
  TritonServerError,
  type InferOptions,
  type InferResult,
  type TritonClient,
} from '@tritonserver-ts/client';
import { env } from '../env';
import { poolPrefix, sweepStale } from './shm-names';
import { SHM_DIR, ShmPool, ShmPoolError, type ShmSlot } from './shm-pool';
import { logLine } from './request';

/** `TRITON_SHARED_MEMORY`. */
export type SharedMemoryMode = 'auto' | 'system' | 'none';

/** Whether `url`'s host is this machine's loopback (`localhost`, `*.localhost`, 127/8, ::1). */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url.replace(/^grpcs?:\/\//i, 'http://')).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '[::1]' || host === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** One server address's shared-memory state. */
class Channel {
  readonly pools = new Map<number, ShmPool>();
  disabled = false;
  #swept: Promise<unknown> | undefined;

  constructor(
    readonly key: string,
    readonly client: TritonClient,
    readonly slots: number,
    readonly timeoutMs: number,
  ) {}

  /** A leased region of `byteSize` bytes, or `undefined` when all are busy. */
  async lease(byteSize: number): Promise<ShmSlot | undefined> {
    // Before the first region of this process: what a killed predecessor left behind.
    await (this.#swept ??= sweepStale(this.client, SHM_DIR, this.timeoutMs));
    let pool = this.pools.get(byteSize);
    if (!pool) {
      pool = new ShmPool({
        client: this.client,
        byteSize,
        slots: this.slots,
        prefix: poolPrefix(),
        timeoutMs: this.timeoutMs,
      });
      this.pools.set(byteSize, pool);
      live.add(pool);
      installExitHooks();
    }
    return pool.lease();
  }

  /** Switches this address to the wire for good: one log line, regions released. */
  disable(reason: unknown): void {
    if (this.disabled) return;
    this.disabled = true;
    const { sharedMemory, log } = env();
    // Asked for explicitly (`system`): an error, always logged; `auto`: information.
    if (sharedMemory !== 'system' && !log) return void this.close();
    logLine({
      level: sharedMemory === 'system' ? 'error' : 'info',
      msg: 'system shared memory unavailable; input tensors go in the request body',
      triton: this.key,
      reason: reason instanceof Error ? reason.message : String(reason),
    });
    void this.close();
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(
      pools.map(async (p) => {
        await p.close();
        live.delete(p);
      }),
    );
  }
}

/** Every pool not yet closed (the `exit` hook removes their objects). */
const live = new Set<ShmPool>();
let channel: Channel | undefined;

/**
 * Whether a failure to set up a region is final: the server answered a refusal (another IPC
 * namespace, client shared memory disabled, …) or the object could not be made here. A register
 * call that got no answer (server down, timeout) is not: that request uses the wire, the next tries
 * again.
 */
function isRefusal(err: unknown): boolean {
  if (!(err instanceof ShmPoolError) || err.code !== 'SHM_REGISTER_FAILED') return true;
  return err.cause instanceof TritonServerError;
}

/** The state for the configured address and client, or `undefined` when the wire is chosen. */
function channelFor(client: TritonClient): Channel | undefined {
  const { sharedMemory, sharedMemorySlots, tritonProtocol, tritonUrl, inferenceTimeoutMs } = env();
  if (sharedMemory === 'none' || (sharedMemory === 'auto' && !isLoopbackUrl(tritonUrl))) return undefined;
  const key = `${tritonProtocol}|${tritonUrl}|${sharedMemory}|${sharedMemorySlots}`;
  if (channel?.key !== key || channel.client !== client) {
    void channel?.close();
    channel = new Channel(key, client, sharedMemorySlots, Math.min(5000, inferenceTimeoutMs));
  }
  return channel.disabled ? undefined : channel;
}

/** An FP32 input tensor for {@link inferTensor}. */
export interface TensorInput {
  readonly name: string;
  readonly shape: number[];
  readonly data: Float32Array;
}

/**
 * `client.infer` with one FP32 input, through a shared-memory region when the setting and the
 * server allow it, else in the request body. Same result and errors either way.
 */
export async function inferTensor(
  client: TritonClient,
  model: string,
  input: TensorInput,
  options: InferOptions,
): Promise<InferResult> {
  const { name, shape, data } = input;
  const wire = () => client.infer(model, [{ name, datatype: 'FP32', shape, data }], options);
  const ch = channelFor(client);
  if (!ch) return wire();
  const byteSize = data.byteLength;
  let slot: ShmSlot | undefined;
  try {
    slot = await ch.lease(byteSize);
    slot?.write(new Uint8Array(data.buffer, data.byteOffset, byteSize));
  } catch (err) {
    slot?.release();
    if (isRefusal(err)) ch.disable(err);
    return wire();
  }
  if (!slot) return wire(); // every region is in use
  const region = slot.region;
  const viaRegion = () =>
    client.infer(model, [{ name, datatype: 'FP32', shape, sharedMemory: { region, byteSize } }], options);
  try {
    try {
      return await viaRegion();
    } catch (err) {
      if (!(err instanceof TritonServerError)) throw err;
      // Switched to the wire while this request was in flight: its region may be gone.
      if (ch.disabled) return await wire();
      if (!(await forgotten(ch, byteSize, region))) throw err;
      // The server forgot the region (it restarted): register again, retry once.
      try {
        await ch.pools.get(byteSize)?.recover();
      } catch (recoverErr) {
        // No answer: the wire would fail the same way; the client's error maps to the right status.
        if (!isRefusal(recoverErr)) throw (recoverErr as ShmPoolError).cause;
        ch.disable(recoverErr);
        return await wire();
      }
      return await viaRegion();
    }
  } finally {
    slot.release();
  }
}

/** Whether the server no longer lists `region`; `false` when that cannot be told. */
async function forgotten(ch: Channel, byteSize: number, region: string): Promise<boolean> {
  const pool = ch.pools.get(byteSize);
  if (!pool) return false;
  try {
    return !(await pool.registered(region));
  } catch {
    return false;
  }
}

/** What the gateway holds now, for tests and diagnostics. */
export function sharedMemoryState(): {
  active: boolean;
  disabled: boolean;
  regions: string[];
  files: string[];
} {
  const pools = [...(channel?.pools.values() ?? [])];
  return {
    active: channel !== undefined && !channel.disabled,
    disabled: channel?.disabled ?? false,
    regions: pools.flatMap((p) => p.regions),
    files: pools.flatMap((p) => p.files),
  };
}

/** Unregisters every region and removes its object; the next request starts afresh. */
export async function closeSharedMemory(): Promise<void> {
  const ch = channel;
  channel = undefined;
  await ch?.close();
}

let hooked = false;

/**
 * On SIGTERM / SIGINT: unregister and unlink (at most a second), then, if no one else handles the
 * signal (Next.js does, and exits when its server has closed), re-raise it. On `exit`: unlink.
 */
function installExitHooks(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const p of live) p.unlinkAllSync();
  });
  const onSignal = (signal: NodeJS.Signals) => {
    const timer = new Promise((r) => setTimeout(r, 1000).unref());
    void Promise.race([closeSharedMemory(), timer]).finally(() => {
      process.removeListener(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
