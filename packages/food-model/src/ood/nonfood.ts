/**
 * The clearly-not-food images the out-of-distribution score is checked against: sample images of two
 * Debian packages, read in place from where apt installs them (never copied into the repository).
 * Every image file of `opencv-doc`'s `samples/data` and `python3-skimage`'s `skimage/data` was looked
 * at; the ones that show food or are near-copies of another are left out, with the reason.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FoodModelError } from '../errors.js';

/** Where Debian's `opencv-doc` puts OpenCV's sample images. */
export const OPENCV_SAMPLES_DIR = '/usr/share/doc/opencv-doc/examples/data';
/** Where Debian's `python3-skimage` puts scikit-image's sample images. */
export const SKIMAGE_DATA_DIR = '/usr/lib/python3/dist-packages/skimage/data';
/** The Debian packages that provide {@link NONFOOD_IMAGES}. */
export const NONFOOD_DEBIAN_PACKAGES = ['opencv-doc', 'python3-skimage'] as const;

/** `photo`: a camera (or microscope, telescope) picture; `graphic`: drawn, rendered or synthetic. */
export type NonFoodKind = 'photo' | 'graphic';

/** One clearly-not-food image. */
export interface NonFoodImage {
  /** The Debian package that ships it. */
  readonly debianPackage: (typeof NONFOOD_DEBIAN_PACKAGES)[number];
  /** File name inside the package's sample directory. */
  readonly file: string;
  readonly kind: NonFoodKind;
  /** What it shows. */
  readonly shows: string;
}

const cv = (file: string, kind: NonFoodKind, shows: string): NonFoodImage => ({
  debianPackage: 'opencv-doc',
  file,
  kind,
  shows,
});
const sk = (file: string, kind: NonFoodKind, shows: string): NonFoodImage => ({
  debianPackage: 'python3-skimage',
  file,
  kind,
  shows,
});

/** The clearly-not-food images, one per scene (stereo pairs and frame series keep one image). */
export const NONFOOD_IMAGES: readonly NonFoodImage[] = [
  cv('aero1.jpg', 'photo', 'aerial view of a town'),
  cv('aloeL.jpg', 'photo', 'an aloe in a flower pot'),
  cv('baboon.jpg', 'photo', "a mandrill's face"),
  cv('basketball1.png', 'photo', 'two people in a room (greyscale)'),
  cv('board.jpg', 'photo', 'a circuit board'),
  cv('building.jpg', 'photo', 'an office building'),
  cv('butterfly.jpg', 'photo', 'a butterfly on a leaf'),
  cv('chicky_512.png', 'photo', 'a dog'),
  cv('ela_original.jpg', 'photo', 'a notebook'),
  cv('graf1.png', 'photo', 'a graffiti wall'),
  cv('home.jpg', 'photo', 'a palace against the sky'),
  cv('left.jpg', 'photo', 'books on a floor'),
  cv('left01.jpg', 'photo', 'a person holding a chessboard at a desk (greyscale)'),
  cv('leuvenA.jpg', 'photo', 'a street of brick houses'),
  cv('licenseplate_motion.jpg', 'photo', 'the back of a car, motion-blurred'),
  cv('messi5.jpg', 'photo', 'a footballer kicking a ball'),
  cv('pca_test1.jpg', 'photo', 'dark shapes on a light box'),
  cv('rubberwhale1.png', 'photo', 'toys and fabric'),
  cv('squirrel_cls.jpg', 'photo', 'a squirrel on a branch'),
  cv('stuff.jpg', 'photo', 'a pen, a lighter, a coin and a cap on a table'),
  cv('sudoku.png', 'photo', 'a sudoku printed in a newspaper'),
  cv('text_defocus.jpg', 'photo', 'a page of text, out of focus'),
  sk('astronaut.png', 'photo', 'an astronaut'),
  sk('brick.png', 'photo', 'a brick wall (greyscale)'),
  sk('camera.png', 'photo', 'a cameraman (greyscale)'),
  sk('cell.png', 'photo', 'a cell under a microscope (greyscale)'),
  sk('chelsea.png', 'photo', 'a cat'),
  sk('clock_motion.png', 'photo', 'a clock, motion-blurred (greyscale)'),
  sk('coins.png', 'photo', 'coins (greyscale)'),
  sk('grass.png', 'photo', 'grass (greyscale)'),
  sk('gravel.png', 'photo', 'gravel (greyscale)'),
  sk('hubble_deep_field.jpg', 'photo', 'the Hubble deep field'),
  sk('ihc.png', 'photo', 'a stained tissue section under a microscope'),
  sk('microaneurysms.png', 'photo', 'a retinal angiogram detail (greyscale)'),
  sk('moon.png', 'photo', 'the surface of the moon (greyscale)'),
  sk('motorcycle_left.png', 'photo', 'a motorcycle in a garage'),
  sk('page.png', 'photo', 'a printed page (greyscale)'),
  sk('retina.jpg', 'photo', 'a retina (fundus photograph)'),
  sk('rocket.jpg', 'photo', 'a rocket on a launch pad at night'),
  sk('text.png', 'photo', 'handwritten symbols on a surface (greyscale)'),
  cv('Blender_Suzanne1.jpg', 'graphic', 'a rendered monkey head'),
  cv('HappyFish.jpg', 'graphic', 'a cartoon fish'),
  cv('LinuxLogo.jpg', 'graphic', 'the word Linux on black'),
  cv('WindowsLogo.jpg', 'graphic', 'a Windows logo'),
  cv('aloeGT.png', 'graphic', 'a disparity map'),
  cv('blox.jpg', 'graphic', 'rendered blocks'),
  cv('cards.png', 'graphic', 'drawn playing cards'),
  cv('chessboard.png', 'graphic', 'a chessboard pattern'),
  cv('detect_blob.png', 'graphic', 'coloured shapes on black'),
  cv('digits.png', 'graphic', 'a grid of handwritten digits'),
  cv('ellipses.jpg', 'graphic', 'noisy ellipses'),
  cv('imageTextN.png', 'graphic', 'a page of typeset text'),
  cv('ml.png', 'graphic', 'a cartoon robot'),
  cv('notes.png', 'graphic', 'a line of music notation'),
  cv('opencv-logo.png', 'graphic', 'the OpenCV logo'),
  cv('pic1.png', 'graphic', 'black shapes'),
  cv('pic2.png', 'graphic', 'noisy coloured squares'),
  cv('pic3.png', 'graphic', 'outlined shapes'),
  cv('pic4.png', 'graphic', 'squares on a textured background'),
  cv('pic5.png', 'graphic', 'coloured polygons'),
  cv('pic6.png', 'graphic', 'gradient shapes'),
  cv('starry_night.jpg', 'graphic', 'a painting (The Starry Night)'),
  sk('color.png', 'graphic', 'a colour wheel'),
  sk('horse.png', 'graphic', 'a horse silhouette'),
  sk('logo.png', 'graphic', 'the scikit-image logo'),
  sk('phantom.png', 'graphic', 'a synthetic head phantom'),
];

