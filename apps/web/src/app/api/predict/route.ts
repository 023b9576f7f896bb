import { env } from '@/env';
import { predictResponse } from '@/server/predict';
import { readUpload } from '@/server/request';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** POST /api/predict — multipart field `file` → prediction JSON. */
export function POST(req: Request): Promise<Response> {
  return predictResponse(req, '/api/predict', () => readUpload(req, env().maxUploadBytes));
}
