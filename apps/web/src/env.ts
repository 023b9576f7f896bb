/**
 * The app's configuration: the only module that reads `process.env`. Validated with zod on first
 * use; a bad value stops the request with a readable message naming the variable.
 */
import 'server-only';
import { availableParallelism } from 'node:os';
import { z } from 'zod';

const MiB = 1024 * 1024;

/** An HTTP address: `host:port` (the original GourmetGram's form) or a full http(s) URL with an
 * optional base path. */
function httpAddress(v: string, ctx: z.RefinementCtx, name: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(v) ? v : `http://${v}`;
  try {
    const u = new URL(withScheme);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    return withScheme.replace(/\/+$/, '');
  } catch {
    ctx.addIssue({
      code: 'custom',
      path: [name],
      message: `not host:port, an http(s) URL or a grpc(s):// URL: "${v}"`,
    });
    return '';
  }
}

/**
 * A gRPC address as `grpc://host:port` or `grpcs://host:port` (TLS): from `host[:port]` or either URL
 * form; Triton's gRPC port 8001 when none is given. gRPC has no paths: one is refused.
 */
function grpcAddress(v: string, ctx: z.RefinementCtx, name: string): string {
  const m = /^(?:(grpcs?):\/\/)?(\[[0-9a-f:.]+\]|[^/:\s[\]]+)(?::(\d{1,5}))?\/?$/i.exec(v);
  const port = m?.[3] === undefined ? 8001 : Number(m[3]);
  if (!m || port < 1 || port > 65_535) {
    ctx.addIssue({
      code: 'custom',
      path: [name],
      message: `not host:port or a grpc(s)://host:port URL: "${v}"`,
    });
    return '';
  }
  return `${(m[1] ?? 'grpc').toLowerCase()}://${m[2]!}:${port}`;
}

