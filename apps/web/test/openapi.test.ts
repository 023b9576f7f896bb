/**
 * The OpenAPI document (`GET /api/openapi.json`): every route file under src/app/api and every error
 * code of errors.ts is in it, it is a valid OpenAPI 3.1 document, its schemas are valid JSON Schema
 * 2020-12, and what the real routes answer (embedded server, real photos) matches it.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { RunningServer } from '@tritonserver-ts/server';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GET as exampleGET } from '../src/app/api/examples/[code]/route';
import { GET as examplesGET } from '../src/app/api/examples/route';
import { GET as feedbackGET } from '../src/app/api/feedback/[id]/route';
import { POST as feedbackPOST } from '../src/app/api/feedback/route';
import { GET as healthGET } from '../src/app/api/health/route';
import { GET as openapiGET } from '../src/app/api/openapi.json/route';
import { POST as predictPOST } from '../src/app/api/predict/route';
import { GET as statsGET } from '../src/app/api/stats/route';
import { GET as testGET } from '../src/app/api/test/route';
import { GET as versionGET } from '../src/app/api/version/route';
import { ERROR_STATUS } from '../src/server/errors';
import { feedbackStore } from '../src/server/feedback-store';
import { json, photo, startEmbedded, uploadRequest, useEnv } from './helpers';

const API_DIR = fileURLToPath(new URL('../src/app/api/', import.meta.url));
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { schemas: Record<string, Record<string, unknown>> };
  'x-error-codes': { code: string; status: number }[];
}
interface ResponseObject {
  content?: Record<
    string,
    { schema: { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } } }
  >;
}

/** Every `route.ts` under src/app/api, as an OpenAPI path (`[id]` → `{id}`). */
function routeFiles(): { file: string; path: string }[] {
  return readdirSync(API_DIR, { recursive: true, encoding: 'utf8' })
    .filter((f) => f === 'route.ts' || f.endsWith(`${sep}route.ts`))
    .map((f) => {
      const dir = relative(API_DIR, join(API_DIR, f, '..'))
        .split(sep)
        .filter(Boolean);
      const path = ['/api', ...dir.map((d) => d.replace(/^\[(\w+)\]$/, '{$1}'))].join('/');
      return { file: join(API_DIR, f), path };
    });
}

let server: RunningServer;
let dir: string;
let doc: Doc;

