import 'server-only';
import { createHash, randomBytes } from 'node:crypto';
import { rename as renameCb, writeFile as writeFileCb } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { dirname, join, resolve } from 'node:path';
import { env } from '../env';
import type { FeedbackEvent, FeedbackRecord, Prediction } from '../lib/types';
import { GatewayError } from './errors';
import { checkPredictionId } from './prediction-id';
import type { ProductionObject, TaggableObjects } from './production-layout';
import { ProductionLayout } from './production-layout';
import { S3Client } from './s3-client';

/** Where feedback objects live: a directory or an S3-compatible bucket. Keys use `/`. */
export interface BlobStore {
  readonly kind: 'local' | 's3';
  put(key: string, body: Uint8Array | string, contentType: string): Promise<void>;
  get(key: string): Promise<Buffer | undefined>;
  /** Keys directly under `prefix` (which ends in `/`). */
  list(prefix: string): Promise<string[]>;
}

// The callback API: fs/promises' FileHandle path costs several times more main-thread time per write
// (measured with the gateway bench's CPU profile), and every prediction writes two files.
const writeFile = promisify(writeFileCb);
const rename = promisify(renameCb);

const SAFE_KEY = /^[\w./-]+$/;
function checkKey(key: string) {
  if (!SAFE_KEY.test(key) || key.includes('..') || key.startsWith('/')) throw new Error(`unsafe key ${key}`);
}

