import { Classifier } from '@/components/classifier';
import { env } from '@/env';
import { EXAMPLE_CREDIT } from '@/lib/gallery';
import { EXAMPLES, trainedOnSentence } from '@/server/gallery';

export default function Home() {
  return (
    <>
      <h1 className="mb-1 text-2xl font-bold tracking-tight sm:text-3xl">What food is in your photo?</h1>
      <p className="max-w-2xl text-slate-700">
        Upload, drop, paste or take a photo of a dish. A Food-11 classifier running on a Triton inference
        server tells you which of 11 categories it likely belongs to, or that it is not sure, or that the
        photo does not look like food it knows.
      </p>
      {/* Computed from the model build's report (model-card.json), not written by hand. */}
      <p className="mt-2 mb-6 max-w-2xl text-sm text-slate-700" data-testid="trained-on">
        {trainedOnSentence()}
      </p>
      <Classifier examples={EXAMPLES} maxUploadBytes={env().maxUploadBytes} />
      <footer className="mt-10 border-t border-stone-200 pt-4 text-sm text-slate-600">
        <p>{EXAMPLE_CREDIT}</p>
      </footer>
    </>
  );
}