/** Image files of the two directories that are not in {@link NONFOOD_IMAGES}, and why. */
export const NONFOOD_LEFT_OUT: readonly { readonly files: readonly string[]; readonly why: string }[] = [
  {
    files: ['apple.jpg', 'orange.jpg', 'fruits.jpg', 'smarties.png', 'coffee.png'],
    why: 'food or drink (an apple, an orange, cut fruit, sweets, a cup of coffee)',
  },
  {
    files: ['box.png', 'box_in_scene.png'],
    why: 'food packaging (a box of biscuits), not clearly not food',
  },
  {
    files: [
      'Blender_Suzanne2.jpg',
      'aero3.jpg',
      'aloeR.jpg',
      'basketball2.png',
      'ela_modified.jpg',
      'graf3.png',
      'imageTextR.png',
      'leuvenB.jpg',
      'right.jpg',
      'rubberwhale2.png',
      'text_motion.jpg',
      'opencv-logo-white.png',
      'motorcycle_right.png',
      'left02.jpg … left14.jpg, right01.jpg … right14.jpg (25 files)',
      'chessboard_RGB.png',
      'chessboard_GRAY.png',
    ],
    why: 'another view or frame of a scene already in the set (stereo pairs, the calibration series, edited copies)',
  },
  {
    files: [
      'gradient.png',
      'mask.png',
      'templ.png',
      'tmpl.png',
      'block.png',
      'checker_bilevel.png',
      'palette_color.png',
      'palette_gray.png',
      'green_palette.png',
      'foo3x5x4indexed.png',
      'chessboard_GRAY_U16.tif',
      'chessboard_GRAY_U16B.tif',
      'multipage.tif',
      'multipage_rgb.tif',
      '_blobs_3d_fiji_skeleton.tif',
      'no_time_for_that_tiny.gif',
      'truncated.jpg',
    ],
    why: 'test fixtures rather than pictures (masks, gradients, palettes, 16-bit and multi-page files, a truncated JPEG, a 16-pixel-wide GIF)',
  },
];

/** Absolute path of one image. */
export function nonFoodPath(image: NonFoodImage): string {
  return join(image.debianPackage === 'opencv-doc' ? OPENCV_SAMPLES_DIR : SKIMAGE_DATA_DIR, image.file);
}

/** Options for {@link ensureNonFoodImages}. */
export interface EnsureNonFoodOptions {
  /** Install the Debian packages with apt-get when images are missing and this process is root (default true). */
  install?: boolean;
  /** Progress output (default: console.log). */
  log?: (line: string) => void;
}

function missing(): NonFoodImage[] {
  return NONFOOD_IMAGES.filter((image) => !existsSync(nonFoodPath(image)));
}

/**
 * Makes sure every image of {@link NONFOOD_IMAGES} is on disk: when some are missing and the process
 * runs as root, installs `opencv-doc` and `python3-skimage` with apt-get (after `apt-get update` if
 * the first try fails). Fails with `NONFOOD_IMAGES_MISSING` naming the command to run otherwise.
 * @returns the absolute paths, in {@link NONFOOD_IMAGES} order.
 */
export function ensureNonFoodImages(options: EnsureNonFoodOptions = {}): string[] {
  const log = options.log ?? ((line: string) => console.log(line));
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (missing().length > 0 && (options.install ?? true) && isRoot) {
    log(`installing ${NONFOOD_DEBIAN_PACKAGES.join(' and ')} with apt-get (the non-food images)…`);
    const apt = (args: string[]): boolean =>
      spawnSync('apt-get', args, {
        stdio: 'inherit',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      }).status === 0;
    const install = ['install', '-y', '--no-install-recommends', ...NONFOOD_DEBIAN_PACKAGES];
    if (!apt(install)) {
      if (apt(['update'])) apt(install);
    }
  }
  const absent = missing();
  if (absent.length > 0) {
    throw new FoodModelError(
      'NONFOOD_IMAGES_MISSING',
      `${absent.length} non-food images are missing (e.g. ${nonFoodPath(absent[0] as NonFoodImage)}); ` +
        `install them with: sudo apt-get install -y ${NONFOOD_DEBIAN_PACKAGES.join(' ')}`,
    );
  }
  return NONFOOD_IMAGES.map(nonFoodPath);
}
