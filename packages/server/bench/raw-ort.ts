/**
 * Bench helper: the ceiling — onnxruntime-node in this process, no server, one session, running
 * back-to-back batches of a given size; reports images per second.
 */
import ort from 'onnxruntime-node';

/** Images/s of one session at `batch` rows, after one warmup run, for about `durationMs`. */
export async function rawOrtThroughput(options: {
  readonly modelPath: string;
  readonly input: string;
  readonly dims: readonly number[];
  readonly batches: readonly number[];
  readonly intraOpThreads: number;
  readonly durationMs: number;
}): Promise<{ batch: number; imagesPerSecond: number }[]> {
  const session = await ort.InferenceSession.create(options.modelPath, {
    intraOpNumThreads: options.intraOpThreads,
    interOpNumThreads: 1,
    executionProviders: ['cpu'],
  });
  const perImage = options.dims.reduce((a, b) => a * b, 1);
  const out: { batch: number; imagesPerSecond: number }[] = [];
  try {
    for (const batch of options.batches) {
      const data = new Float32Array(batch * perImage).map(() => Math.random());
      const feeds = { [options.input]: new ort.Tensor('float32', data, [batch, ...options.dims]) };
      await session.run(feeds);
      let images = 0;
      const t0 = performance.now();
      while (performance.now() - t0 < options.durationMs) {
        await session.run(feeds);
        images += batch;
      }
      out.push({ batch, imagesPerSecond: images / ((performance.now() - t0) / 1000) });
    }
  } finally {
    await session.release();
  }
  return out;
}