/** Files under a root directory. Writes go to a temp file then `rename`, so readers never see halves. */
export class LocalBlobStore implements BlobStore {
  readonly kind = 'local';
  readonly root: string;
  private readonly dirs = new Set<string>();
  constructor(root: string) {
    this.root = resolve(root);
  }
  async put(key: string, body: Uint8Array | string): Promise<void> {
    checkKey(key);
    const path = join(this.root, key);
    const dir = dirname(path);
    if (!this.dirs.has(dir)) {
      await mkdir(dir, { recursive: true });
      this.dirs.add(dir);
    }
    const tmp = `${path}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
    try {
      await writeFile(tmp, body);
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }
  async get(key: string): Promise<Buffer | undefined> {
    checkKey(key);
    try {
      return await readFile(join(this.root, key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
  async list(prefix: string): Promise<string[]> {
    checkKey(prefix);
    try {
      const names = await readdir(join(this.root, prefix));
      return names.filter((n) => !n.includes('.tmp-')).map((n) => `${prefix}${n}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}

/** An S3-compatible bucket (MinIO, AWS S3), path-style, SigV4-signed (see `s3-client.ts`). */
export class S3BlobStore implements BlobStore, TaggableObjects {
  readonly kind = 's3';
  private readonly s3: S3Client;
  private readonly base: string;
  private bucketReady: Promise<void> | undefined;
  constructor(opts: {
    endpoint: string;
    bucket: string;
    region: string;
    accessKeyId: string;
    secretAccessKey: string;
    timeoutMs?: number;
  }) {
    this.s3 = new S3Client(opts);
    this.base = `/${encodeURIComponent(opts.bucket)}`;
  }
  private ensureBucket(): Promise<void> {
    this.bucketReady ??= (async () => {
      // An existing bucket is used as it is (a key allowed objects only may not create buckets).
      if (ok((await this.s3.request('HEAD', this.base)).status)) return;
      const res = await this.s3.request('PUT', this.base);
      // 200 created; 409 BucketAlreadyOwnedByYou / BucketAlreadyExists.
      if (!ok(res.status) && res.status !== 409)
        throw new Error(`S3 create bucket: HTTP ${res.status} ${res.body.toString('utf8')}`);
    })().catch((err: unknown) => {
      this.bucketReady = undefined;
      throw err;
    });
    return this.bucketReady;
  }
  private path(key: string) {
    return `${this.base}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }
  async put(key: string, body: Uint8Array | string, contentType: string): Promise<void> {
    checkKey(key);
    await this.ensureBucket();
    const res = await this.s3.request('PUT', this.path(key), {
      body,
      headers: { 'content-type': contentType },
    });
    if (!ok(res.status)) throw new Error(`S3 PUT ${key}: HTTP ${res.status}`);
  }
  async get(key: string): Promise<Buffer | undefined> {
    checkKey(key);
    const res = await this.s3.request('GET', this.path(key));
    if (res.status === 404) return undefined;
    if (!ok(res.status)) throw new Error(`S3 GET ${key}: HTTP ${res.status}`);
    return res.body;
  }
  /** GetObjectTagging: the object's tags in stored order; throws when the object is missing. */
  async getTags(key: string): Promise<[string, string][]> {
    checkKey(key);
    const res = await this.s3.request('GET', `${this.path(key)}?tagging`);
    if (!ok(res.status)) throw new Error(`S3 GET ${key}?tagging: HTTP ${res.status}`);
    return parseTagSet(res.body.toString('utf8'));
  }
  /** PutObjectTagging: replaces the object's whole tag set. */
  async putTags(key: string, tags: [string, string][]): Promise<void> {
    checkKey(key);
    const body = tagSetXml(tags);
    const res = await this.s3.request('PUT', `${this.path(key)}?tagging`, {
      body,
      // AWS requires an integrity header on PutObjectTagging.
      headers: {
        'content-type': 'application/xml',
        'content-md5': createHash('md5').update(body).digest('base64'),
      },
    });
    if (!ok(res.status)) throw new Error(`S3 PUT ${key}?tagging: HTTP ${res.status}`);
  }
  async list(prefix: string): Promise<string[]> {
    checkKey(prefix);
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const q = new URLSearchParams({
        'list-type': '2',
        prefix,
        ...(token ? { 'continuation-token': token } : {}),
      });
      const res = await this.s3.request('GET', `${this.base}?${q}`);
      if (res.status === 404) return [];
      if (!ok(res.status)) throw new Error(`S3 LIST ${prefix}: HTTP ${res.status}`);
      const xml = res.body.toString('utf8');
      for (const m of xml.matchAll(/<Key>([^<]*)<\/Key>/g)) keys.push(decodeXml(m[1] ?? ''));
      token = /<IsTruncated>true<\/IsTruncated>/.test(xml)
        ? decodeXml(/<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(xml)?.[1] ?? '')
        : undefined;
    } while (token);
    return keys;
  }
}

const ok = (status: number) => status >= 200 && status < 300;

function encodeXml(s: string) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The body of PutObjectTagging. */
export function tagSetXml(tags: [string, string][]): string {
  const items = tags
    .map(([k, v]) => `<Tag><Key>${encodeXml(k)}</Key><Value>${encodeXml(v)}</Value></Tag>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet>${items}</TagSet></Tagging>`;
}

/** The tags of a GetObjectTagging answer, in document order. */
export function parseTagSet(xml: string): [string, string][] {
  const tags: [string, string][] = [];
  for (const m of xml.matchAll(/<Tag>([\s\S]*?)<\/Tag>/g)) {
    const inner = m[1] ?? '';
    const key = /<Key>([\s\S]*?)<\/Key>/.exec(inner)?.[1];
    const value = /<Value>([\s\S]*?)<\/Value>/.exec(inner)?.[1] ?? '';
    if (key !== undefined) tags.push([decodeXml(key), decodeXml(value)]);
  }
  return tags;
}

function decodeXml(s: string) {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

const EXT: Record<string, string> = {
  jpeg: 'jpg',
  png: 'png',
  webp: 'webp',
  gif: 'gif',
  tiff: 'tif',
  avif: 'avif',
  heif: 'heic',
};
const CONTENT_TYPE: Record<string, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  tiff: 'image/tiff',
  avif: 'image/avif',
  heif: 'image/heif',
};

/**
 * Stores predictions (upload + result) and feedback by prediction id. Layout:
 * `predictions/<id>.json`, `uploads/<id>.<ext>`, `feedback/<id>/<event>.json` — one object per
 * distinct event, named by a hash of what it says (kind, label, comment), never read-modify-write: a
 * confirmation, a flag and a correction sent together are all kept, and the same event sent twice is
 * stored once (the first one's time is kept). Older stores' `<time>-<random>.json` events are read too.
 *
 * With a {@link ProductionLayout} (S3 storage), every prediction of an upload is also written in the
 * original GourmetGram's layout in its own bucket, and feedback is merged into that object's tags;
 * the prediction's record names that object (`production`).
 *
 * By default (like Gradio's flagging) a prediction is persisted only when someone gives feedback on
 * it: recent predictions and their uploads wait in a bounded in-memory list. With
 * `FEEDBACK_SAVE_PREDICTIONS=true` (the original production branch's behaviour) every prediction is
 * persisted as it happens.
 */
export class FeedbackStore {
  private readonly pending = new Map<string, Promise<void>>();
  /** Event writes in flight by key: the same event arriving twice at once is written once. */
  private readonly eventWrites = new Map<string, Promise<{ event: FeedbackEvent; created: boolean }>>();
  private readonly recent = new Map<
    string,
    { prediction: Prediction; upload: Uint8Array; production: ProductionObject | undefined }
  >();
  private recentBytes = 0;

  constructor(
    readonly blobs: BlobStore,
    readonly recentLimits = { entries: 500, bytes: 64 * 1024 * 1024 },
    /** The original production layout (S3 only); undefined when off. */
    readonly production?: ProductionLayout,
  ) {}

  /**
   * Starts writing an upload's prediction in the original production layout (when configured; never
   * rejects) and returns where it goes. `fileName` is the upload's own name (its extension is kept).
   */
  recordProduction(
    prediction: Prediction,
    upload: Uint8Array,
    fileName: string,
  ): ProductionObject | undefined {
    return this.production?.record(prediction, upload, fileName);
  }

  /** Keeps a prediction in memory so later feedback can persist it with its upload. */
  remember(prediction: Prediction, upload: Uint8Array, production?: ProductionObject): void {
    const id = prediction.requestId;
    if (upload.byteLength > this.recentLimits.bytes) return;
    this.recent.set(id, { prediction, upload, production });
    this.recentBytes += upload.byteLength;
    for (const [oldId, old] of this.recent) {
      if (this.recent.size <= this.recentLimits.entries && this.recentBytes <= this.recentLimits.bytes) break;
      this.recent.delete(oldId);
      this.recentBytes -= old.upload.byteLength;
    }
  }

  /** Saves a prediction and its upload. Callers may fire and forget; feedback waits for it. */
  savePrediction(prediction: Prediction, upload: Uint8Array, production?: ProductionObject): Promise<void> {
    const id = prediction.requestId;
    const format = prediction.image.format;
    const key = `uploads/${id}.${EXT[format] ?? 'bin'}`;
    const contentType = CONTENT_TYPE[format] ?? 'application/octet-stream';
    const task = (async () => {
      await this.blobs.put(key, upload, contentType);
      const record = {
        ...prediction,
        upload: { key, contentType, bytes: upload.byteLength },
        ...(production ? { production } : {}),
      };
      await this.blobs.put(`predictions/${id}.json`, JSON.stringify(record, null, 1), 'application/json');
    })();
    this.pending.set(id, task);
    const done = () => {
      if (this.pending.get(id) === task) this.pending.delete(id);
    };
    task.then(done, done);
    return task;
  }

  /** Waits for every prediction save, production-layout write and tag update in flight. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending.values()]);
    await this.production?.flush();
  }

  /**
   * Makes sure the prediction is persisted (from memory if needed) and returns its production
   * object, if any; 404 when it is unknown.
   */
  private async ensureSaved(predictionId: string): Promise<ProductionObject | undefined> {
    await this.pending.get(predictionId)?.catch(() => undefined);
    const recent = this.recent.get(predictionId);
    const raw = await this.blobs.get(`predictions/${predictionId}.json`);
    if (raw) return recent?.production ?? (JSON.parse(raw.toString('utf8')) as StoredRecord).production;
    // Another feedback call may have started saving it while we looked.
    const inFlight = this.pending.get(predictionId);
    if (inFlight) {
      await inFlight;
      return recent?.production;
    }
    if (!recent)
      throw new GatewayError('NOT_FOUND', `No stored or recent prediction with id ${predictionId}.`);
    await this.savePrediction(recent.prediction, recent.upload, recent.production);
    return recent.production;
  }

  /**
   * Stores one feedback event as its own object, unless the same event (kind, label, comment) is
   * already stored for this prediction: then the stored one is answered with `created: false`. With
   * the production layout, a new event is also merged into the tags of the prediction's production
   * object (`confirmed=true` / `flagged=true` / `corrected_class=<label>`) before answering. A failed
   * tag update is logged and counted; the event is stored all the same.
   */
  async addEvent(
    predictionId: string,
    event: Omit<FeedbackEvent, 'at'>,
  ): Promise<{ event: FeedbackEvent; created: boolean }> {
    checkPredictionId(predictionId);
    const key = `feedback/${predictionId}/${eventName(event)}.json`;
    const inFlight = this.eventWrites.get(key);
    if (inFlight) return { event: (await inFlight).event, created: false };
    const task = (async () => {
      const production = await this.ensureSaved(predictionId);
      const stored = await this.blobs.get(key);
      if (stored) return { event: JSON.parse(stored.toString('utf8')) as FeedbackEvent, created: false };
      const full: FeedbackEvent = { ...event, at: new Date().toISOString() };
      await this.blobs.put(key, JSON.stringify(full), 'application/json');
      if (this.production && production) {
        if (event.kind === 'flag') await this.production.flag(production.key);
        else if (event.kind === 'confirm') await this.production.confirm(production.key);
        else if (event.correctLabel !== undefined)
          await this.production.correct(production.key, event.correctLabel);
      }
      return { event: full, created: true };
    })();
    this.eventWrites.set(key, task);
    try {
      return await task;
    } finally {
      if (this.eventWrites.get(key) === task) this.eventWrites.delete(key);
    }
  }

  async get(predictionId: string): Promise<FeedbackRecord | undefined> {
    checkPredictionId(predictionId);
    await this.pending.get(predictionId)?.catch(() => undefined);
    const raw = await this.blobs.get(`predictions/${predictionId}.json`);
    if (!raw) return undefined;
    const record = JSON.parse(raw.toString('utf8')) as StoredRecord;
    const { upload, production, ...prediction } = record;
    const keys = (await this.blobs.list(`feedback/${predictionId}/`)).sort();
    const events = (
      await Promise.all(
        keys.map(
          async (k) => JSON.parse((await this.blobs.get(k))?.toString('utf8') ?? '{}') as FeedbackEvent,
        ),
      )
    ).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    return {
      predictionId,
      prediction,
      ...(upload ? { upload } : {}),
      ...(production ? { production } : {}),
      events,
    };
  }
}

/**
 * The object name of a feedback event: `<kind>-<hash>`, the hash (SHA-256, 16 hex digits) of what the
 * event says, so the same event always lands on the same object.
 */
export function eventName(event: Omit<FeedbackEvent, 'at'>): string {
  const said = JSON.stringify([event.kind, event.correctLabel ?? null, event.comment ?? null]);
  return `${event.kind}-${createHash('sha256').update(said).digest('hex').slice(0, 16)}`;
}

/** `predictions/<id>.json`: the prediction plus where its upload and production object are. */
type StoredRecord = NonNullable<FeedbackRecord['prediction']> & {
  upload?: FeedbackRecord['upload'];
  production?: ProductionObject;
};

let store: { key: string; store: FeedbackStore | undefined } | undefined;

/** The configured store (undefined when FEEDBACK_STORAGE=none). */
export function feedbackStore(): FeedbackStore | undefined {
  const { feedback } = env();
  const key = JSON.stringify(feedback);
  if (!store || store.key !== key) {
    const blobs: BlobStore | undefined =
      feedback.storage === 'none'
        ? undefined
        : feedback.storage === 's3'
          ? new S3BlobStore(feedback.s3)
          : new LocalBlobStore(feedback.dir);
    const { productionLayout, productionBucket, productionMaxPendingBytes } = feedback.s3;
    const production =
      feedback.storage === 's3' && productionLayout
        ? new ProductionLayout(
            new S3BlobStore({ ...feedback.s3, bucket: productionBucket }),
            productionBucket,
            productionMaxPendingBytes,
          )
        : undefined;
    store = { key, store: blobs ? new FeedbackStore(blobs, undefined, production) : undefined };
  }
  return store.store;
}

/** Like {@link feedbackStore} but a 503 when feedback is switched off. */
export function requireFeedbackStore(): FeedbackStore {
  const s = feedbackStore();
  if (!s)
    throw new GatewayError(
      'FEEDBACK_STORE_FAILED',
      'Feedback storage is switched off (FEEDBACK_STORAGE=none).',
    );
  return s;
}
