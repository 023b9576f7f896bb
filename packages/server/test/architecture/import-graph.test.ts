/**
 * The server's layering, checked on its import statements (issue 27): every `import … from`,
 * `export … from` and dynamic `import()` of `src/` is read (from TypeScript's syntax tree, so
 * comments and strings do not count), and
 *
 * - folders import only folders of their own layer or below ({@link LAYERS}, lowest first), and the
 *   folder-level graph has no cycle;
 * - no file outside a backend's folder (`src/runtime/<backend>/`) imports one of its files, except
 *   the registration modules ({@link REGISTRATION_MODULES});
 * - a backend's folder imports no other backend's folder;
 * - the core imports no wire (`src/http`, `src/grpc`, `@tritonserver-ts/protocol/http`, `…/grpc`);
 * - nothing imports `@tritonserver-ts/client` (the server speaks the protocol package);
 * - there is no file-level import cycle (type-only imports aside: they vanish at run time).
 *
 * Each failure names the offending files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/**
 * The layers, lowest first, and the modules that may name the backends' folders: the lists the
 * ESLint boundary rules enforce (`eslint.boundaries.js`, one definition for both checks). A folder
 * may import its own layer and the layers below it; `root` is the files directly in `src/` (cli,
 * start, index).
 */
const boundaries = (await import(pathToFileURL(resolve(SRC, '../../../eslint.boundaries.js')).href)) as {
  SERVER_LAYERS: readonly (readonly string[])[];
  SERVER_REGISTRATION_MODULES: readonly string[];
};
const LAYERS: readonly (readonly string[])[] = [...boundaries.SERVER_LAYERS, ['root']];

/** The modules that may name the backends' folders. */
const REGISTRATION_MODULES: ReadonlySet<string> = new Set(boundaries.SERVER_REGISTRATION_MODULES);

/** Wire modules the core must not import (package specifiers, and `src/` folders). */
const WIRE_PACKAGES = ['@tritonserver-ts/protocol/http', '@tritonserver-ts/protocol/grpc'];
const WIRE_FOLDERS = ['http', 'grpc'];

interface Edge {
  /** The importing file, relative to `src/` (POSIX separators). */
  readonly from: string;
  /** The imported file relative to `src/` for a relative import, else the package specifier. */
  readonly to: string;
  readonly relative: boolean;
  /** `import type` / `export type`: gone at run time. */
  readonly typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

const posix = (path: string): string => path.split(sep).join('/');

/** The module specifiers a source text imports: static, re-exported and dynamic. */
function specifiersIn(text: string): { specifier: string; typeOnly: boolean }[] {
  const source = ts.createSourceFile('module.ts', text, ts.ScriptTarget.Latest, true);
  const found: { specifier: string; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const typeOnly = ts.isImportDeclaration(node)
        ? node.importClause?.isTypeOnly === true
        : node.isTypeOnly;
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every import of every file of `src/`. */
function importEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = posix(relative(SRC, file));
    for (const { specifier, typeOnly } of specifiersIn(readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) {
        edges.push({ from, to: specifier, relative: false, typeOnly });
        continue;
      }
      const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
      edges.push({ from, to: posix(relative(SRC, target)), relative: true, typeOnly });
    }
  }
  return edges;
}

/** A file's folder: its first path segment under `src/`, `root` for files directly in `src/`. */
function folderOf(path: string): string {
  const parts = path.split('/');
  return parts.length === 1 ? 'root' : (parts[0] as string);
}

/** The backend folder (`runtime/<name>`) a file is in, if any. */
function backendOf(path: string): string | undefined {
  const parts = path.split('/');
  return parts[0] === 'runtime' && parts.length > 2 ? `runtime/${parts[1]}` : undefined;
}

function layerOf(folder: string): number {
  return LAYERS.findIndex((layer) => layer.includes(folder));
}

/** Strongly connected components with more than one node (or a self loop): the cycles. */
function cycles(nodes: Iterable<string>, next: (node: string) => Iterable<string>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    order.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of next(node)) {
      if (!order.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) as number, low.get(to) as number));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) as number, order.get(to) as number));
      }
    }
    if (low.get(node) === order.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || [...next(node)].includes(node)) found.push(component.sort());
    }
  };
  for (const node of nodes) if (!order.has(node)) visit(node);
  return found;
}

