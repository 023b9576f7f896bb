import { z } from 'zod';
import { env } from '@/env';
import { errorResponse, GatewayError } from '@/server/errors';
import { checkPredictionId } from '@/server/prediction-id';
import { readBody } from '@/server/request';
import { requireFeedbackStore } from '@/server/feedback-store';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

const body = z.discriminatedUnion('kind', [
  z.object({
    predictionId: z.string(),
    kind: z.literal('flag'),
    comment: z.string().max(500).optional(),
  }),
  z.object({
    predictionId: z.string(),
    kind: z.literal('correction'),
    correctLabel: z.string().trim().min(1).max(100),
    comment: z.string().max(500).optional(),
  }),
]);

/** POST /api/feedback — `{ predictionId, kind: 'flag' | 'correction', correctLabel? }` → 201 with the stored event. */
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
    const parsed = body.safeParse(json);
    if (!parsed.success) {
      throw new GatewayError(
        'INVALID_REQUEST',
        `Invalid feedback: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'} ${i.message}`).join('; ')}`,
      );
    }
    const { predictionId, comment, ...rest } = parsed.data;
    checkPredictionId(predictionId);
    const stored = await requireFeedbackStore().addEvent(predictionId, {
      ...rest,
      ...(comment !== undefined ? { comment } : {}),
    });
    return Response.json({ predictionId, ...stored }, { status: 201 });
  } catch (err) {
    return errorResponse(err);
  }
}
