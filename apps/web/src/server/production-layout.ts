/**
 * The original GourmetGram's production layout in S3/MinIO, written beside our own records so the
 * course's later tools (labelling, retraining) find the objects they expect:
 *
 * - bucket `production` (`S3_PRODUCTION_BUCKET`), one object per prediction at
 *   `class_{idx:02d}/{uuid}{ext}`: the predicted class index, the prediction id, the upload's own
 *   extension; the body is the upload byte for byte, its content type guessed from that extension;
 * - object tags set through the tagging API: `predicted_class`, `confidence` (three decimals, rounded
 *   as Python's `f"{p:.3f}"`), `timestamp` (UTC, `%Y-%m-%dT%H:%M:%SZ`); `confirmed=true` after a
 *   "looks right" (beyond the original), `flagged=true` after a flag
 *   and `corrected_class=<label>` after a correction, merged into the existing tags (read, update,
 *   write back), one update at a time per object in this process.
 *
 * Failures never reach the caller: they are logged and counted ({@link ProductionLayout.counts}).
 */
import 'server-only';
import { FOOD11_CLASSES } from '@gourmetgram/food-model/contract';
import type { Prediction } from '../lib/types';
import { logLine } from './request';

/** The object operations the layout needs (implemented by `S3BlobStore`). */
export interface TaggableObjects {
  put(key: string, body: Uint8Array | string, contentType: string): Promise<void>;
  /** The object's tags in their stored order; throws when the object is missing. */
  getTags(key: string): Promise<[string, string][]>;
  putTags(key: string, tags: [string, string][]): Promise<void>;
}

/** Where one prediction's upload lives in the production bucket. */
export interface ProductionObject {
  bucket: string;
  key: string;
  contentType: string;
}

/** Content types of the image extensions, as Python's `mimetypes.guess_type` answers them. */
const CONTENT_TYPE_BY_EXT: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  jpe: 'image/jpeg',
  jfif: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  avif: 'image/avif',
  heic: 'image/heic',
  heif: 'image/heif',
  bmp: 'image/bmp',
};

/** Extension (without dot) for each format the decoder reports, for names without a usable one. */
const EXT_BY_FORMAT: Record<string, string> = {
  jpeg: 'jpg',
  png: 'png',
  webp: 'webp',
  gif: 'gif',
  tiff: 'tif',
  avif: 'avif',
  heif: 'heic',
};

/**
 * The extension of an uploaded file's name, with its dot and its case (`.JPG`), or `''` when the
 * name has none a key may carry (1–16 ASCII letters or digits after the last dot of the base name).
 */
export function extensionOf(fileName: string): string {
  const base = fileName.split(/[/\\]/).pop() ?? '';
  const m = /.\.([A-Za-z0-9]{1,16})$/.exec(base);
  return m ? `.${m[1]}` : '';
}

