import { Classifier } from '@/components/classifier';
import { EXAMPLE_CREDIT, EXAMPLES } from '@/lib/gallery';

export default function Home() {
  return (
    <>
      <h1 className="mb-1 text-2xl font-bold tracking-tight sm:text-3xl">What food is in your photo?</h1>
      <p className="mb-6 max-w-2xl text-slate-700">
        Upload, drop, paste or take a photo of a dish. A Food-11 classifier running on a Triton inference
        server tells you which of 11 categories it most likely belongs to, and how sure it is.
      </p>
      <Classifier examples={EXAMPLES} />
      <footer className="mt-10 border-t border-stone-200 pt-4 text-sm text-slate-600">
        <p>{EXAMPLE_CREDIT}</p>
        <p className="mt-1">
          The demo model was trained only on photos of rice, dairy, eggs, meat, seafood and vegetables/fruit;
          it gives bread, desserts, fried food, noodles/pasta and soup almost no probability.
        </p>
      </footer>
    </>
  );
}
