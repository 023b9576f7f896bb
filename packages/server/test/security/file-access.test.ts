/**
 * Attacks on the file system through the network, each reproduced against the real server: every
 * entry point that takes a name or a path (model names, `file:` keys, config fields that name files,
 * shared-memory keys, log and trace settings), and error messages that would name host paths.
 */
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildAddSubOnnx } from '../../src/testing/index.js';
import { get, post, startTestServer, type TestServer } from '../helpers/server.js';

/** Sends a POST with the path exactly as given (fetch would normalise `%2E%2E` segments). */
function rawPost(url: string, path: string, body: string): Promise<{ status: number; json: unknown }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'POST' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          json: text === '' ? undefined : (JSON.parse(text) as unknown),
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const errorOf = (r: { json: unknown }): string => (r.json as { error: string }).error;

/** A directory outside everything the server owns, where no attack may leave a trace. */
let outside: string;
/** The server's temporary directory for this file (TMPDIR), to see what it leaves behind. */
let privateTmp: string;
let srv: TestServer;

const simpleConfig = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    backend: 'onnxruntime',
    max_batch_size: 8,
    input: [
      { name: 'INPUT0', data_type: 'TYPE_INT32', dims: [16] },
      { name: 'INPUT1', data_type: 'TYPE_INT32', dims: [16] },
    ],
    output: [
      { name: 'OUTPUT0', data_type: 'TYPE_INT32', dims: [16] },
      { name: 'OUTPUT1', data_type: 'TYPE_INT32', dims: [16] },
    ],
    ...extra,
  });

