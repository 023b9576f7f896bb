import 'server-only';
import { checkImageSignature } from '@gourmetgram/image-preprocess';
import type { TritonClient } from '@tritonserver-ts/client';
import type { GrpcTransport } from '@tritonserver-ts/client/grpc';
import { frameServerSentEvent } from '@tritonserver-ts/protocol/http';
import { env } from '../env';
import { errorResponse, toGatewayError } from './errors';
import { logLine, requestIdsOf } from './request';
import { tritonClient } from './triton';

/**
 * The words of a decoupled caption model's answer for one photo (base64 text in `INPUT_IMAGE`, one
 * `TEXT` word per response), over either wire: HTTP through the generate extension's stream,
 * gRPC through `ModelStreamInfer`. Stopping early (or `signal`) cancels the request on the server.
 */
export async function* captionWords(
  client: TritonClient,
  model: string,
  base64: string,
  signal: AbortSignal,
): AsyncGenerator<string, void, undefined> {
  if (client.transport.kind === 'http') {
    for await (const response of client.generateStream(model, { INPUT_IMAGE: base64 }, { signal })) {
      const text = response.values.TEXT;
      yield typeof text === 'string' ? text : '';
    }
    return;
  }
  const stream = (client.transport as GrpcTransport).openStream({ signal });
  try {
    stream.send(model, [{ name: 'INPUT_IMAGE', datatype: 'BYTES', shape: [1], data: [base64] }], {
      enableEmptyFinalResponse: true,
    });
    for await (const response of stream) {
      if (response.error !== undefined) throw response.error;
      if (response.final && response.empty) return;
      yield response.result?.asStrings('TEXT')[0] ?? '';
      if (response.final) return;
    }
  } finally {
    stream.cancel();
  }
}

/** Whether the caption model is configured and READY (checked per request: a model may be loaded later). */
async function captionReady(client: TritonClient, model: string, signal: AbortSignal): Promise<boolean> {
  if (model === '') return false;
  try {
    return await client.isModelReady(model, undefined, { signal, maxRetries: 0 });
  } catch {
    return false;
  }
}

const encoder = new TextEncoder();
/** One event of the caption stream, framed as the inference server frames generate_stream's. */
const event = (value: unknown): Uint8Array => encoder.encode(frameServerSentEvent(JSON.stringify(value)));

/**
 * `POST /api/caption`: the streamed caption of an uploaded photo as Server-Sent Events, one
 * `{"text": "<word>"}` per word (with its leading space), then `{"done": true}`; an error after the
 * stream started is `{"error": {"code", "message"}}` and ends it. Before the stream starts, errors are
 * the gateway's JSON errors (the same upload limits and checks as /api/predict), and a server without
 * the caption model answers 204. The browser going away cancels the model's request.
 */
export async function captionResponse(
  req: Request,
  route: string,
  getUpload: () => Promise<{ bytes: Uint8Array }>,
): Promise<Response> {
  const { requestId } = requestIdsOf(req);
  try {
    const { bytes } = await getUpload();
    checkImageSignature(bytes);
    const client = await tritonClient();
    const model = env().captionModel;
    if (!(await captionReady(client, model, req.signal))) {
      return new Response(null, { status: 204, headers: { 'x-request-id': requestId } });
    }
    const words = captionWords(client, model, Buffer.from(bytes).toString('base64'), req.signal);
    // The first word (or the first error) before answering: an error then is a plain JSON error.
    const first = await words.next();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (!first.done) controller.enqueue(event({ text: first.value }));
      },
      async pull(controller) {
        try {
          const next = first.done ? first : await words.next();
          if (next.done) {
            controller.enqueue(event({ done: true }));
            controller.close();
            return;
          }
          controller.enqueue(event({ text: next.value }));
        } catch (err) {
          const g = toGatewayError(err);
          logLine({
            level: 'warn',
            route,
            requestId,
            msg: 'caption stream failed',
            code: g.code,
            err: g.message,
          });
          controller.enqueue(event({ error: { code: g.code, message: g.message } }));
          controller.close();
        }
      },
      async cancel() {
        await words.return();
      },
    });
    return new Response(body, {
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-request-id': requestId,
      },
    });
  } catch (err) {
    return errorResponse(toGatewayError(err), requestId);
  }
}
