import { errorResponse } from '@/server/errors';
import { health } from '@/server/stats';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** GET /api/health — app, server live/ready, model ready. 200 when usable, else 503 (same body). */
export async function GET(): Promise<Response> {
  try {
    const h = await health();
    return Response.json(h, { status: h.ok ? 200 : 503, headers: { 'cache-control': 'no-store' } });
  } catch (err) {
    return errorResponse(err);
  }
}