/** Content type from an extension (`.jpg` → `image/jpeg`, any case); octet-stream when unknown. */
export function contentTypeOf(ext: string): string {
  return CONTENT_TYPE_BY_EXT[ext.replace(/^\./, '').toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The predicted class index: the model's output index, or (when the model answers only a label, as
 * the Python-backend path does) the label's place in the Food-11 classes the original app hard-coded
 * (`FOOD11_CLASSES` of the model contract, `@gourmetgram/food-model/contract`).
 */
export function classIndexOf(prediction: Pick<Prediction, 'label' | 'top'>): number | undefined {
  const best = prediction.top[0];
  if (best && best.index >= 0) return best.index;
  const i = (FOOD11_CLASSES as readonly string[]).indexOf(prediction.label);
  return i >= 0 ? i : undefined;
}

/**
 * Key and content type of a prediction's object: `class_{idx:02d}/{uuid}{ext}`. A name without a
 * usable extension gets the one of the format the decoder found (the original stored such a file
 * with no extension, as `application/octet-stream`). Undefined when the class index is unknown.
 */
export function productionKey(
  prediction: Pick<Prediction, 'requestId' | 'label' | 'top' | 'image'>,
  fileName: string,
): { key: string; contentType: string } | undefined {
  const idx = classIndexOf(prediction);
  if (idx === undefined) return undefined;
  let ext = extensionOf(fileName);
  if (!ext) {
    const byFormat = EXT_BY_FORMAT[prediction.image.format];
    ext = byFormat ? `.${byFormat}` : '';
  }
  return {
    key: `class_${String(idx).padStart(2, '0')}/${prediction.requestId}${ext}`,
    contentType: contentTypeOf(ext),
  };
}

/**
 * A probability with three decimals, exactly as Python's `f"{p:.3f}"` writes it. Both round the
 * exact binary value to nearest; they differ only on exact ties, which `toFixed` rounds up and Python
 * rounds to even. With three decimals the only exact ties are the odd multiples of 1/16
 * (0.0625 → `0.062`, 0.1875 → `0.188`).
 */
export function formatConfidence(p: number): string {
  const sixteenths = p * 16; // exact in binary
  if (Number.isInteger(sixteenths) && sixteenths % 2 !== 0) {
    const thousandths = p * 1000; // an exact half: k + 0.5
    const down = Math.floor(thousandths);
    return ((down % 2 === 0 ? down : down + 1) / 1000).toFixed(3);
  }
  return p.toFixed(3);
}

/** An ISO instant (`2026-11-21T10:49:50.123Z`) in the original's tag format, `2026-11-21T10:49:50Z`. */
export function originalTimestamp(iso: string): string {
  const d = new Date(iso);
  return `${d.toISOString().slice(0, 19)}Z`;
}

/**
 * A tag value S3 and MinIO both accept: at most 256 characters among ASCII letters, digits, space and
 * `+ - . _ : / @` (AWS also allows `=` and non-ASCII letters; MinIO does not); others become `_`.
 */
export function tagValue(s: string): string {
  const v = s.replace(/[^A-Za-z0-9 +\-._:/@]/g, '_').slice(0, 256);
  return v || '_';
}

/** Counters of the layout's writes since the process started. */
export interface ProductionCounts {
  objectsWritten: number;
  objectWriteFailures: number;
  /** Predictions with no class index (a label outside the original's classes). */
  skipped: number;
  /** Predictions not written because the uploads still being written already held the byte bound. */
  dropped: number;
  tagUpdates: number;
  tagUpdateFailures: number;
}

/** Writes predictions in the original production layout and merges feedback into their tags. */
export class ProductionLayout {
  readonly counts: ProductionCounts = {
    objectsWritten: 0,
    objectWriteFailures: 0,
    skipped: 0,
    dropped: 0,
    tagUpdates: 0,
    tagUpdateFailures: 0,
  };
  /** Object writes in flight by key: tag updates wait for them. */
  private readonly writes = new Map<string, Promise<boolean>>();
  /** The last tag update queued per key: updates of one object run one after another. */
  private readonly tagChains = new Map<string, Promise<boolean>>();
  /** Bytes of the uploads being written (held in memory until their write ends). */
  private pendingBytes = 0;

  constructor(
    readonly objects: TaggableObjects,
    readonly bucket: string,
    /**
     * Most upload bytes held by writes in flight: when S3 is slow or silent, later predictions are
     * not written (counted as `dropped`) rather than piling up in memory. One upload is always let
     * through when nothing is pending.
     */
    readonly maxPendingBytes = 64 * 1024 * 1024,
  ) {}

  /**
   * Starts writing a prediction's upload and tags (never rejects; failures are logged and counted)
   * and returns where it goes, or undefined when the class index is unknown or the write is dropped.
   */
  record(prediction: Prediction, upload: Uint8Array, fileName: string): ProductionObject | undefined {
    const planned = productionKey(prediction, fileName);
    if (!planned) {
      this.counts.skipped++;
      logLine({
        level: 'warn',
        msg: 'production layout: no class index for this label; not written',
        requestId: prediction.requestId,
        label: prediction.label,
      });
      return undefined;
    }
    const obj: ProductionObject = { bucket: this.bucket, ...planned };
    const size = upload.byteLength;
    if (this.pendingBytes > 0 && this.pendingBytes + size > this.maxPendingBytes) {
      this.counts.dropped++;
      logLine({
        level: 'warn',
        msg: 'production layout: too many bytes still being written; this upload is not written',
        bucket: this.bucket,
        key: obj.key,
        pendingBytes: this.pendingBytes,
      });
      return undefined;
    }
    this.pendingBytes += size;
    const tags: [string, string][] = [
      ['predicted_class', tagValue(prediction.label)],
      ['confidence', formatConfidence(prediction.probability)],
      ['timestamp', originalTimestamp(prediction.createdAt)],
    ];
    const task = this.writeObject(obj, upload, tags);
    this.writes.set(obj.key, task);
    void task.then(() => {
      this.pendingBytes -= size;
      if (this.writes.get(obj.key) === task) this.writes.delete(obj.key);
    });
    return obj;
  }

  private async writeObject(
    obj: ProductionObject,
    upload: Uint8Array,
    tags: [string, string][],
  ): Promise<boolean> {
    try {
      await this.objects.put(obj.key, upload, obj.contentType);
      await this.objects.putTags(obj.key, tags);
      this.counts.objectsWritten++;
      return true;
    } catch (err) {
      this.counts.objectWriteFailures++;
      logLine({
        level: 'error',
        msg: 'production layout: writing the object failed',
        bucket: this.bucket,
        key: obj.key,
        err: String(err),
      });
      return false;
    }
  }

  /** `flagged=true`, added once (the original left an existing `flagged` tag alone). */
  flag(key: string): Promise<boolean> {
    return this.updateTags(key, (tags) => {
      if (!tags.has('flagged')) tags.set('flagged', 'true');
    });
  }

  /** `confirmed=true` (a person said the prediction looks right), added once. */
  confirm(key: string): Promise<boolean> {
    return this.updateTags(key, (tags) => {
      if (!tags.has('confirmed')) tags.set('confirmed', 'true');
    });
  }

  /** `corrected_class=<label>`, replacing an earlier correction. */
  correct(key: string, label: string): Promise<boolean> {
    return this.updateTags(key, (tags) => {
      tags.set('corrected_class', tagValue(label));
    });
  }

  /**
   * Reads the object's tags, applies `change`, writes them all back (the tagging API replaces the
   * whole set). Waits for the object's write; one update per object at a time. Never rejects:
   * false (logged and counted) when it failed.
   */
  updateTags(key: string, change: (tags: Map<string, string>) => void): Promise<boolean> {
    const previous = this.tagChains.get(key) ?? Promise.resolve(true);
    const task = previous.then(async () => {
      try {
        await this.writes.get(key);
        const tags = new Map(await this.objects.getTags(key));
        change(tags);
        await this.objects.putTags(key, [...tags]);
        this.counts.tagUpdates++;
        return true;
      } catch (err) {
        this.counts.tagUpdateFailures++;
        logLine({
          level: 'error',
          msg: 'production layout: updating tags failed',
          bucket: this.bucket,
          key,
          err: String(err),
        });
        return false;
      }
    });
    this.tagChains.set(key, task);
    void task.then(() => {
      if (this.tagChains.get(key) === task) this.tagChains.delete(key);
    });
    return task;
  }

  /** Waits for every object write and tag update in flight. */
  async flush(): Promise<void> {
    await Promise.all([...this.writes.values(), ...this.tagChains.values()]);
  }
}
