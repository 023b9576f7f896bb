import { useId } from 'react';
import { choiceLabel, COMPARE, type ModelChoice } from '@/lib/compare';

/**
 * Which model classifies the next photo: one radio per model `GET /api/version` lists (the ONNX
 * tensor path, the Python-backend path), and "Compare both", which runs the photo through each in
 * turn and shows their labels and latencies side by side. Hidden while fewer than two models are
 * listed (the single model is then the only choice).
 */
export function ModelPicker({
  choices,
  value,
  onChange,
}: {
  choices: readonly ModelChoice[];
  value: string;
  onChange: (value: string) => void;
}) {
  const name = useId();
  if (choices.length < 2) return null;
  const options = [
    ...choices.map((c) => ({
      value: c.name,
      label: choiceLabel(c),
      hint: c.error ?? (c.default ? 'the default' : undefined),
      disabled: c.error !== undefined,
    })),
    {
      value: COMPARE,
      label: choices.length === 2 ? 'Compare both' : `Compare all ${choices.length}`,
      hint: 'the same photo through each model, latencies side by side',
      disabled: false,
    },
  ];
  return (
    <fieldset data-testid="model-picker" className="rounded-xl border border-stone-200 bg-white p-4">
      <legend className="px-1 font-semibold">Model</legend>
      <div className="flex flex-col gap-2">
        {options.map((o) => (
          <label key={o.value} className="flex items-start gap-2 text-sm">
            <input
              type="radio"
              name={name}
              value={o.value}
              checked={value === o.value}
              disabled={o.disabled}
              onChange={() => onChange(o.value)}
              className="mt-0.5 accent-emerald-800"
            />
            <span>
              <span className="font-medium">{o.label}</span>
              {o.hint && <span className="block text-xs text-slate-600">{o.hint}</span>}
            </span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}
