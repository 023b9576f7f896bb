/**
 * Large photos are reduced in the browser before they are uploaded (browser only: it uses
 * `createImageBitmap` and a canvas). The model sees 224×224, so a 12-megapixel phone photo carries
 * nothing the answer needs; sending it in full costs the person's data and, over the gateway's
 * `MAX_UPLOAD_BYTES`, would only be refused.
 *
 * - A photo whose longer side is at most {@link MAX_UPLOAD_SIDE} and whose size is within the limit
 *   is sent as it is (byte for byte): never enlarged, never re-encoded for nothing.
 * - A larger one is drawn at {@link MAX_UPLOAD_SIDE} on its longer side, its EXIF orientation applied
 *   (`imageOrientation: 'from-image'`: the pixels are turned, so the JPEG needs no orientation tag),
 *   and encoded as JPEG (quality 0.9, then lower until it fits the limit).
 * - A file the browser cannot decode (not an image, HEIC in most browsers) is sent as it is: the
 *   gateway then answers with the reason.
 */

/** Longer side, in pixels, of a photo after reduction. */
export const MAX_UPLOAD_SIDE = 1600;

const QUALITIES = [0.9, 0.8, 0.7, 0.6];

/** What was done to a photo before upload. */
export interface Prepared {
  file: File;
  /** Set when the photo was reduced: its size before and after. */
  reduced?: {
    from: { width: number; height: number; bytes: number };
    to: { width: number; height: number; bytes: number };
  };
}

/** The size a `width`×`height` photo is reduced to (never larger than it is). */
export function reducedSize(
  width: number,
  height: number,
  maxSide = MAX_UPLOAD_SIDE,
): { width: number; height: number } {
  const scale = Math.min(1, maxSide / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

function jpegName(name: string): string {
  const stem = name.replace(/\.[^./\\]*$/, '') || 'photo';
  return `${stem}.jpg`;
}

function encode(canvas: HTMLCanvasElement, quality: number): Promise<Blob | null> {
  return new Promise((resolve) => canvas.toBlob(resolve, 'image/jpeg', quality));
}

/** The file to upload for `file`: itself, or a reduced JPEG (see the module comment). */
export async function prepareUpload(file: File, maxBytes: number): Promise<Prepared> {
  if (typeof createImageBitmap !== 'function' || typeof document === 'undefined') return { file };
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file, { imageOrientation: 'from-image' });
  } catch {
    return { file };
  }
  try {
    const { width, height } = bitmap;
    if (Math.max(width, height) <= MAX_UPLOAD_SIDE && file.size <= maxBytes) return { file };
    const to = reducedSize(width, height);
    const canvas = document.createElement('canvas');
    canvas.width = to.width;
    canvas.height = to.height;
    const ctx = canvas.getContext('2d');
    if (!ctx) return { file };
    ctx.imageSmoothingQuality = 'high';
    ctx.drawImage(bitmap, 0, 0, to.width, to.height);
    let blob: Blob | null = null;
    for (const q of QUALITIES) {
      blob = await encode(canvas, q);
      if (blob && blob.size <= maxBytes) break;
    }
    if (!blob) return { file };
    const reduced = new File([blob], jpegName(file.name || 'photo'), { type: 'image/jpeg' });
    return {
      file: reduced,
      reduced: { from: { width, height, bytes: file.size }, to: { ...to, bytes: reduced.size } },
    };
  } finally {
    bitmap.close();
  }
}

/** A small JPEG data URL of a photo, for the session history (kept across reloads); '' when it cannot be drawn. */
export async function thumbnail(file: Blob, maxSide = 160): Promise<string> {
  if (typeof createImageBitmap !== 'function' || typeof document === 'undefined') return '';
  try {
    const bitmap = await createImageBitmap(file, { imageOrientation: 'from-image' });
    const to = reducedSize(bitmap.width, bitmap.height, maxSide);
    const canvas = document.createElement('canvas');
    canvas.width = to.width;
    canvas.height = to.height;
    canvas.getContext('2d')?.drawImage(bitmap, 0, 0, to.width, to.height);
    bitmap.close();
    return canvas.toDataURL('image/jpeg', 0.7);
  } catch {
    return '';
  }
}
