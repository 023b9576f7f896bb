/**
 * What every load manager shares: the request sender (set up on the first level), the records,
 * the in-flight count, and a bounded stop.
 * @packageDocumentation
 */
import { PerfError } from '../errors.js';
import type { InputDataset } from '../types.js';
import type { LoadContext, LoadManager } from './load-manager.js';
import { RequestSender } from './request-sender.js';
import { SequenceManager, type SequenceStatus } from './sequences.js';

/** How long {@link LoadManager.stop} waits for requests in flight by default. */
const DEFAULT_STOP_TIMEOUT_MS = 30_000;

/** After the stop timeout, how long aborted requests get to settle. */
const ABORT_GRACE_MS = 1_000;

/** How long releasing the stream and the shared-memory regions may take. */
const RELEASE_TIMEOUT_MS = 5_000;

/** Resolves true when `promise` settles within `ms`, false otherwise. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** One data entry of a model without sequences. */
interface DataPosition {
  readonly stream: number;
  readonly step: number;
}

/** Every entry of the dataset, stream by stream, step by step (requests cycle through them). */
function dataPositions(dataset: InputDataset): DataPosition[] {
  const positions: DataPosition[] = [];
  dataset.streams.forEach((steps, stream) => {
    for (let step = 0; step < steps.length; step++) positions.push({ stream, step });
  });
  return positions;
}

/** The parts of a load manager that do not depend on its mode. */
export abstract class BaseLoadManager implements LoadManager {
  protected readonly context: LoadContext;
  /** Sequence bookkeeping when the model has `sequence_batching`. */
  protected readonly sequences: SequenceManager | undefined;
  /** Every data entry, for models without sequences. */
  protected readonly positions: readonly DataPosition[];
  #cursor = 0;
  #setup: Promise<RequestSender> | undefined;
  #sender: RequestSender | undefined;
  #stopping: Promise<void> | undefined;
  #stopped = false;

  constructor(context: LoadContext) {
    this.context = context;
    this.sequences = context.model.sequenceBatching
      ? new SequenceManager(context.options, context.dataset)
      : undefined;
    this.positions = dataPositions(context.dataset);
  }

  abstract changeLevel(level: number, requestLimit?: number): Promise<void>;

  /** Stops issuing (wakes any wait); the requests in flight finish on their own. */
  protected abstract halt(): void;

  /** True once {@link stop} was called. */
  protected get stopped(): boolean {
    return this.#stopped;
  }

  /** The sender, created on first use (shared-memory regions, gRPC stream). */
  protected async sender(): Promise<RequestSender> {
    if (this.#stopped) throw new PerfError('USAGE', 'the load manager is stopped');
    const { client, model, dataset, options } = this.context;
    this.#setup ??= RequestSender.create(client, model, dataset, options).then((sender) => {
      this.#sender = sender;
      return sender;
    });
    try {
      return await this.#setup;
    } catch (error) {
      this.#setup = undefined;
      throw error;
    }
  }

  /** The next data entry of a model without sequences (round robin over every entry). */
  protected nextPosition(): DataPosition {
    const position = this.positions[this.#cursor] as DataPosition;
    this.#cursor = this.#cursor + 1 === this.positions.length ? 0 : this.#cursor + 1;
    return position;
  }

  takeRecords(): ReturnType<LoadManager['takeRecords']> {
    return this.#sender?.takeRecords() ?? [];
  }

  get inFlight(): number {
    return this.#sender?.inFlight ?? 0;
  }

  /** Sequence statuses to complete when the run stops. */
  protected liveSequences(): readonly SequenceStatus[] {
    const sequences = this.sequences;
    if (sequences === undefined) return [];
    return Array.from({ length: sequences.size }, (_, i) => sequences.at(i)).filter((s) => s.remaining > 0);
  }

  stop(timeoutMs = DEFAULT_STOP_TIMEOUT_MS): Promise<void> {
    this.#stopping ??= this.#stop(timeoutMs);
    return this.#stopping;
  }

  async #stop(timeoutMs: number): Promise<void> {
    this.#stopped = true;
    this.halt();
    const started = Date.now();
    const left = (): number => timeoutMs - (Date.now() - started);
    const setup = this.#setup;
    if (setup === undefined) return;
    if (!(await within(setup, left()))) {
      // The setup hangs (server unresponsive): release whatever it ends with, in the background.
      void setup.then((sender) => sender.close()).catch(() => undefined);
      return;
    }
    const sender = this.#sender;
    if (sender === undefined) return;
    let idle = await within(sender.whenIdle(), left());
    if (idle && this.sequences !== undefined) {
      // perf_analyzer completes the sequences in progress (an END request each).
      for (const status of this.liveSequences()) {
        const request = this.sequences.finish(status);
        if (request !== undefined) void sender.send(request.stream, request.step, request, false);
      }
      idle = await within(sender.whenIdle(), left());
    }
    if (!idle) {
      sender.abort();
      await within(sender.whenIdle(), ABORT_GRACE_MS);
    }
    await within(sender.close(), RELEASE_TIMEOUT_MS);
  }
}