const isGrpc = (url: string): boolean => /^grpcs?:\/\//i.test(url);
const hasScheme = (url: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(url);

/**
 * The inference server's protocol and address. HTTP: TRITON_SERVER_URL (default
 * `http://localhost:8000`). gRPC (TRITON_PROTOCOL=grpc, or a grpc(s):// TRITON_SERVER_URL):
 * TRITON_GRPC_URL, else a grpc(s):// or bare `host:port` TRITON_SERVER_URL, else `localhost:8001`
 * when no address is set; an http(s) URL alone with TRITON_PROTOCOL=grpc is refused (it names the
 * HTTP port), as is a gRPC URL with TRITON_PROTOCOL=http.
 */
function tritonEndpoint(
  e: {
    TRITON_SERVER_URL?: string | undefined;
    TRITON_PROTOCOL?: 'http' | 'grpc' | undefined;
    TRITON_GRPC_URL?: string | undefined;
  },
  ctx: z.RefinementCtx,
): { protocol: 'http' | 'grpc'; url: string } {
  const server = e.TRITON_SERVER_URL;
  const protocol = e.TRITON_PROTOCOL ?? (server && isGrpc(server) ? 'grpc' : 'http');
  if (protocol === 'http') {
    if (server && isGrpc(server)) {
      ctx.addIssue({
        code: 'custom',
        path: ['TRITON_PROTOCOL'],
        message: `is http but TRITON_SERVER_URL is a gRPC URL ("${server}"); set TRITON_PROTOCOL=grpc or give an HTTP address`,
      });
    }
    return { protocol, url: httpAddress(server ?? 'http://localhost:8000', ctx, 'TRITON_SERVER_URL') };
  }
  if (e.TRITON_GRPC_URL) return { protocol, url: grpcAddress(e.TRITON_GRPC_URL, ctx, 'TRITON_GRPC_URL') };
  if (server && (isGrpc(server) || !hasScheme(server)))
    return { protocol, url: grpcAddress(server, ctx, 'TRITON_SERVER_URL') };
  if (server) {
    ctx.addIssue({
      code: 'custom',
      path: ['TRITON_GRPC_URL'],
      message: `required when TRITON_PROTOCOL=grpc and TRITON_SERVER_URL is an HTTP URL ("${server}"): the gRPC host:port (Triton: 8001, KServe: 9000)`,
    });
    return { protocol, url: '' };
  }
  return { protocol, url: 'grpc://localhost:8001' };
}

const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

const schema = z
  .object({
    /** HTTP address (`host:port` or an http(s) URL), or a gRPC one (`grpc(s)://host:port`). */
    TRITON_SERVER_URL: z.string().trim().min(1).optional(),
    /** `http` or `grpc`; unset: `grpc` when TRITON_SERVER_URL is a grpc(s):// URL, else `http`. */
    TRITON_PROTOCOL: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(['http', 'grpc'], 'http or grpc'))
      .optional(),
    /** The gRPC address when TRITON_PROTOCOL=grpc (compose files set it beside TRITON_SERVER_URL). */
    TRITON_GRPC_URL: z.string().trim().min(1).optional(),
    FOOD11_MODEL_NAME: z.string().trim().min(1).default('food_classifier_onnx'),
    FOOD11_MODEL_VERSION: z.string().trim().regex(/^\d*$/, 'a version number').default(''),
    /**
     * The models a request may pick with the `model` form field of `POST /api/predict` (beyond the
     * seed), comma-separated; FOOD11_MODEL_NAME, the default, is always one of them.
     */
    FOOD11_MODEL_CHOICES: z
      .string()
      .trim()
      .regex(/^[^\s,/]+(\s*,\s*[^\s,/]+)*$|^$/, 'comma-separated model names')
      .default('food_classifier_onnx,food_classifier,food_classifier_ensemble'),
    /**
     * The decoupled model whose streamed caption `POST /api/caption` relays (models_staging/food_caption);
     * empty: no caption. When the server does not have it READY the route answers 204 and the UI shows none.
     */
    FOOD11_CAPTION_MODEL: z
      .string()
      .trim()
      .regex(/^[^\s,/]*$/, 'a model name')
      .default('food_caption'),
    INFERENCE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
    /**
     * How input tensors reach the inference server: `auto` (system shared memory when the server's
     * address is loopback, else the request body), `system` (shared memory whatever the address:
     * a co-located server reached by name), `none` (always the body). See src/server/shared-memory.ts.
     */
    TRITON_SHARED_MEMORY: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(['auto', 'system', 'none'], 'auto, system or none'))
      .default('auto'),
    /** Input regions in shared memory (one per request in flight; more go over the wire). */
    TRITON_SHARED_MEMORY_SLOTS: z.coerce.number().int().min(1).max(256).default(8),
    MAX_UPLOAD_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(100 * MiB)
      .default(10 * MiB),
    /**
     * Largest `POST /api/feedback` body. The largest valid one (a 64-character id, a 100-character
     * label, a 500-character comment) is under 2 kB as UTF-8 and about 4 kB (4,054 bytes) with every
     * character of its strings written as a `\uXXXX` escape; 16 KiB leaves room for that and for
     * formatting, and refuses anything bigger.
     */
    MAX_FEEDBACK_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(MiB)
      .default(16 * 1024),
    MAX_IMAGE_PIXELS: z.coerce.number().int().min(10_000).max(500_000_000).default(40_000_000),
    /** Images decoded at once; bounds memory (a 40 MP photo decodes to 120 MB). */
    DECODE_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .max(256)
      .default(Math.max(4, availableParallelism() * 2)),
    /** Pixels decoded at once across all uploads (an RGB pixel is 3 bytes, plus decoder buffers). */
    DECODE_PIXEL_BUDGET: z.coerce.number().int().min(1_000_000).max(2_000_000_000).default(48_000_000),
    FEEDBACK_STORAGE: z.enum(['local', 's3', 'none']).optional(),
    FEEDBACK_DIR: z.string().trim().min(1).default('data/feedback'),
    /** Persist every upload with its prediction (the original's production branch did); by default
     * only predictions that receive feedback are persisted (like Gradio's flagging). */
    FEEDBACK_SAVE_PREDICTIONS: bool.default(false),
    S3_ENDPOINT: z.string().trim().url().optional(),
    S3_BUCKET: z.string().trim().min(3).default('gourmetgram-feedback'),
    S3_REGION: z.string().trim().min(1).default('us-east-1'),
    /** Silence allowed on one S3 request before it is abandoned (then retried twice). */
    S3_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    /** The original GourmetGram's layout: `class_NN/<id><ext>` with tags, in its own bucket. */
    S3_PRODUCTION_LAYOUT: bool.default(true),
    S3_PRODUCTION_BUCKET: z
      .string()
      .trim()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name (3–63 of a-z 0-9 . -)')
      .default('production'),
    /** Upload bytes the production layout may hold while S3 writes are in flight. */
    S3_PRODUCTION_MAX_PENDING_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .max(4096 * MiB)
      .default(64 * MiB),
    S3_ACCESS_KEY_ID: z.string().optional(),
    S3_SECRET_ACCESS_KEY: z.string().optional(),
    /** MinIO names used by the original GourmetGram production branch; aliases of the S3_* ones. */
    MINIO_URL: z.string().trim().optional(),
    MINIO_USER: z.string().optional(),
    MINIO_PASSWORD: z.string().optional(),
    APP_VERSION: z.string().optional(),
    GATEWAY_LOG: bool.default(true),
  })
  .transform((e, ctx) => {
    const s3Endpoint =
      e.S3_ENDPOINT ??
      (e.MINIO_URL ? (/^https?:\/\//.test(e.MINIO_URL) ? e.MINIO_URL : `http://${e.MINIO_URL}`) : undefined);
    const storage = e.FEEDBACK_STORAGE ?? (s3Endpoint ? 's3' : 'local');
    const triton = tritonEndpoint(e, ctx);
    return {
      tritonProtocol: triton.protocol,
      /** `http(s)://…` for HTTP, `grpc(s)://host:port` for gRPC. */
      tritonUrl: triton.url,
      modelName: e.FOOD11_MODEL_NAME,
      modelVersion: e.FOOD11_MODEL_VERSION,
      /** FOOD11_MODEL_NAME first, then FOOD11_MODEL_CHOICES' other names, each once. */
      modelChoices: [
        ...new Set([e.FOOD11_MODEL_NAME, ...e.FOOD11_MODEL_CHOICES.split(',').map((n) => n.trim())]),
      ].filter((n) => n !== ''),
      captionModel: e.FOOD11_CAPTION_MODEL,
      inferenceTimeoutMs: e.INFERENCE_TIMEOUT_MS,
      sharedMemory: e.TRITON_SHARED_MEMORY,
      sharedMemorySlots: e.TRITON_SHARED_MEMORY_SLOTS,
      maxUploadBytes: e.MAX_UPLOAD_BYTES,
      maxImagePixels: e.MAX_IMAGE_PIXELS,
      maxFeedbackBytes: e.MAX_FEEDBACK_BYTES,
      decodeConcurrency: e.DECODE_CONCURRENCY,
      decodePixelBudget: e.DECODE_PIXEL_BUDGET,
      feedback: {
        storage,
        dir: e.FEEDBACK_DIR,
        savePredictions: e.FEEDBACK_SAVE_PREDICTIONS,
        s3: {
          endpoint: s3Endpoint?.replace(/\/+$/, '') ?? '',
          bucket: e.S3_BUCKET,
          region: e.S3_REGION,
          timeoutMs: e.S3_TIMEOUT_MS,
          productionLayout: e.S3_PRODUCTION_LAYOUT,
          productionBucket: e.S3_PRODUCTION_BUCKET,
          productionMaxPendingBytes: e.S3_PRODUCTION_MAX_PENDING_BYTES,
          accessKeyId: e.S3_ACCESS_KEY_ID ?? e.MINIO_USER ?? '',
          secretAccessKey: e.S3_SECRET_ACCESS_KEY ?? e.MINIO_PASSWORD ?? '',
        },
      },
      appVersion: e.APP_VERSION,
      log: e.GATEWAY_LOG,
    };
  })
  .superRefine((e, ctx) => {
    if (e.feedback.storage === 's3' && !e.feedback.s3.endpoint) {
      ctx.addIssue({ code: 'custom', path: ['S3_ENDPOINT'], message: 'required when FEEDBACK_STORAGE=s3' });
    }
    const { s3 } = e.feedback;
    if (e.feedback.storage === 's3' && s3.productionLayout && s3.bucket === s3.productionBucket) {
      ctx.addIssue({
        code: 'custom',
        path: ['S3_BUCKET'],
        message: `must differ from S3_PRODUCTION_BUCKET ("${s3.productionBucket}"): tools written for the original read every object of that bucket as a class_NN/ photo`,
      });
    }
  });

export type Env = z.output<typeof schema>;

/** Raised when the environment is invalid; the message names every bad variable. */
export class EnvError extends Error {
  override readonly name = 'EnvError';
}

let cached: Env | undefined;

/** Parses `source` (default `process.env`) without caching. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  // Empty strings mean "unset" (docker-compose passes VAR= through).
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const r = schema.safeParse(cleaned);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join('.') || 'env'}: ${i.message}`).join('; ');
    throw new EnvError(`Invalid configuration: ${issues}`);
  }
  return r.data;
}

/** The validated configuration (parsed once, then cached). */
export function env(): Env {
  cached ??= parseEnv();
  return cached;
}

/** Tests change `process.env` between cases; this forgets the cached parse. */
export function resetEnvCache(): void {
  cached = undefined;
}
