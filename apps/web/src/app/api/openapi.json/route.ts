import { errorResponse } from '@/server/errors';
import { openApiDocument } from '@/server/openapi';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** GET /api/openapi.json — the OpenAPI 3.1 document of this API (generated from its zod schemas). */
export function GET(): Response {
  try {
    return Response.json(openApiDocument(), { headers: { 'cache-control': 'no-cache' } });
  } catch (err) {
    return errorResponse(err);
  }
}
