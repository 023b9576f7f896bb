/**
 * Runs once when the server starts: warms libvips (the first decode otherwise costs ~300 ms) and
 * reads the model's config and labels, so the first visitor does not pay for either. Failures are
 * ignored here: the inference server may come up later, and requests retry the read.
 */
export async function register(): Promise<void> {
  // Next's own runtime marker, not configuration (which src/env.ts alone reads).
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const [{ preprocessImage }, { getModelInfo }] = await Promise.all([
    import('@gourmetgram/image-preprocess'),
    import('./server/triton'),
  ]);
  const sharp = (await import('sharp')).default;
  // Photo-sized, so the JS resampler's loops get compiled too.
  const tiny = await sharp({ create: { width: 307, height: 173, channels: 3, background: '#7a5' } })
    .jpeg()
    .toBuffer();
  await preprocessImage(tiny).catch(() => undefined);
  void getModelInfo().catch(() => undefined);
}