beforeAll(async () => {
  server = await startEmbedded();
  dir = mkdtempSync(join(tmpdir(), 'gg-openapi-'));
  useEnv({
    TRITON_SERVER_URL: server.url,
    FOOD11_MODEL_NAME: 'food_classifier_onnx',
    FEEDBACK_STORAGE: 'local',
    FEEDBACK_DIR: dir,
    GATEWAY_LOG: 'false',
  });
  const res = openapiGET();
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = await json<Doc>(res);
});
afterAll(async () => {
  await feedbackStore()?.flush();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /api/openapi.json', () => {
  it('documents every route file under src/app/api with each method it exports, and nothing else', async () => {
    const files = routeFiles();
    expect(files.length).toBeGreaterThanOrEqual(10);
    const onDisk = new Set<string>();
    for (const { file, path } of files) {
      const mod = (await import(file)) as Record<string, unknown>;
      const methods = METHODS.filter((m) => typeof mod[m] === 'function');
      expect(methods.length, file).toBeGreaterThan(0);
      for (const m of methods) {
        onDisk.add(`${m.toLowerCase()} ${path}`);
        expect(doc.paths[path]?.[m.toLowerCase()], `${m} ${path} (${file})`).toBeDefined();
      }
    }
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m} ${path}`),
    );
    expect(documented.sort()).toEqual([...onDisk].sort());
  });

  it('has every error code of errors.ts, each under its status on the routes that answer it', () => {
    const table = Object.entries(ERROR_STATUS);
    expect(table.length).toBeGreaterThan(10);
    const errorSchema = doc.components.schemas.Error as {
      properties: { error: { properties: { code: { enum: string[] } } } };
    };
    expect(errorSchema.properties.error.properties.code.enum.sort()).toEqual(table.map(([c]) => c).sort());
    expect(doc['x-error-codes'].map(({ code, status }) => [code, status])).toEqual(table);
    // Where each code is answered: status → codes listed in that response's body schema.
    const seen = new Map<string, number[]>();
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        for (const [status, r] of Object.entries(op.responses)) {
          for (const c of r.content?.['application/json']?.schema.properties?.error?.properties?.code?.enum ??
            []) {
            seen.set(c, [...(seen.get(c) ?? []), Number(status)]);
          }
        }
      }
    }
    for (const [code, status] of table) {
      expect(seen.get(code), `${code} is answered by some route`).toBeDefined();
      expect(new Set(seen.get(code)), code).toEqual(new Set([status]));
    }
  });

  it('is a valid OpenAPI 3.1 document whose schemas are valid JSON Schema 2020-12', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      expect(ajv.validateSchema(schema), `${name}: ${ajv.errorsText()}`).toBe(true);
    }
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(op.responses)) {
          for (const media of Object.values(r.content ?? {})) {
            expect(ajv.validateSchema(media.schema), `${method} ${path} ${status}: ${ajv.errorsText()}`).toBe(
              true,
            );
          }
        }
      }
    }
    // The validator does catch a broken document.
    const broken = structuredClone(doc) as unknown as { paths: Record<string, unknown> };
    broken.paths['/api/health'] = { get: { responses: 'none' } };
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });
});

describe('what the routes answer matches the document', () => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  let validators: Map<string, ReturnType<Ajv2020['compile']>>;
  beforeAll(() => {
    ajv.addSchema({ ...doc, $id: 'https://gourmetgram.invalid/openapi.json' });
    validators = new Map();
  });
  const pointer = (...parts: string[]) =>
    parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

  /** Checks an answer's status and JSON body against the document's response for that route. */
  async function expectDocumented(method: string, path: string, res: Response): Promise<unknown> {
    const response = doc.paths[path]?.[method]?.responses[String(res.status)];
    expect(response, `${method} ${path} answered ${res.status}, which is not documented`).toBeDefined();
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!;
    expect(Object.keys(response?.content ?? {}), `${method} ${path} ${res.status}`).toContain(type);
    if (type !== 'application/json') return undefined;
    const key = `${method} ${path} ${res.status}`;
    let validate = validators.get(key);
    if (!validate) {
      const ref = `https://gourmetgram.invalid/openapi.json#/${pointer('paths', path, method, 'responses', String(res.status), 'content', type, 'schema')}`;
      validate = ajv.compile({ $ref: ref });
      validators.set(key, validate);
    }
    const body = await json(res);
    expect(validate(body) ? [] : validate.errors, `${key}: ${JSON.stringify(body).slice(0, 300)}`).toEqual(
      [],
    );
    return body;
  }

  it('predict, test, feedback, examples, status routes and errors', async () => {
    const p = (await expectDocumented(
      'post',
      '/api/predict',
      await predictPOST(uploadRequest(photo('P005'))),
    )) as {
      requestId: string;
      label: string;
    };
    expect(p.label).toBe('Seafood');
    await expectDocumented('get', '/api/test', await testGET(new Request('http://localhost/api/test')));
    // Errors: the body schema lists exactly the codes that status can carry on that route.
    const none = new FormData();
    none.set('note', 'no file');
    await expectDocumented(
      'post',
      '/api/predict',
      await predictPOST(new Request('http://localhost/api/predict', { method: 'POST', body: none })),
    );
    await expectDocumented(
      'post',
      '/api/predict',
      await predictPOST(
        uploadRequest(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), { type: 'image/svg+xml' }),
      ),
    );
    const feedback = (body: unknown) =>
      feedbackPOST(
        new Request('http://localhost/api/feedback', {
          method: 'POST',
          body: JSON.stringify(body),
          headers: { 'content-type': 'application/json' },
        }),
      );
    await expectDocumented(
      'post',
      '/api/feedback',
      await feedback({ predictionId: p.requestId, kind: 'flag', comment: 'hi' }),
    );
    await expectDocumented(
      'post',
      '/api/feedback',
      await feedback({ predictionId: p.requestId, kind: 'correction', correctLabel: 'Meat' }),
    );
    await expectDocumented('post', '/api/feedback', await feedback({ predictionId: 'a/b', kind: 'flag' }));
    await expectDocumented(
      'post',
      '/api/feedback',
      await feedback({ predictionId: 'unknown-1', kind: 'flag' }),
    );
    const record = (await expectDocumented(
      'get',
      '/api/feedback/{id}',
      await feedbackGET(new Request(`http://localhost/api/feedback/${p.requestId}`), {
        params: Promise.resolve({ id: p.requestId }),
      }),
    )) as { events: unknown[] };
    expect(record.events).toHaveLength(2);
    await expectDocumented('get', '/api/health', await healthGET());
    await expectDocumented('get', '/api/version', await versionGET());
    await expectDocumented('get', '/api/stats', await statsGET(new Request('http://localhost/api/stats')));
    await expectDocumented('get', '/api/examples', examplesGET());
    await expectDocumented(
      'get',
      '/api/examples/{code}',
      await exampleGET(new Request('http://localhost/api/examples/P005'), {
        params: Promise.resolve({ code: 'P005' }),
      }),
    );
    await expectDocumented(
      'get',
      '/api/examples/{code}',
      await exampleGET(new Request('http://localhost/api/examples/Z9'), {
        params: Promise.resolve({ code: 'Z9' }),
      }),
    );
    await expectDocumented('get', '/api/openapi.json', openapiGET());
  });

  it('the inference server down: 503 bodies are documented too', async () => {
    const s = await startEmbedded();
    await s.close();
    useEnv({ TRITON_SERVER_URL: s.url });
    try {
      const h = await healthGET();
      expect(h.status).toBe(503);
      await expectDocumented('get', '/api/health', h);
      const p = await predictPOST(uploadRequest(photo('A001')));
      expect(p.status).toBe(503);
      expect(p.headers.get('retry-after')).toBe('5');
      await expectDocumented('post', '/api/predict', p);
      await expectDocumented('get', '/api/stats', await statsGET(new Request('http://localhost/api/stats')));
    } finally {
      useEnv({ TRITON_SERVER_URL: server.url });
    }
  });
});
