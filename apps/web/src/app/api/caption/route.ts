import { env } from '@/env';
import { captionResponse } from '@/server/caption';
import { readUpload } from '@/server/request';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** POST /api/caption — multipart field `file` → the photo's caption, streamed as Server-Sent Events. */
export function POST(req: Request): Promise<Response> {
  return captionResponse(req, '/api/caption', () => readUpload(req, env().maxUploadBytes));
}
