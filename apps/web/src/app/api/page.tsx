import type { Metadata } from 'next';
import type { Schema } from '@/components/api-reference';
import { InlineCode, Prose, SchemaBlock, TypeOf } from '@/components/api-reference';
import { TableHead } from '@/components/table-head';
import { EXAMPLE_ORIGIN, errorCodeTable, openApiDocument, OPERATIONS, STATUS_TEXT } from '@/server/openapi';

export const metadata: Metadata = { title: 'API — GourmetGram' };

/** The parts of the OpenAPI document this page reads. */
interface Doc {
  info: { title: string; version: string; summary: string; description: string };
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string; required: boolean; description?: string; schema: Schema }[];
        requestBody?: { content: Record<string, { schema: Schema }> };
        responses: Record<
          string,
          {
            description: string;
            content?: Record<string, { schema: Schema }>;
            headers?: Record<string, unknown>;
          }
        >;
      }
    >
  >;
  components: { schemas: Record<string, Schema> };
}

/** A component's schema for a `$ref`, else the schema itself. */
function resolve(doc: Doc, schema: Schema): Schema {
  return schema.$ref
    ? (doc.components.schemas[schema.$ref.slice(schema.$ref.lastIndexOf('/') + 1)] ?? schema)
    : schema;
}

const anchor = (method: string, path: string) =>
  `${method}-${
    path
      .replace(/^\/api\/?/, '')
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/-$/, '') || 'api'
  }`;

function MethodBadge({ method }: { method: string }) {
  const colour = method === 'post' ? 'bg-amber-100 text-amber-950' : 'bg-emerald-100 text-emerald-950';
  return (
    <span className={`rounded px-1.5 py-0.5 font-mono text-xs font-bold uppercase ${colour}`}>{method}</span>
  );
}

