/**
 * Server-rendered pieces of the `/api` page: JSON Schemas of the OpenAPI document as field tables,
 * and its Markdown-ish descriptions (paragraphs, `code`, simple tables) as text.
 */
import type { ReactNode } from 'react';

import { TableHead } from '@/components/table-head';

/** A JSON Schema object of the document (draft 2020-12). */
export type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  contentMediaType?: string;
  enum?: unknown[];
  const?: unknown;
  items?: Schema;
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  title?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
};

const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** `a `b` c` → text with <code> for the back-quoted parts. */
export function InlineCode({ text }: { text: string }): ReactNode {
  return text.split('`').map((part, i) =>
    i % 2 ? (
      <code key={i} className="rounded bg-stone-100 px-1 py-0.5 text-[0.9em] text-slate-900">
        {part}
      </code>
    ) : (
      part
    ),
  );
}

/** Paragraphs separated by blank lines; Markdown tables are left to the structured sections. */
export function Prose({ text, className = '' }: { text: string; className?: string }) {
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p && !p.startsWith('|'));
  return (
    <div className={`space-y-2 ${className}`}>
      {paragraphs.map((p, i) => (
        <p key={i}>
          <InlineCode text={p} />
        </p>
      ))}
    </div>
  );
}

/** The component name of a `#/components/schemas/Name` reference. */
export function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1);
}

/** A short type expression: `string`, `integer`, `Prediction`, `FeedbackEvent[]`, `"flag"`, `file`. */
export function TypeOf({ schema }: { schema: Schema }): ReactNode {
  if (schema.$ref) {
    const name = refName(schema.$ref);
    return (
      <a href={`#schema-${name}`} className="font-mono text-emerald-800 underline underline-offset-2">
        {name}
      </a>
    );
  }
  if (schema.const !== undefined) return <span className="font-mono">{JSON.stringify(schema.const)}</span>;
  if (schema.enum)
    return <span className="font-mono">{schema.enum.map((v) => JSON.stringify(v)).join(' | ')}</span>;
  if (schema.oneOf) {
    return schema.oneOf.map((s, i) => (
      <span key={i}>
        {i > 0 ? ' | ' : ''}
        <TypeOf schema={s} />
      </span>
    ));
  }
  if (schema.type === 'array' && schema.items) {
    return (
      <>
        <TypeOf schema={schema.items} />
        <span className="font-mono">[]</span>
      </>
    );
  }
  if (schema.format === 'binary') return <span className="font-mono">file</span>;
  const t = schema.type ?? 'any';
  return <span className="font-mono">{schema.format ? `${t} (${schema.format})` : t}</span>;
}

/** Constraints worth reading: pattern, ranges, lengths, item counts. */
function constraints(s: Schema): string[] {
  const out: string[] = [];
  // A format (date-time) says what its generated pattern would, more readably.
  if (s.pattern && !s.format) out.push(`pattern ${s.pattern}`);
  if (s.minimum !== undefined && s.minimum > -SAFE_INTEGER) out.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined && s.maximum < SAFE_INTEGER) out.push(`≤ ${s.maximum}`);
  if (s.minLength !== undefined) out.push(`at least ${s.minLength} characters`);
  if (s.maxLength !== undefined) out.push(`at most ${s.maxLength} characters`);
  if (s.minItems !== undefined && s.minItems === s.maxItems) out.push(`exactly ${s.minItems}`);
  else {
    if (s.minItems !== undefined) out.push(`at least ${s.minItems}`);
    if (s.maxItems !== undefined) out.push(`at most ${s.maxItems}`);
  }
  return out;
}

/** An object schema's fields as a table (nested objects as nested tables). */
export function FieldTable({ schema, depth = 0 }: { schema: Schema; depth?: number }) {
  const props = Object.entries(schema.properties ?? {});
  if (!props.length) return null;
  const required = new Set(schema.required ?? []);
  return (
    <table className={`w-full border-collapse text-left text-sm ${depth ? 'mt-2' : ''}`}>
      <TableHead columns={['field', 'type', 'meaning']} />
      <tbody>
        {props.map(([name, s]) => {
          const item = s.type === 'array' ? s.items : undefined;
          const nested = s.type === 'object' ? s : item?.type === 'object' ? item : undefined;
          const c = [...constraints(s), ...(item ? constraints(item) : [])];
          const description = s.description ?? item?.description;
          return (
            <tr key={name} className="border-b border-stone-100 align-top">
              <td className="py-1.5 pr-3 font-mono whitespace-nowrap">
                {name}
                {required.has(name) ? '' : '?'}
              </td>
              <td className="py-1.5 pr-3">
                {nested && !s.$ref ? (
                  <span className="font-mono">{item ? 'object[]' : 'object'}</span>
                ) : (
                  <TypeOf schema={s} />
                )}
              </td>
              <td className="py-1.5 text-slate-700">
                {description ? <InlineCode text={description} /> : null}
                {c.length ? <span className="block text-xs text-slate-600">{c.join('; ')}</span> : null}
                {nested && depth < 3 ? <FieldTable schema={nested} depth={depth + 1} /> : null}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** A component schema: its fields, or each alternative's fields. */
export function SchemaBlock({ schema }: { schema: Schema }) {
  if (schema.oneOf) {
    return (
      <div className="space-y-3">
        <p className="text-sm text-slate-700">One of:</p>
        {schema.oneOf.map((alt, i) => (
          <div key={i} className="rounded-md border border-stone-200 p-3">
            <p className="mb-1 text-sm font-semibold">{alt.title ?? `Alternative ${i + 1}`}</p>
            {alt.description ? (
              <p className="mb-1 text-sm text-slate-700">
                <InlineCode text={alt.description} />
              </p>
            ) : null}
            <FieldTable schema={alt} />
          </div>
        ))}
      </div>
    );
  }
  return <FieldTable schema={schema} />;
}
