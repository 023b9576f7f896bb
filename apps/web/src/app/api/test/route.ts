import { readPicture, TEST_PICTURE } from '@/server/gallery';
import { predictResponse } from '@/server/predict';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** GET /api/test — classifies a bundled photo (like the original's /test). */
export function GET(req: Request): Promise<Response> {
  return predictResponse(req, '/api/test', () => readPicture(TEST_PICTURE));
}
