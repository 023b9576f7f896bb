import { env } from '@/env';
import { errorResponse, toGatewayError } from '@/server/errors';
import { oodApplies } from '@/server/ood';
import { getModelInfo } from '@/server/triton';
import pkg from '../../../../package.json' with { type: 'json' };

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/**
 * GET /api/version — app version, the default model (labels included when known) and every model a
 * prediction may pick, with its inference path and whether it carries the out-of-distribution signal.
 */
export async function GET(): Promise<Response> {
  try {
    const { appVersion, modelName, modelChoices } = env();
    let model: Record<string, unknown> = { name: modelName };
    try {
      const m = await getModelInfo();
      model = { name: m.name, version: m.version, backend: m.backend, path: m.path, labels: m.labels };
    } catch (err) {
      model = { name: modelName, error: toGatewayError(err).message };
    }
    // Every model a prediction may pick (its `model` field), described by the server, in parallel.
    const models = await Promise.all(
      modelChoices.map(async (name) => {
        const isDefault = name === modelName;
        try {
          const m = await getModelInfo(undefined, name);
          return {
            name,
            default: isDefault,
            version: m.version,
            backend: m.backend,
            path: m.path,
            outOfDistribution: oodApplies(m),
          };
        } catch (err) {
          return { name, default: isDefault, error: toGatewayError(err).message };
        }
      }),
    );
    return Response.json(
      { app: pkg.name, version: appVersion ?? pkg.version, node: process.version, model, models },
      { headers: { 'cache-control': 'no-store' } },
    );
  } catch (err) {
    return errorResponse(err);
  }
}
