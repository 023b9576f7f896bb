/**
 * Bench helper: the ceiling — onnxruntime-node in this process, no server, one session running
 * back-to-back batches of a given size.
 */
import ort from 'onnxruntime-node';

/** One in-process session measured at various batch sizes. */
export class RawOrt {
  private readonly feeds = new Map<number, Record<string, ort.Tensor>>();

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly input: string,
    private readonly dims: readonly number[],
  ) {}

  static async create(options: {
    readonly modelPath: string;
    readonly input: string;
    readonly dims: readonly number[];
    readonly intraOpThreads: number;
  }): Promise<RawOrt> {
    const session = await ort.InferenceSession.create(options.modelPath, {
      intraOpNumThreads: options.intraOpThreads,
      interOpNumThreads: 1,
      executionProviders: ['cpu'],
    });
    return new RawOrt(session, options.input, options.dims);
  }

  /** Images per second at `batch` rows over about `durationMs` (after one unmeasured run). */
  async measure(batch: number, durationMs: number): Promise<number> {
    const r = await this.measureRun(batch, durationMs);
    return r.images / r.seconds;
  }

  /** Images run at `batch` rows over about `durationMs` (after one unmeasured run), and the seconds taken. */
  async measureRun(batch: number, durationMs: number): Promise<{ images: number; seconds: number }> {
    let feeds = this.feeds.get(batch);
    if (feeds === undefined) {
      const perImage = this.dims.reduce((a, b) => a * b, 1);
      const data = new Float32Array(batch * perImage).map(() => Math.random());
      feeds = { [this.input]: new ort.Tensor('float32', data, [batch, ...this.dims]) };
      this.feeds.set(batch, feeds);
    }
    await this.session.run(feeds);
    let images = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < durationMs) {
      await this.session.run(feeds);
      images += batch;
    }
    return { images, seconds: (performance.now() - t0) / 1000 };
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
