import { compare, type Measured } from '@/lib/compare';
import { TableHead } from './table-head';

const PATH_NAMES = { tensor: 'ONNX (tensor path)', python: 'Python backend' } as const;

function percent(p: number): string {
  return `${(p * 100).toFixed(1)}%`;
}

/**
 * The same photo through each model: label, probability, and where the time went (the browser's
 * round trip, the gateway's total, the Triton call), fastest path marked.
 */
export function PathComparison({ results }: { results: readonly Measured[] }) {
  const { rows, agree, fastest } = compare(results);
  return (
    <div className="mt-5" data-testid="comparison">
      <h3 className="mb-2 font-semibold">Both paths, side by side</h3>
      <div className="overflow-x-auto">
        <table className="w-full text-left text-sm">
          <TableHead
            columns={['path', 'label', 'probability', 'round trip', 'server total', 'Triton call']}
          />
          <tbody>
            {rows.map((r) => (
              <tr key={r.model} data-path={r.path} className="border-b border-stone-100">
                <th scope="row" className="py-1 pr-3 font-medium">
                  {PATH_NAMES[r.path]}
                  <span className="block text-xs font-normal text-slate-600">{r.model}</span>
                </th>
                <td className="py-1 pr-3">{r.label}</td>
                <td className="py-1 pr-3 tabular-nums">{percent(r.probability)}</td>
                <td className="py-1 pr-3 tabular-nums">
                  {r.roundTripMs.toFixed(0)} ms
                  {rows.length > 1 && (
                    <span className="block text-xs text-slate-600">
                      {r.model === fastest ? 'fastest' : `${r.relative.toFixed(1)}× the fastest`}
                    </span>
                  )}
                </td>
                <td className="py-1 pr-3 tabular-nums">{r.serverMs.toFixed(1)} ms</td>
                <td className="py-1 tabular-nums">{r.inferMs.toFixed(1)} ms</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="mt-2 text-sm text-slate-700" data-testid="comparison-verdict">
        {agree ? 'Both paths agree on the label.' : 'The paths disagree on the label.'} The round trip is what
        you waited for; the server total is the gateway&apos;s own time, and the Triton call is the inference
        request (on the Python path it includes model.py decoding and preprocessing the photo and its BLS call
        to the ONNX model).
      </p>
    </div>
  );
}
