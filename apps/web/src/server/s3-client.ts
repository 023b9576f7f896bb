/**
 * The few S3 requests the feedback store makes, SigV4-signed with aws4fetch's signer and sent with
 * `node:http(s)` on keep-alive connections. Measured here (s3rver, 46 kB PUTs, CPU of the web
 * process per request): `AwsClient.fetch` ≈ 3.3 ms (undici's fetch alone ≈ 2 ms), signing with
 * `AwsV4Signer` and sending with `node:http` ≈ 1.3 ms — and the production layout makes two requests
 * per prediction.
 */
import 'server-only';
import http from 'node:http';
import https from 'node:https';
import { AwsV4Signer } from 'aws4fetch';

/** What {@link S3Client} needs to reach one endpoint. */
export interface S3ClientOptions {
  /** `http(s)://host:port`, no trailing slash. */
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Deadline of one attempt (connect, send, answer), ms. */
  timeoutMs?: number;
  /** Further attempts after a network error, a 5xx or a 429 (every request we make is idempotent). */
  retries?: number;
}

/** A finished S3 answer: status and whole body. */
export interface S3Response {
  status: number;
  body: Buffer;
}

/** A request that got no HTTP answer (refused, reset, timed out), after every retry. */
export class S3NetworkError extends Error {
  override readonly name = 'S3NetworkError';
}

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

/** Signs and sends S3 requests to one endpoint. */
export class S3Client {
  private readonly signingKeys = new Map<string, ArrayBuffer>();
  private readonly timeoutMs: number;
  private readonly retries: number;

  constructor(private readonly opts: S3ClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.retries = opts.retries ?? 2;
  }

  /**
   * One request; `path` starts with `/` and is already URI-encoded (it may carry a query). Retries
   * network errors, 5xx and 429 with a short backoff; other statuses are returned to the caller.
   */
  async request(
    method: 'GET' | 'HEAD' | 'PUT' | 'DELETE',
    path: string,
    init: { body?: Uint8Array | string; headers?: Record<string, string> } = {},
  ): Promise<S3Response> {
    const body =
      init.body === undefined
        ? undefined
        : typeof init.body === 'string'
          ? Buffer.from(init.body)
          : init.body;
    for (let attempt = 0; ; attempt++) {
      let res: S3Response | undefined;
      let failure: unknown;
      try {
        res = await this.once(method, path, body, init.headers ?? {});
      } catch (err) {
        failure = err;
      }
      const retriable = !res || res.status >= 500 || res.status === 429;
      if (!retriable || attempt >= this.retries) {
        if (res) return res;
        throw new S3NetworkError(`S3 ${method} ${path}: ${String((failure as Error)?.message ?? failure)}`, {
          cause: failure,
        });
      }
      await new Promise((r) => setTimeout(r, 50 * 2 ** attempt * (0.5 + Math.random())));
    }
  }

  private async once(
    method: string,
    path: string,
    body: Uint8Array | undefined,
    headers: Record<string, string>,
  ): Promise<S3Response> {
    const url = `${this.opts.endpoint}${path}`;
    const signed = await new AwsV4Signer({
      method,
      url,
      headers,
      // The payload is not hashed (aws4fetch signs S3 requests with UNSIGNED-PAYLOAD).
      accessKeyId: this.opts.accessKeyId,
      secretAccessKey: this.opts.secretAccessKey,
      service: 's3',
      region: this.opts.region,
      cache: this.signingKeys,
    }).sign();
    const out: Record<string, string> = {};
    signed.headers.forEach((v, k) => {
      out[k] = v;
    });
    if (body || method === 'PUT') out['content-length'] = String(body?.byteLength ?? 0);
    const target = new URL(signed.url);
    const transport = target.protocol === 'https:' ? https : http;
    return new Promise<S3Response>((resolve, reject) => {
      const req = transport.request(
        target,
        {
          method,
          headers: out,
          agent: agents[target.protocol === 'https:' ? 'https:' : 'http:'],
          timeout: this.timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}
