import { compare, PATH_TEXT, type Measured } from '@/lib/compare';
import { TableHead } from './table-head';

function percent(p: number): string {
  return `${(p * 100).toFixed(1)}%`;
}

/**
 * The same photo through each model: verdict, top label and probability, and where the time went
 * (the browser's round trip, the gateway's total, the Triton call), fastest path marked.
 */
export function PathComparison({ results }: { results: readonly Measured[] }) {
  const { rows, agree, sameVerdict, fastest } = compare(results);
  return (
    <div className="mt-3" data-testid="comparison">
      <div className="overflow-x-auto">
        <table className="w-full text-left text-sm">
          <TableHead
            columns={[
              'way',
              'verdict',
              'top class',
              'probability',
              'round trip',
              'server total',
              'Triton call',
            ]}
          />
          <tbody>
            {rows.map((r) => (
              <tr key={r.model} data-path={r.path} className="border-b border-stone-100">
                <th scope="row" className="py-1 pr-3 font-medium">
                  {PATH_TEXT[r.path].title}
                  <span className="block text-xs font-normal text-slate-600">
                    {r.model} ({r.path} path)
                  </span>
                </th>
                <td className="py-1 pr-3" data-verdict={r.verdict}>
                  {r.headline}
                </td>
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
        {sameVerdict
          ? 'Every way gives the same verdict.'
          : agree
            ? 'The ways agree on the top class but not on the verdict.'
            : 'The ways disagree.'}{' '}
        The round trip is what you waited for; the server total is the gateway&apos;s own time, and the Triton
        call is the inference request (on the Python model and the server pipeline it includes decoding and
        preparing the photo on the server).
      </p>
    </div>
  );
}
