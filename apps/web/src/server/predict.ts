import 'server-only';
import { env } from '../env';
import type { Prediction } from '../lib/types';
import { classify } from './classify';
import { errorResponse, toGatewayError } from './errors';
import { feedbackStore } from './feedback-store';
import { chooseModel } from './model-choice';
import { logLine, requestIdsOf } from './request';

/**
 * Runs one classification for a route: log line, feedback save (fire and forget), JSON or error.
 * An upload may name its model (`model`, one of FOOD11_MODEL_CHOICES; see chooseModel).
 * `getUpload` answers the bytes, or the bytes with the uploaded file's name: only named uploads are
 * written in the original production layout (the bundled test photo is not, as in the original).
 */
export async function predictResponse(
  req: Request,
  route: string,
  getUpload: () => Promise<Uint8Array | { bytes: Uint8Array; name: string; model?: string }>,
): Promise<Response> {
  const { requestId, clientRequestId } = requestIdsOf(req);
  const ids = clientRequestId ? { requestId, clientRequestId } : { requestId };
  const started = performance.now();
  try {
    const upload = await getUpload();
    const { bytes, name, model } =
      upload instanceof Uint8Array ? { bytes: upload, name: undefined, model: undefined } : upload;
    const prediction: Prediction = await classify(bytes, {
      requestId,
      signal: req.signal,
      model: chooseModel(model),
    });
    const { feedback, log } = env();
    const store = feedbackStore();
    // Off the response path (never rejects); feedback on this id waits for it.
    const production = name !== undefined ? store?.recordProduction(prediction, bytes, name) : undefined;
    store?.remember(prediction, bytes, production);
    if (store && feedback.savePredictions) {
      // Off the response path; feedback for this id waits for it.
      store
        .savePrediction(prediction, bytes, production)
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
