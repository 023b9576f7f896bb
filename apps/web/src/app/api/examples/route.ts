import { EXAMPLE_CREDIT } from '@/lib/gallery';
import { EXAMPLES, trainedOnSentence } from '@/server/gallery';

export const dynamic = 'force-static';

/** GET /api/examples — the example gallery: held-out photos with the demo model's answers. */
export function GET(): Response {
  return Response.json({
    credit: EXAMPLE_CREDIT,
    trainedOn: trainedOnSentence(),
    examples: EXAMPLES.map((e) => ({ ...e, url: `/api/examples/${e.code}` })),
  });
}
