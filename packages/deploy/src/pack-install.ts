// What the pack-and-install test needs besides processes: the public packages, their tarballs' file
// lists, a lockfile that installs the tarballs offline, and the README examples as runnable code.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';

import { repoRoot } from './repo.js';

/** The published packages, by folder under packages/. */
export const PUBLIC_PACKAGE_DIRS = ['protocol', 'client', 'server', 'perf', 'onnx-builder'] as const;
export type PublicPackageDir = (typeof PUBLIC_PACKAGE_DIRS)[number];

/** The package.json fields this test reads. */
export interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  keywords?: string[];
  files?: string[];
  engines?: Record<string, string>;
  publishConfig?: { access?: string };
  repository?: { type?: string; url?: string; directory?: string };
  bin?: Record<string, string>;
  exports?: Record<string, string | Record<string, string>>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optionalDependencies?: Record<string, string>;
}

export function packageJson(dir: string): PackageJson {
  return JSON.parse(readFileSync(join(repoRoot, 'packages', dir, 'package.json'), 'utf8')) as PackageJson;
}

/** A packed tarball: its file name (in the pack directory) and the paths it holds. */
export interface Tarball {
  dir: PublicPackageDir;
  pkg: PackageJson;
  filename: string;
  files: string[];
}

/** `npm pack` of packages/<dir> into `destination` (no scripts: the dist is the one built). */
export async function pack(
  dir: PublicPackageDir,
  destination: string,
  env: NodeJS.ProcessEnv,
): Promise<Tarball> {
  const { stdout } = await promisify(execFile)(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', destination],
    { cwd: join(repoRoot, 'packages', dir), env, maxBuffer: 64 * 1024 * 1024 },
  );
  const [result] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  if (result === undefined) throw new Error(`npm pack in packages/${dir} printed no result`);
  return { dir, pkg: packageJson(dir), filename: result.filename, files: result.files.map((f) => f.path) };
}

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

/**
 * A package-lock.json for a project that depends on the tarballs only. Third-party packages get the
 * versions, integrities and layout of this repository's own lockfile (the closure of what the
 * tarballs need), so `npm ci --offline` installs exactly what the repository is tested with, from
 * the npm cache that `npm ci` filled, without asking the registry for package metadata (which
 * `npm install --offline` would need, and `npm ci` never caches).
 */
export function lockfileFor(
  tarballs: readonly Tarball[],
  packDir: string,
  projectName: string,
): { packageJson: object; lockfile: object } {
  const rootLock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const entries = rootLock.packages;
  const byDir = new Map(tarballs.map((t) => [t.dir as string, t]));
  // A location in the repository's tree → the same package's location in the project's tree.
  const target = (location: string): string => {
    const m = /^packages\/([^/]+)(\/.*)?$/.exec(location);
    const tarball = m ? byDir.get(m[1] ?? '') : undefined;
    if (!m || tarball === undefined) return location;
    return `node_modules/${tarball.pkg.name}${m[2] ?? ''}`;
  };
  // Node's lookup: <location>/node_modules/<dep>, then each enclosing node_modules level.
  const resolve = (from: string, dep: string): string | undefined => {
    let location = from;
    for (;;) {
      const candidate = location === '' ? `node_modules/${dep}` : `${location}/node_modules/${dep}`;
      if (entries[candidate] !== undefined) return candidate;
      if (location === '') return undefined;
      const up = location.lastIndexOf('/node_modules/');
      location = up >= 0 ? location.slice(0, up) : '';
    }
  };
  const out: Record<string, LockEntry> = {};
  const visit = (location: string): void => {
    const entry = entries[location];
    if (entry === undefined) throw new Error(`package-lock.json has no ${location}`);
    if (entry.link === true && typeof entry.resolved === 'string') return visit(entry.resolved);
    const to = target(location);
    if (out[to] !== undefined) return;
    const workspace = /^packages\/([^/]+)$/.exec(location);
    let lock: LockEntry;
    if (workspace) {
      const tarball = byDir.get(workspace[1] ?? '');
      if (tarball === undefined) throw new Error(`${location} is not packed: is it private?`);
      const { version, license, bin, engines, dependencies, peerDependencies, peerDependenciesMeta } =
        tarball.pkg;
      const bytes = readFileSync(join(packDir, tarball.filename));
      const fields: Record<string, unknown> = {
        version,
        resolved: `file:../${tarball.filename}`,
        integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
        license,
        bin,
        engines,
        dependencies,
        peerDependencies,
        peerDependenciesMeta,
      };
      lock = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
    } else {
      lock = { ...entry };
      for (const flag of ['dev', 'devOptional', 'peer', 'extraneous']) delete lock[flag];
    }
    out[to] = lock;
    const needed: Record<string, boolean> = {};
    for (const dep of Object.keys(lock.dependencies ?? {})) needed[dep] = false;
    for (const dep of Object.keys(lock.optionalDependencies ?? {})) needed[dep] = true;
    for (const dep of Object.keys(lock.peerDependencies ?? {}))
      if (lock.peerDependenciesMeta?.[dep]?.optional !== true) needed[dep] = false;
    for (const [dep, optional] of Object.entries(needed)) {
      const found = resolve(location, dep);
      if (found !== undefined) visit(found);
      else if (!optional) throw new Error(`${location} needs ${dep}, which package-lock.json does not hold`);
    }
  };
  for (const tarball of tarballs) visit(`packages/${tarball.dir}`);
  const dependencies = Object.fromEntries(tarballs.map((t) => [t.pkg.name, `file:../${t.filename}`]));
  const packageJson = { name: projectName, version: '1.0.0', private: true, type: 'module', dependencies };
  const sorted = Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
  const lockfile = {
    name: projectName,
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: projectName, version: '1.0.0', dependencies }, ...sorted },
  };
  return { packageJson, lockfile };
}

/** The code blocks of a Markdown text in the given languages, in order. */
export function codeBlocks(markdown: string, languages: readonly string[] = ['ts', 'js']): string[] {
  const out: string[] = [];
  const pattern = /^```(\w+)[^\n]*\n([\s\S]*?)^```\s*$/gm;
  for (const match of markdown.matchAll(pattern)) {
    if (languages.includes((match[1] ?? '').toLowerCase())) out.push(match[2] ?? '');
  }
  return out;
}

/** `text` with each `from` replaced; a `from` the text does not hold is an error (the README changed). */
export function substitute(text: string, pairs: readonly (readonly [string, string])[]): string {
  let out = text;
  for (const [from, to] of pairs) {
    if (!out.includes(from)) throw new Error(`the example no longer holds \`${from}\`:\n${text}`);
    out = out.split(from).join(to);
  }
  return out;
}

/** TypeScript example code as an ES module Node runs (types erased, nothing else changed). */
export function toModule(code: string): string {
  return ts.transpileModule(code, {
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2023,
      verbatimModuleSyntax: false,
    },
  }).outputText;
}

/**
 * Type-checks `.ts` files in `projectDir` as a user's project would (strict, NodeNext), against the
 * types its node_modules hold (the tarballs' declarations); Node's types come from this repository.
 * Returns the diagnostics as text lines (empty when the files check).
 */
export function typeCheck(projectDir: string, files: readonly string[]): string[] {
  const program = ts.createProgram(
    files.map((f) => join(projectDir, f)),
    {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2023,
      lib: ['lib.es2023.d.ts'],
      types: ['node'],
      typeRoots: [join(repoRoot, 'node_modules/@types')],
      skipLibCheck: true,
    },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file !== undefined && d.start !== undefined
        ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: `
        : '';
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}
