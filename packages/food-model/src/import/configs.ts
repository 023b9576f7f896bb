/**
 * The model configs an imported model needs: the demo model's `ood_score` output (and what is built
 * on it: `food_classifier`'s `OOD_SCORE`, the ensemble's `ood_score` output and its step's
 * `output_map`) is removed, since an imported model has no such output and Triton refuses a config
 * that declares an output the model lacks. Text edits, so every comment and setting of the files stays.
 *
 * @packageDocumentation
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FoodModelError } from '../errors.js';
import { parsePbtxt } from '../pbtxt.js';

/** Index of the `}` matching the `{` at `open`. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      // skip a string literal
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  throw new Error('unbalanced braces');
}

/**
 * Removes every `{ … }` block (an element of a list such as `output [ … ]`, or a field such as
 * `output_map { … }`) whose own fields include `<field>: "<value>"`, with the comma that joined it to
 * its list and the comment lines just before it. Returns the text and how many blocks went.
 */
export function removeBlocks(text: string, field: string, value: string): { text: string; removed: number } {
  const needle = new RegExp(`(^|[\\s{])${field}\\s*:\\s*"${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`);
  let out = text;
  let removed = 0;
  for (let from = 0; ;) {
    const open = out.indexOf('{', from);
    if (open < 0) break;
    const close = matchingBrace(out, open);
    const body = out.slice(open + 1, close);
    // Only the block's own fields: drop nested blocks before looking.
    let own = body;
    for (let i = own.indexOf('{'); i >= 0; i = own.indexOf('{'))
      own = own.slice(0, i) + own.slice(matchingBrace(own, i) + 1);
    if (!needle.test(own.replace(/#[^\n]*/g, ''))) {
      from = open + 1;
      continue;
    }
    // The block starts at its field name (`output_map {`) or at the `{` of a list element.
    let start = open;
    const head = /([A-Za-z_][A-Za-z0-9_]*)\s*:?\s*$/.exec(out.slice(0, open));
    if (head) start = head.index;
    let end = close + 1;
    // The joining comma: the one before the block when it is not the list's first element, else after.
    const before = /,\s*$/.exec(out.slice(0, start));
    const after = /^\s*,/.exec(out.slice(end));
    if (before) start = before.index;
    else if (after) end += after[0].length;
    // Whole lines when the block is alone on its lines (and its comments before it).
    const lineStart = out.lastIndexOf('\n', start - 1) + 1;
    const ownLines = /^\s*$/.test(out.slice(lineStart, start));
    if (ownLines) {
      start = lineStart;
      for (;;) {
        const prev = out.lastIndexOf('\n', start - 2) + 1;
        if (prev >= start || !/^\s*#/.test(out.slice(prev, start - 1))) break;
        start = prev;
      }
      if (before) start = before.index; // keep the previous element's closing line intact
    }
    const lineEnd = out.indexOf('\n', end);
    if (lineEnd >= 0 && /^\s*$/.test(out.slice(end, lineEnd)))
      end = ownLines && !before ? lineEnd + 1 : lineEnd;
    out = out.slice(0, start) + out.slice(end);
    removed++;
    from = start;
  }
  return { text: out, removed };
}

/** The config files of the repository that mention the demo's out-of-distribution output. */
export interface ConfigEdit {
  /** Path relative to the repository root. */
  file: string;
  /** Blocks removed. */
  removed: number;
}

/** `[file, field, value]`: each config block an imported model does without. */
const EDITS: readonly (readonly [string, string, string])[] = [
  ['models_staging/food_classifier_onnx/config.pbtxt', 'name', 'ood_score'],
  ['models_staging/food_classifier_onnx/configs/gpu.pbtxt', 'name', 'ood_score'],
  ['models_staging/food_classifier/config.pbtxt', 'name', 'OOD_SCORE'],
  ['models_staging/food_classifier/configs/gpu.pbtxt', 'name', 'OOD_SCORE'],
  ['models_staging/food_classifier_ensemble/config.pbtxt', 'name', 'ood_score'],
  ['models_staging/food_classifier_ensemble/config.pbtxt', 'key', 'ood_score'],
];

/**
 * Removes the `ood_score` output (and what depends on it) from the repository's configs under
 * `repoRoot`. Idempotent: a config without it is left as it is. Each edited file is parsed again
 * before it is written (`IMPORT_FAILED` otherwise).
 */
export function dropOodOutputs(repoRoot: string): ConfigEdit[] {
  const texts = new Map<string, string>();
  const edits: ConfigEdit[] = [];
  for (const [file, field, value] of EDITS) {
    const full = join(repoRoot, file);
    if (!existsSync(full)) continue;
    const before = texts.get(file) ?? readFileSync(full, 'utf8');
    const { text, removed } = removeBlocks(before, field, value);
    texts.set(file, text);
    const edit = edits.find((e) => e.file === file);
    if (edit) edit.removed += removed;
    else edits.push({ file, removed });
  }
  for (const [file, text] of texts) {
    try {
      parsePbtxt(text);
    } catch (cause) {
      throw new FoodModelError(
        'IMPORT_FAILED',
        `editing ${file} left it unreadable: ${(cause as Error).message}`,
        {
          cause,
        },
      );
    }
    if (text.includes('ood_score') && /name\s*:\s*"ood_score"|key\s*:\s*"ood_score"/.test(text)) {
      throw new FoodModelError('IMPORT_FAILED', `${file} still declares ood_score after the edit`);
    }
  }
  for (const [file, text] of texts) {
    const full = join(repoRoot, file);
    if (readFileSync(full, 'utf8') !== text) writeFileSync(full, text);
  }
  return edits;
}
