import { parseExampleCode } from '@/server/api-schemas';
import { errorResponse } from '@/server/errors';
import { readPicture } from '@/server/gallery';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** GET /api/examples/:code — an IFCT photo read from node_modules (AGPL-3.0; not committed here). */
export async function GET(_req: Request, ctx: { params: Promise<{ code: string }> }): Promise<Response> {
  try {
    const code = parseExampleCode((await ctx.params).code);
    const bytes = await readPicture(code);
    return new Response(new Uint8Array(bytes), {
      headers: { 'content-type': 'image/jpeg', 'cache-control': 'public, max-age=86400, immutable' },
    });
  } catch (err) {
    return errorResponse(err);
  }
}
