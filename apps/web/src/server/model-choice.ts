import 'server-only';
import { env } from '../env';
import { GatewayError } from './errors';

/**
 * The model a `POST /api/predict` runs, from its optional `model` form field (beyond the seed, which
 * serves one model): absent → FOOD11_MODEL_NAME; else it must be one of FOOD11_MODEL_CHOICES, so a
 * caller can pick the ONNX model or the Python-backend one but cannot make the gateway call any
 * other model of the server. `INVALID_REQUEST` (400) otherwise.
 */
export function chooseModel(requested: string | undefined): string {
  const { modelName, modelChoices } = env();
  if (requested === undefined) return modelName;
  const name = requested.trim();
  if (name === '') return modelName;
  if (!modelChoices.includes(name)) {
    throw new GatewayError(
      'INVALID_REQUEST',
      `Unknown model "${name.slice(0, 100)}": choose one of ${modelChoices.map((m) => `"${m}"`).join(', ')}.`,
    );
  }
  return name;
}
