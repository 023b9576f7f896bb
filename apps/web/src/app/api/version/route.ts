import { env } from '@/env';
import { errorResponse, toGatewayError } from '@/server/errors';
import { getModelInfo } from '@/server/triton';
import pkg from '../../../../package.json' with { type: 'json' };

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** GET /api/version — app version and the model being served (labels included when known). */
export async function GET(): Promise<Response> {
  try {
    const { appVersion, modelName } = env();
    let model: Record<string, unknown> = { name: modelName };
    try {
      const m = await getModelInfo();
      model = { name: m.name, version: m.version, backend: m.backend, path: m.path, labels: m.labels };
    } catch (err) {
      model = { name: modelName, error: toGatewayError(err).message };
    }
    return Response.json(
      { app: pkg.name, version: appVersion ?? pkg.version, node: process.version, model },
      { headers: { 'cache-control': 'no-store' } },
    );
  } catch (err) {
    return errorResponse(err);
  }
}