const loadBody = (config: string, files: Record<string, Uint8Array> = {}): string =>
  JSON.stringify({
    parameters: {
      config,
      ...Object.fromEntries(Object.entries(files).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    },
  });

const leftovers = (): string[] =>
  readdirSync(privateTmp).filter((n) => n.startsWith('tritonserver-ts-model-'));

beforeAll(async () => {
  outside = await mkdtemp(join(tmpdir(), 'attack-target-'));
  privateTmp = await mkdtemp(join(tmpdir(), 'server-tmp-'));
  // os.tmpdir() reads TMPDIR on every call: the server's override directories land here.
  process.env.TMPDIR = privateTmp;
  srv = await startTestServer({
    only: ['simple', 'classifier', 'broken_config'],
    modelControlMode: 'explicit',
    loadModels: ['simple', 'classifier'],
  });
});

afterAll(async () => {
  await srv.close();
  rmSync(outside, { recursive: true, force: true });
  rmSync(privateTmp, { recursive: true, force: true });
});

describe('model names of the load API', () => {
  it('refuses a traversal name with Triton’s message and writes nothing anywhere', async () => {
    const name = `${'../'.repeat(12)}${outside.slice(1)}/pwned`;
    const r = await rawPost(
      srv.url,
      `/v2/repository/models/${encodeURIComponent(name)}/load`,
      loadBody(simpleConfig(), { 'file:1/model.onnx': buildAddSubOnnx(true) }),
    );
    expect(r.status).toBe(400);
    expect(errorOf(r)).toBe(
      `invalid model name '${name}', model name must not contain path traversal characters`,
    );
    expect(readdirSync(outside)).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it.each([['..'], ['a%2Fb'], ['%2E%2E'], ['%2E%2E%2F'], ['a%00b']])(
    'refuses the name %s',
    async (encoded) => {
      const r = await rawPost(srv.url, `/v2/repository/models/${encoded}/load`, '{}');
      expect(r.status).toBe(400);
      expect(errorOf(r)).toContain('model name must not contain path traversal characters');
    },
  );

  it('takes a dotted name that is not traversal (Triton 2.73) as a plain name: its override lives in its private directory, nothing is written in the repository or outside', async () => {
    const before = readdirSync(srv.repository).sort();
    const r = await rawPost(
      srv.url,
      '/v2/repository/models/..dots../load',
      loadBody(simpleConfig(), { 'file:1/model.onnx': buildAddSubOnnx(true) }),
    );
    expect(r.status).toBe(200);
    expect(leftovers()).toHaveLength(1);
    expect((await get(srv.url, '/v2/models/..dots../ready')).status).toBe(200);
    expect(readdirSync(srv.repository).sort()).toEqual(before);
    expect(readdirSync(outside)).toEqual([]);
    expect((await rawPost(srv.url, '/v2/repository/models/..dots../unload', '{}')).status).toBe(200);
    expect(leftovers()).toEqual([]);
  });

  it('refuses an empty (blank) name with Triton’s message', async () => {
    const r = await rawPost(srv.url, '/v2/repository/models/%20/load', '{}');
    expect(r.status).toBe(400);
    expect(errorOf(r)).toBe('Model name cannot be empty. Please enter a valid name to deploy.');
  });
});

describe('file: overrides of a load', () => {
  it('refuses a key that leaves the model directory, logs why, and leaves no files', async () => {
    const r = await post(
      srv.url,
      '/v2/repository/models/fresh/load',
      loadBody(simpleConfig(), {
        'file:1/model.onnx': buildAddSubOnnx(true),
        [`file:../../../../../../../..${outside}/planted`]: new Uint8Array([1, 2, 3]),
      }),
    );
    expect(r.status).toBe(500);
    expect(errorOf(r)).toBe("failed to load 'fresh', failed to poll from model repository");
    expect(srv.logs.some((l) => l.includes('must stay within model directory'))).toBe(true);
    expect(readdirSync(outside)).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it('removes the private directory when the model then fails to load', async () => {
    const r = await post(
      srv.url,
      '/v2/repository/models/garbage/load',
      loadBody(simpleConfig(), { 'file:1/model.onnx': new Uint8Array([0xde, 0xad, 0xbe, 0xef]) }),
    );
    expect(r.status).toBe(500);
    expect(leftovers()).toEqual([]);
  });

  it('serves a model from its private directory and removes the directory on unload', async () => {
    const r = await post(
      srv.url,
      '/v2/repository/models/private_simple/load',
      loadBody(simpleConfig(), { 'file:1/model.onnx': buildAddSubOnnx(true) }),
    );
    expect(r.status).toBe(200);
    expect(leftovers()).toHaveLength(1);
    expect((await get(srv.url, '/v2/models/private_simple/ready')).status).toBe(200);
    expect((await post(srv.url, '/v2/repository/models/private_simple/unload', '{}')).status).toBe(200);
    expect(leftovers()).toEqual([]);
  });
});

describe('files a config names', () => {
  it('refuses a label_filename outside the model directory and keeps serving the old labels', async () => {
    const config = (await get(srv.url, '/v2/models/classifier/config')).json as {
      output: { label_filename: string }[];
    };
    const output = config.output[0];
    if (output === undefined) throw new Error('classifier has no output');
    output.label_filename = '../../../../../../../../etc/passwd';
    const r = await post(srv.url, '/v2/repository/models/classifier/load', loadBody(JSON.stringify(config)));
    expect(r.status).toBe(500);
    expect(errorOf(r)).toContain(
      "label_filename '../../../../../../../../etc/passwd' must stay inside the model directory",
    );
    const infer = await post(
      srv.url,
      '/v2/models/classifier/infer',
      JSON.stringify({
        inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 5], data: [0, 0, 0, 0, 9] }],
        outputs: [{ name: 'probs', parameters: { classification: 5 } }],
      }),
    );
    expect(infer.status).toBe(200);
    const labels = JSON.stringify(infer.json);
    expect(labels).toContain('Fried food');
    expect(labels).not.toContain('root:');
  });

  it('refuses a label file that is a symbolic link leading outside', async () => {
    const secret = join(outside, 'secret.txt');
    writeFileSync(secret, 'top secret\n');
    symlinkSync(secret, join(srv.repository, 'classifier', 'evil.txt'));
    try {
      const config = (await get(srv.url, '/v2/models/classifier/config')).json as {
        output: { label_filename: string }[];
      };
      (config.output[0] as { label_filename: string }).label_filename = 'evil.txt';
      const r = await post(
        srv.url,
        '/v2/repository/models/classifier/load',
        loadBody(JSON.stringify(config)),
      );
      expect(r.status).toBe(500);
      expect(errorOf(r)).toContain("label_filename 'evil.txt' must stay inside the model directory");
      expect(errorOf(r)).not.toContain('top secret');
    } finally {
      rmSync(join(srv.repository, 'classifier', 'evil.txt'));
      rmSync(secret);
    }
  });

  it('refuses a default_model_filename outside the version directory', async () => {
    const r = await post(
      srv.url,
      '/v2/repository/models/simple/load',
      loadBody(simpleConfig({ default_model_filename: '../../../../../../../../etc/passwd' })),
    );
    expect(r.status).toBe(500);
    expect(errorOf(r)).toContain(
      "default_model_filename '../../../../../../../../etc/passwd' must stay inside version directory '1'",
    );
    expect((await get(srv.url, '/v2/models/simple/ready')).status).toBe(200);
  });

  it('refuses a warmup input_data_file that links outside warmup/', async () => {
    const warmupDir = join(srv.repository, 'simple', 'warmup');
    mkdirSync(warmupDir, { recursive: true });
    const secret = join(outside, 'warm.bin');
    writeFileSync(secret, Buffer.alloc(64, 7));
    symlinkSync(secret, join(warmupDir, 'data.bin'));
    try {
      const warmupConfig = simpleConfig({
        model_warmup: [
          {
            name: 'w',
            batch_size: 1,
            inputs: {
              INPUT0: { data_type: 'TYPE_INT32', dims: [16], input_data_file: 'data.bin' },
              INPUT1: { data_type: 'TYPE_INT32', dims: [16], zero_data: true },
            },
          },
        ],
      });
      const r = await post(srv.url, '/v2/repository/models/simple/load', loadBody(warmupConfig));
      expect(r.status).toBe(500);
      expect(errorOf(r)).toContain("input_data_file 'data.bin' must stay inside warmup/");
      // The same sample from a regular file inside warmup/ runs (warmup really reads it): a file of
      // the wrong size fails the load, one of the right size loads.
      rmSync(join(warmupDir, 'data.bin'));
      writeFileSync(join(warmupDir, 'data.bin'), Buffer.alloc(8));
      const short = await post(srv.url, '/v2/repository/models/simple/load', loadBody(warmupConfig));
      expect(short.status).toBe(500);
      expect(errorOf(short)).toContain("input 'INPUT0' expects 64 bytes");
      writeFileSync(join(warmupDir, 'data.bin'), Buffer.alloc(64, 1));
      expect((await post(srv.url, '/v2/repository/models/simple/load', loadBody(warmupConfig))).status).toBe(
        200,
      );
    } finally {
      rmSync(warmupDir, { recursive: true, force: true });
      rmSync(secret);
    }
  });
});

describe('log and trace settings', () => {
  it('refuses to move the log file over the network (501, as Triton) and creates nothing', async () => {
    const target = join(outside, 'server.log');
    const r = await post(srv.url, '/v2/logging', JSON.stringify({ log_file: target, log_verbose_level: 1 }));
    expect(r.status).toBe(501);
    expect(errorOf(r)).toBe('log file location can not be updated through network protocol');
    await get(srv.url, '/v2/health/live');
    expect(existsSync(target)).toBe(false);
    const settings = (await get(srv.url, '/v2/logging')).json as {
      log_file: string;
      log_verbose_level: number;
    };
    expect(settings).toMatchObject({ log_file: '', log_verbose_level: 0 });
    // A null log_file is "no change", as in Triton.
    expect((await post(srv.url, '/v2/logging', JSON.stringify({ log_file: null }))).status).toBe(200);
  });

  it.each([
    ['/v2/trace/setting', { trace_file: join(tmpdir(), 'trace.json') }],
    ['/v2/trace/setting', { trace_file: null }],
    ['/v2/models/simple/trace/setting', { trace_file: 'x.json', trace_rate: '1' }],
  ])('refuses a trace_file change on %s (501, as Triton)', async (path, body) => {
    const r = await post(srv.url, path, JSON.stringify(body));
    expect(r.status).toBe(501);
    expect(errorOf(r)).toBe('trace file location can not be updated through network protocol');
    expect((await get(srv.url, path)).json).toMatchObject({ trace_file: '', trace_rate: '1000' });
  });
});

describe('shared-memory keys', () => {
  it('refuses client shared memory unless --allow-client-shm is set (Triton’s default)', async () => {
    const message =
      "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.";
    const body = JSON.stringify({ key: '/anything', offset: 0, byte_size: 8 });
    for (const path of [
      '/v2/systemsharedmemory/region/r/register',
      '/v2/systemsharedmemory/region/r/unregister',
      '/v2/cudasharedmemory/region/r/register',
      '/v2/cudasharedmemory/unregister',
    ]) {
      const r = await post(srv.url, path, path.endsWith('register') ? body : undefined);
      expect(r.status, path).toBe(501);
      expect(errorOf(r), path).toBe(message);
    }
    expect((await get(srv.url, '/v2/systemsharedmemory/status')).json).toEqual([]);
  });

  describe('with --allow-client-shm', () => {
    let shm: TestServer;
    const tag = `tritonserver-ts-sec-${process.pid}-${randomBytes(3).toString('hex')}`;
    const secret = () => join(outside, 'shm-target.bin');
    beforeAll(async () => {
      shm = await startTestServer({ only: ['simple'], allowClientShm: true });
      writeFileSync(secret(), Buffer.alloc(256, 1));
      symlinkSync(secret(), `/dev/shm/${tag}-link`);
      mkdirSync(`/dev/shm/${tag}-dir`);
    });
    afterAll(async () => {
      await shm.close();
      rmSync(`/dev/shm/${tag}-link`, { force: true });
      rmSync(`/dev/shm/${tag}-dir`, { recursive: true, force: true });
    });

    const register = (key: string) =>
      post(
        shm.url,
        '/v2/systemsharedmemory/region/r/register',
        JSON.stringify({ key, offset: 0, byte_size: 64 }),
      );

    it('does not follow a symbolic link in /dev/shm', async () => {
      const r = await register(`/${tag}-link`);
      expect(r.status).toBe(500);
      expect(errorOf(r)).toBe(`Unable to open shared memory region: '/${tag}-link'`);
      expect((await get(shm.url, '/v2/systemsharedmemory/status')).json).toEqual([]);
      expect(readFileSync(secret()).every((b) => b === 1)).toBe(true);
    });

    it.each([
      [(t: string) => `/${t}-dir`, 500, (k: string) => `Unable to open shared memory region: '${k}'`],
      [() => '/../../etc/passwd', 500, (k: string) => `Unable to open shared memory region: '${k}'`],
      [() => '/..', 500, (k: string) => `Unable to open shared memory region: '${k}'`],
      [() => '///', 400, (k: string) => `cannot register shared memory region 'r' - invalid shm key '${k}'`],
      [
        () => '/triton_python_backend_shm_region_1',
        400,
        (k: string) =>
          `cannot register shared memory region 'r' with key '${k}' as the key contains the reserved prefix 'triton_python_backend_shm_region_'`,
      ],
    ])('refuses key %#', async (makeKey, status, message) => {
      const key = makeKey(tag);
      const r = await register(key);
      expect(r.status).toBe(status);
      expect(errorOf(r)).toBe(message(key));
    });

    it('asks for every field of a register request, as Triton does', async () => {
      const r = await post(
        shm.url,
        '/v2/systemsharedmemory/region/r/register',
        JSON.stringify({ key: '/x', byte_size: 8 }),
      );
      expect(r.status).toBe(400);
      expect(errorOf(r)).toBe("Shared memory register request has no 'offset' field");
    });
  });
});

describe('messages never name absolute host paths', () => {
  it('names repository files relative to the repository', async () => {
    const load = await post(srv.url, '/v2/repository/models/broken_config/load', '{}');
    expect(errorOf(load)).toContain('broken_config/config.pbtxt:3:1');
    const index = (await post(srv.url, '/v2/repository/index', '{}')).json as {
      name: string;
      reason?: string;
    }[];
    expect(index.find((m) => m.name === 'broken_config')?.reason).toContain('broken_config/config.pbtxt:3:1');
    const missing = await post(
      srv.url,
      '/v2/repository/models/simple/load',
      loadBody(simpleConfig({ default_model_filename: 'missing.onnx' })),
    );
    expect(errorOf(missing)).toContain("unable to find 'simple/1/missing.onnx'");
    for (const text of [errorOf(load), JSON.stringify(index), errorOf(missing)]) {
      expect(text).not.toContain(srv.repository);
      expect(text).not.toContain(privateTmp);
    }
  });
});
