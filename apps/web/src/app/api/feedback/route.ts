import { env } from '@/env';
import { errorResponse, GatewayError } from '@/server/errors';
import { parseFeedbackRequest } from '@/server/api-schemas';
import { readBody } from '@/server/request';
import { requireFeedbackStore } from '@/server/feedback-store';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/**
 * POST /api/feedback — `{ predictionId, kind: 'confirm' | 'flag' | 'correction', correctLabel? }` → 201
 * with the stored event, or 200 with the event already stored when the same one was sent before.
 */
export async function POST(req: Request): Promise<Response> {
  try {
    const { maxFeedbackBytes } = env();
    const text = await readBody(
      req,
      maxFeedbackBytes,
      () => new GatewayError('BODY_TOO_LARGE', `A feedback body is at most ${maxFeedbackBytes} bytes.`),
    );
    let json: unknown;
    try {
      json = JSON.parse(text.toString('utf8'));
    } catch {
      throw new GatewayError('INVALID_REQUEST', 'Send a JSON body.');
    }
    // The schema (src/server/api-schemas.ts) is also what /api/openapi.json documents.
    const { predictionId, comment, ...rest } = parseFeedbackRequest(json);
    const { event, created } = await requireFeedbackStore().addEvent(predictionId, {
      ...rest,
      ...(comment !== undefined ? { comment } : {}),
    });
    return Response.json({ predictionId, ...event }, { status: created ? 201 : 200 });
  } catch (err) {
    return errorResponse(err);
  }
}
