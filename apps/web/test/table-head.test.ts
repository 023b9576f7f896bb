/**
 * `TableHead` renders the same head rows the `/api` page wrote out by hand before it existed
 * (markup compared byte for byte with the former JSX, rendered to static HTML).
 */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import { TableHead, type TableColumn } from '@/components/table-head';

function head(columns: readonly TableColumn[]): string {
  return renderToStaticMarkup(createElement('table', null, createElement(TableHead, { columns })));
}

/** The former hand-written head: `[label, classes]` per cell. */
function former(cells: readonly (readonly [string, string])[]): string {
  const ths = cells.map(([label, cls]) => `<th scope="col" class="${cls}">${label}</th>`).join('');
  return `<table><thead><tr class="border-b border-stone-200 text-slate-600">${ths}</tr></thead></table>`;
}

describe('TableHead', () => {
  it('renders the field table head (api-reference FieldTable)', () => {
    expect(head(['field', 'type', 'meaning'])).toBe(
      former([
        ['field', 'py-1 pr-3 font-medium'],
        ['type', 'py-1 pr-3 font-medium'],
        ['meaning', 'py-1 font-medium'],
      ]),
    );
  });

  it('renders the responses head with fixed widths first (api page)', () => {
    expect(head([{ label: 'status', className: 'w-56' }, { label: 'body', className: 'w-40' }, 'when'])).toBe(
      former([
        ['status', 'w-56 py-1 pr-3 font-medium'],
        ['body', 'w-40 py-1 pr-3 font-medium'],
        ['when', 'py-1 font-medium'],
      ]),
    );
  });

  it('renders the error-codes head (api page)', () => {
    expect(head(['code', 'status', 'meaning', 'routes'])).toBe(
      former([
        ['code', 'py-1 pr-3 font-medium'],
        ['status', 'py-1 pr-3 font-medium'],
        ['meaning', 'py-1 pr-3 font-medium'],
        ['routes', 'py-1 font-medium'],
      ]),
    );
  });
});
