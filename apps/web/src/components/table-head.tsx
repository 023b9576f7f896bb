/**
 * The head row of the `/api` page's tables: one `<th scope="col">` per column, all in the same
 * style, the last without right padding.
 */

/** A column: its label, or its label and extra classes (a fixed width, say) put first. */
export type TableColumn = string | { readonly label: string; readonly className?: string };

/** `<thead>` with one header cell per column. Labels must be unique (they are the React keys). */
export function TableHead({ columns }: { columns: readonly TableColumn[] }) {
  return (
    <thead>
      <tr className="border-b border-stone-200 text-slate-600">
        {columns.map((column, i) => {
          const { label, className } =
            typeof column === 'string' ? { label: column, className: undefined } : column;
          const classes = [className, 'py-1', i < columns.length - 1 ? 'pr-3' : undefined, 'font-medium']
            .filter((c): c is string => c !== undefined && c !== '')
            .join(' ');
          return (
            <th key={label} scope="col" className={classes}>
              {label}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}