const edges = importEdges();
const relativeEdges = edges.filter((e) => e.relative && e.to.endsWith('.ts'));
const show = (list: readonly Edge[]): string[] => list.map((e) => `${e.from} -> ${e.to}`);

describe('the server import graph', () => {
  it('reads the imports of src/ (static, type-only and re-exports)', () => {
    expect(relativeEdges.length).toBeGreaterThan(300);
    const of = (from: string): string[] => relativeEdges.filter((e) => e.from === from).map((e) => e.to);
    expect(of('runtime/builtin-backends.ts')).toContain('runtime/onnxruntime/index.ts');
    expect(of('runtime/registry.ts')).toContain('repository/types.ts');
    expect(of('index.ts')).toContain('core/server.ts');
  });

  it('reads dynamic imports and type-only imports, and no import in a comment or a string', () => {
    const text = [
      "import type { A } from './a.js';",
      "import { b } from './b.js';",
      "export { c } from './c.js';",
      "export type * from './d.js';",
      "const lazy = await import('./e.js');",
      "// import { f } from './f.js';",
      "const g = `import { g } from './g.js'`;",
    ].join('\n');
    expect(specifiersIn(text)).toEqual([
      { specifier: './a.js', typeOnly: true },
      { specifier: './b.js', typeOnly: false },
      { specifier: './c.js', typeOnly: false },
      { specifier: './d.js', typeOnly: true },
      { specifier: './e.js', typeOnly: false },
    ]);
  });

  it('places every folder in a layer', () => {
    const folders = new Set(relativeEdges.flatMap((e) => [folderOf(e.from), folderOf(e.to)]));
    const unplaced = [...folders].filter((f) => layerOf(f) < 0 && !f.startsWith('..'));
    expect(unplaced, 'folders missing from SERVER_LAYERS in eslint.boundaries.js').toEqual([]);
  });

  it('imports no folder of a higher layer', () => {
    const upward = relativeEdges.filter((e) => {
      const from = layerOf(folderOf(e.from));
      const to = layerOf(folderOf(e.to));
      return from >= 0 && to >= 0 && to > from;
    });
    expect(show(upward), `layers, lowest first: ${LAYERS.map((l) => l.join('|')).join(' < ')}`).toEqual([]);
  });

  it('has no folder-level import cycle', () => {
    const next = new Map<string, Set<string>>();
    for (const e of relativeEdges) {
      const a = folderOf(e.from);
      const b = folderOf(e.to);
      if (a === b || b.startsWith('..')) continue;
      if (!next.has(a)) next.set(a, new Set());
      (next.get(a) as Set<string>).add(b);
    }
    const loops = cycles(next.keys(), (n) => next.get(n) ?? []);
    const offending = relativeEdges.filter((e) =>
      loops.some(
        (loop) =>
          loop.includes(folderOf(e.from)) &&
          loop.includes(folderOf(e.to)) &&
          folderOf(e.from) !== folderOf(e.to),
      ),
    );
    expect(show(offending), `folder cycles: ${JSON.stringify(loops)}`).toEqual([]);
  });

  it("imports a backend's folder only from that folder and the registration modules", () => {
    const crossing = relativeEdges.filter((e) => {
      const target = backendOf(e.to);
      if (target === undefined) return false;
      return backendOf(e.from) !== target && !REGISTRATION_MODULES.has(e.from);
    });
    expect(show(crossing)).toEqual([]);
  });

  it('keeps the core free of wires', () => {
    const wired = edges.filter(
      (e) =>
        folderOf(e.from) === 'core' &&
        (e.relative
          ? WIRE_FOLDERS.includes(folderOf(e.to))
          : WIRE_PACKAGES.some((w) => e.to === w || e.to.startsWith(`${w}/`))),
    );
    expect(show(wired)).toEqual([]);
  });

  it('imports nothing of the client package', () => {
    const client = edges.filter(
      (e) => e.to === '@tritonserver-ts/client' || e.to.startsWith('@tritonserver-ts/client/'),
    );
    expect(show(client)).toEqual([]);
  });

  it('has no file-level import cycle', () => {
    const next = new Map<string, string[]>();
    for (const e of relativeEdges) {
      if (!e.typeOnly) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    }
    expect(cycles(next.keys(), (n) => next.get(n) ?? [])).toEqual([]);
  });
});
