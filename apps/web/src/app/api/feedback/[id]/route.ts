import { parsePredictionId } from '@/server/api-schemas';
import { errorResponse, GatewayError } from '@/server/errors';
import { requireFeedbackStore } from '@/server/feedback-store';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** GET /api/feedback/:id — the stored prediction, its upload's key and every feedback event. */
export async function GET(_req: Request, ctx: { params: Promise<{ id: string }> }): Promise<Response> {
  try {
    const id = parsePredictionId((await ctx.params).id);
    const record = await requireFeedbackStore().get(id);
    if (!record) throw new GatewayError('NOT_FOUND', `No stored prediction with id ${id}.`);
    return Response.json(record, { headers: { 'cache-control': 'no-store' } });
  } catch (err) {
    return errorResponse(err);
  }
}
