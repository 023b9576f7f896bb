import { errorResponse } from '@/server/errors';
import { modelStats } from '@/server/stats';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** GET /api/stats — the model's inference statistics (counts and cumulative ms). */
export async function GET(req: Request): Promise<Response> {
  try {
    return Response.json(await modelStats(req.signal), { headers: { 'cache-control': 'no-store' } });
  } catch (err) {
    return errorResponse(err);
  }
}
