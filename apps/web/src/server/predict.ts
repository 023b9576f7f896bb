import 'server-only';
import { env } from '../env';
import type { Prediction } from '../lib/types';
import { classify } from './classify';
import { errorResponse, toGatewayError } from './errors';
import { feedbackStore } from './feedback-store';
import { logLine, requestIdsOf } from './request';

/** Runs one classification for a route: log line, feedback save (fire and forget), JSON or error. */
export async function predictResponse(
  req: Request,
  route: string,
  getBytes: () => Promise<Uint8Array>,
): Promise<Response> {
  const { requestId, clientRequestId } = requestIdsOf(req);
  const ids = clientRequestId ? { requestId, clientRequestId } : { requestId };
  const started = performance.now();
  try {
    const bytes = await getBytes();
    const prediction: Prediction = await classify(bytes, { requestId, signal: req.signal });
    const { feedback, log } = env();
    const store = feedbackStore();
    store?.remember(prediction, bytes);
    if (store && feedback.savePredictions) {
      // Off the response path; feedback for this id waits for it.
      store
        .savePrediction(prediction, bytes)
        .catch((err: unknown) =>
          logLine({ level: 'error', route, ...ids, msg: 'saving prediction failed', err: String(err) }),
        );
    }
    if (log) {
      logLine({ route, ...ids, status: 200, label: prediction.label, ms: prediction.timings });
    }
    return Response.json(prediction, { headers: { 'cache-control': 'no-store', 'x-request-id': requestId } });
  } catch (err) {
    const g = toGatewayError(err);
    if (env().log || g.status >= 500) {
      logLine({
        level: g.status >= 500 ? 'error' : 'warn',
        route,
        ...ids,
        status: g.status,
        code: g.code,
        msg: g.message,
        ms: Math.round(performance.now() - started),
        ...(g.code === 'INTERNAL_ERROR' ? { cause: String(g.cause) } : {}),
      });
    }
    return errorResponse(g, requestId);
  }
}
