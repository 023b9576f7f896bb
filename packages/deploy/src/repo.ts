// Paths and small readers shared by the deployment checks.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const repoRoot = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
export const dockerDir = join(repoRoot, 'docker');
export const modelsDir = join(repoRoot, 'models_staging');

export function read(relative: string): string {
  return readFileSync(join(repoRoot, relative), 'utf8');
}

export function exists(relative: string): boolean {
  return existsSync(join(repoRoot, relative));
}

/** Files git tracks under a path (what a fresh clone, and so a `docker build` of it, has). */
export function trackedFiles(relative: string): string[] {
  const out = execFileSync('git', ['ls-files', '--', relative], { cwd: repoRoot, encoding: 'utf8' });
  return out.split('\n').filter(Boolean);
}

/** Every YAML document of every .yaml file under a directory, with its file. */
export function yamlDocuments(relativeDir: string): { file: string; doc: Record<string, unknown> }[] {
  const out: { file: string; doc: Record<string, unknown> }[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(repoRoot, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(repoRoot, path)).isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(name)) {
        for (const document of parseAllDocuments(read(path))) {
          if (document.errors.length > 0) throw new Error(`${path}: ${document.errors[0]?.message}`);
          const value: unknown = document.toJS();
          if (value !== null && typeof value === 'object')
            out.push({ file: path, doc: value as Record<string, unknown> });
        }
      }
    }
  };
  walk(relativeDir);
  return out;
}

/** The string parameters of a config.pbtxt (`parameters { key: "k" value { string_value: "v" } }`). */
export function pbtxtParameters(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  // Map entries look the same in the `parameters: { … }` and `parameters [ { … }, … ]` spellings.
  const entry = /key\s*:\s*"([^"]*)"\s*[,;]?\s*value\s*:?\s*[{<]\s*string_value\s*:\s*"([^"]*)"\s*[}>]/g;
  for (const match of stripComments(text).matchAll(entry)) out[match[1] ?? ''] = match[2] ?? '';
  return out;
}

/** A top-level scalar field of a config.pbtxt (`backend: "python"`, `max_batch_size: 16`). */
export function pbtxtField(text: string, field: string): string | undefined {
  const match = new RegExp(`^\\s*${field}\\s*:\\s*"?([^"\\s]+)"?`, 'm').exec(stripComments(text));
  return match?.[1];
}

function stripComments(text: string): string {
  return text.replace(/#[^\n]*/g, '');
}

/** Model directories of models_staging/ that have a config.pbtxt. */
export function modelNames(): string[] {
  return readdirSync(modelsDir).filter((name) => existsSync(join(modelsDir, name, 'config.pbtxt')));
}
