import { EXAMPLE_CREDIT, EXAMPLES } from '@/lib/gallery';

export const dynamic = 'force-static';

/** GET /api/examples — the example gallery. */
export function GET(): Response {
  return Response.json({
    credit: EXAMPLE_CREDIT,
    examples: EXAMPLES.map((e) => ({ ...e, url: `/api/examples/${e.code}` })),
  });
}