/** The API reference: every route with curl examples, and the error-code table, from the OpenAPI document. */
export default function ApiPage() {
  const doc = openApiDocument() as unknown as Doc;
  const codes = errorCodeTable();
  return (
    <div className="space-y-8">
      <div>
        <h1 className="mb-1 text-2xl font-bold tracking-tight sm:text-3xl">The GourmetGram API</h1>
        <p className="max-w-3xl text-slate-700">{doc.info.summary}</p>
        <Prose text={doc.info.description} className="mt-2 max-w-3xl text-slate-700" />
        <p className="mt-3 max-w-3xl text-slate-700">
          Machine-readable: the{' '}
          <a href="/api/openapi.json" className="text-emerald-800 underline underline-offset-2">
            OpenAPI 3.1 document
          </a>{' '}
          (version {doc.info.version}), generated from the same zod schemas the routes validate with. The
          examples are written for <code className="rounded bg-stone-100 px-1">npm start</code> at{' '}
          <code className="rounded bg-stone-100 px-1">{EXAMPLE_ORIGIN}</code> and run top to bottom in one
          shell (later ones use the <code className="rounded bg-stone-100 px-1">dish.jpg</code> and{' '}
          <code className="rounded bg-stone-100 px-1">$ID</code> that earlier ones made).
        </p>
      </div>

      <nav aria-labelledby="routes-heading" className="rounded-xl border border-stone-200 bg-white p-5">
        <h2 id="routes-heading" className="mb-2 text-lg font-semibold">
          Routes
        </h2>
        <ul className="space-y-1 text-sm">
          {OPERATIONS.map((op) => (
            <li key={op.operationId} className="flex flex-wrap items-baseline gap-2">
              <MethodBadge method={op.method} />
              <a
                href={`#${anchor(op.method, op.path)}`}
                className="font-mono text-emerald-800 underline-offset-2 hover:underline"
              >
                {op.path}
              </a>
              <span className="text-slate-700">— {op.summary}</span>
            </li>
          ))}
          <li className="flex flex-wrap items-baseline gap-2">
            <a href="#error-codes" className="text-emerald-800 underline-offset-2 hover:underline">
              Error codes
            </a>
          </li>
        </ul>
      </nav>

      {OPERATIONS.map((op) => {
        const o = doc.paths[op.path]?.[op.method];
        if (!o) return null;
        const body = o.requestBody ? Object.entries(o.requestBody.content)[0] : undefined;
        return (
          <section
            key={op.operationId}
            id={anchor(op.method, op.path)}
            aria-labelledby={`${op.operationId}-heading`}
            data-testid="api-operation"
            className="scroll-mt-4 rounded-xl border border-stone-200 bg-white p-5"
          >
            <h2
              id={`${op.operationId}-heading`}
              className="flex flex-wrap items-center gap-2 text-lg font-semibold"
            >
              <MethodBadge method={op.method} /> <span className="font-mono">{op.path}</span>
            </h2>
            <p className="mt-1 font-medium text-slate-800">{op.summary}</p>
            <Prose text={op.description} className="mt-2 max-w-3xl text-sm text-slate-700" />

            {o.parameters?.length ? (
              <>
                <h3 className="mt-4 mb-1 text-sm font-semibold">Parameters</h3>
                <ul className="space-y-1 text-sm text-slate-700">
                  {o.parameters.map((p) => (
                    <li key={p.name}>
                      <span className="font-mono text-slate-900">{p.name}</span> ({p.in}
                      {p.required ? ', required' : ''}, <TypeOf schema={p.schema} />
                      {p.schema.pattern ? (
                        <>
                          {' '}
                          matching <code className="rounded bg-stone-100 px-1">{p.schema.pattern}</code>
                        </>
                      ) : null}
                      )
                      {p.description ? (
                        <>
                          : <InlineCode text={p.description} />
                        </>
                      ) : null}
                    </li>
                  ))}
                </ul>
              </>
            ) : null}

            {body ? (
              <>
                <h3 className="mt-4 mb-1 text-sm font-semibold">
                  Request body: <code className="rounded bg-stone-100 px-1">{body[0]}</code>,{' '}
                  <TypeOf schema={body[1].schema} />
                </h3>
                <SchemaBlock schema={resolve(doc, body[1].schema)} />
              </>
            ) : null}

            <h3 className="mt-4 mb-1 text-sm font-semibold">Responses</h3>
            <table className="w-full border-collapse text-left text-sm">
              <TableHead
                columns={[
                  { label: 'status', className: 'w-56' },
                  { label: 'body', className: 'w-40' },
                  'when',
                ]}
              />
              <tbody>
                {Object.entries(o.responses).map(([status, r]) => {
                  const [type, media] = Object.entries(r.content ?? {})[0] ?? [];
                  const errorCodes = media?.schema.properties?.error?.properties?.code?.enum as
                    string[] | undefined;
                  return (
                    <tr key={status} className="border-b border-stone-100 align-top">
                      <td className="py-1.5 pr-3 font-mono whitespace-nowrap">
                        {status}{' '}
                        <span className="font-sans text-slate-600">{STATUS_TEXT[Number(status)]}</span>
                      </td>
                      <td className="py-1.5 pr-3">
                        {errorCodes ? (
                          <a
                            href="#schema-Error"
                            className="font-mono text-emerald-800 underline underline-offset-2"
                          >
                            Error
                          </a>
                        ) : media ? (
                          media.schema.$ref || media.schema.type !== 'object' ? (
                            <TypeOf schema={media.schema} />
                          ) : (
                            <span className="font-mono">{type}</span>
                          )
                        ) : null}
                        {type && type !== 'application/json' ? (
                          <span className="block text-xs text-slate-600">{type}</span>
                        ) : null}
                      </td>
                      <td className="py-1.5 text-slate-700">
                        {errorCodes ? (
                          <ul className="space-y-0.5">
                            {errorCodes.map((c) => (
                              <li key={c}>
                                <a
                                  href={`#code-${c}`}
                                  className="font-mono text-slate-900 underline-offset-2 hover:underline"
                                >
                                  {c}
                                </a>
                              </li>
                            ))}
                          </ul>
                        ) : (
                          <InlineCode text={r.description} />
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>

            <h3 className="mt-4 mb-1 text-sm font-semibold">Example</h3>
            <pre
              data-testid="curl"
              className="overflow-x-auto rounded-lg bg-slate-900 p-3 text-sm leading-relaxed text-stone-50"
            >
              <code>{op.curl.join('\n')}</code>
            </pre>
          </section>
        );
      })}

      <section
        id="error-codes"
        aria-labelledby="error-codes-heading"
        className="scroll-mt-4 rounded-xl border border-stone-200 bg-white p-5"
      >
        <h2 id="error-codes-heading" className="text-lg font-semibold">
          Error codes
        </h2>
        <p className="mt-1 mb-3 max-w-3xl text-sm text-slate-700">
          Every error answers{' '}
          <code className="rounded bg-stone-100 px-1">{'{"error": {"code", "message", "requestId"?}}'}</code>{' '}
          with one of these stable codes (prediction routes add the{' '}
          <code className="rounded bg-stone-100 px-1">requestId</code>
          ). Branch on the code; the message is for people and may change.
        </p>
        <div className="overflow-x-auto">
          <table className="w-full border-collapse text-left text-sm" data-testid="error-codes">
            <TableHead columns={['code', 'status', 'meaning', 'routes']} />
            <tbody>
              {codes.map((c) => (
                <tr key={c.code} id={`code-${c.code}`} className="border-b border-stone-100 align-top">
                  <td className="py-1.5 pr-3 font-mono whitespace-nowrap">{c.code}</td>
                  <td className="py-1.5 pr-3 font-mono">{c.status}</td>
                  <td className="py-1.5 pr-3 text-slate-700">
                    <InlineCode text={c.description} />
                  </td>
                  <td className="py-1.5 font-mono text-xs text-slate-700">
                    {c.routes.map((r) => (
                      <span key={r} className="block whitespace-nowrap">
                        {r}
                      </span>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>

      <section aria-labelledby="schemas-heading" className="rounded-xl border border-stone-200 bg-white p-5">
        <h2 id="schemas-heading" className="mb-3 text-lg font-semibold">
          Schemas
        </h2>
        <div className="space-y-6">
          {Object.entries(doc.components.schemas).map(([name, schema]) => (
            <div key={name} id={`schema-${name}`} className="scroll-mt-4">
              <h3 className="font-mono font-semibold">{name}</h3>
              {schema.description ? (
                <p className="mb-1 text-sm text-slate-700">
                  <InlineCode text={schema.description} />
                </p>
              ) : null}
              <SchemaBlock schema={schema} />
            </div>
          ))}
        </div>
      </section>
    </div>
  );
}
