/**
 * The import boundaries of eslint.boundaries.js (issue 27) fire where they should: each case lints a
 * small in-memory file placed at a path inside the boundary's area with the repository's own ESLint
 * config and expects that boundary's message (and only the boundary rules' messages it names); the
 * allowed cases next to them expect none. Then the real `src` trees of every package and of the web
 * app lint clean for those rules.
 *
 * Only the boundary rules run (`ruleFilter`) and without type information, so the whole check takes
 * seconds rather than the full lint's minute.
 */
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const BOUNDARY_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax']);

interface Boundary {
  readonly regex: string;
  readonly message: string;
}
interface BoundariesModule {
  readonly BOUNDARIES: Record<string, Boundary>;
  readonly USE_CLIENT_NO_SERVER_MESSAGE: string;
}

let eslint: ESLint;
let boundaries: BoundariesModule;

beforeAll(async () => {
  boundaries = (await import(pathToFileURL(join(repoRoot, 'eslint.boundaries.js')).href)) as BoundariesModule;
  eslint = new ESLint({
    cwd: repoRoot,
    ruleFilter: ({ ruleId }) => BOUNDARY_RULES.has(ruleId),
    overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
  });
});

/** The boundary messages ESLint reports for `code` placed at `filePath` (relative to the repository). */
async function boundaryMessages(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(repoRoot, filePath) });
  if (result === undefined) throw new Error(`no lint result for ${filePath}`);
  const fatal = result.messages.filter((m) => m.fatal === true);
  expect(fatal, `${filePath} parses`).toEqual([]);
  return result.messages
    .filter((m) => m.ruleId !== null && BOUNDARY_RULES.has(m.ruleId))
    .map((m) => m.message);
}

function boundary(key: string): Boundary {
  const found = boundaries.BOUNDARIES[key];
  if (found === undefined) throw new Error(`no boundary ${key} in eslint.boundaries.js`);
  return found;
}

/**
 * One refused import: `specifier` imported from a file at `at` must be reported once, with `key`'s
 * message, or with the server layer message of folder `layer`.
 */
type Refused = { readonly at: string; readonly specifier: string } & (
  { readonly key: string; readonly layer?: never } | { readonly layer: string; readonly key?: never }
);

const refused: Refused[] = [
  // packages/protocol: the bottom layer, one neutral root, two wires that do not know each other.
  {
    at: 'packages/protocol/src/probe.ts',
    specifier: '@tritonserver-ts/client',
    key: 'protocolNotAboveClientServer',
  },
  {
    at: 'packages/protocol/src/http/probe.ts',
    specifier: '@tritonserver-ts/server/testing',
    key: 'protocolNotAboveClientServer',
  },
  {
    at: 'packages/protocol/src/testing/probe.ts',
    specifier: '@tritonserver-ts/client/protocol',
    key: 'protocolNotAboveClientServer',
  },
  { at: 'packages/protocol/src/grpc/probe.ts', specifier: '@grpc/grpc-js', key: 'protocolNoTransport' },
  { at: 'packages/protocol/src/http/probe.ts', specifier: 'undici', key: 'protocolNoTransport' },
  { at: 'packages/protocol/src/probe.ts', specifier: './http/json.js', key: 'protocolRootNoWire' },
  { at: 'packages/protocol/src/probe.ts', specifier: './grpc/index.js', key: 'protocolRootNoWire' },
  {
    at: 'packages/protocol/src/probe.ts',
    specifier: '@tritonserver-ts/protocol/http',
    key: 'protocolRootNoWire',
  },
  { at: 'packages/protocol/src/probe.ts', specifier: 'lossless-json', key: 'protocolRootNoWireLibrary' },
  { at: 'packages/protocol/src/probe.ts', specifier: '@bufbuild/protobuf', key: 'protocolRootNoWireLibrary' },
  { at: 'packages/protocol/src/http/probe.ts', specifier: '../grpc/codec.js', key: 'protocolHttpNoGrpc' },
  { at: 'packages/protocol/src/http/probe.ts', specifier: '@bufbuild/protobuf', key: 'protocolHttpNoGrpc' },
  { at: 'packages/protocol/src/grpc/probe.ts', specifier: '../http/json.js', key: 'protocolGrpcNoHttp' },
  {
    at: 'packages/protocol/src/grpc/gen/probe.ts',
    specifier: '../../http/wire.js',
    key: 'protocolGrpcNoHttp',
  },
  { at: 'packages/protocol/src/grpc/probe.ts', specifier: 'lossless-json', key: 'protocolGrpcNoHttp' },
  // packages/client: no server; the root, ./http and ./protocol entries load no gRPC code.
  { at: 'packages/client/src/probe.ts', specifier: '@tritonserver-ts/server', key: 'clientNoServer' },
  {
    at: 'packages/client/src/grpc/probe.ts',
    specifier: '@tritonserver-ts/server/testing',
    key: 'clientNoServer',
  },
  { at: 'packages/client/src/probe.ts', specifier: './grpc/index.js', key: 'clientHttpNoGrpc' },
  { at: 'packages/client/src/probe.ts', specifier: './protocol/grpc/index.js', key: 'clientHttpNoGrpc' },
  { at: 'packages/client/src/http/probe.ts', specifier: '../grpc/stream.js', key: 'clientHttpNoGrpc' },
  { at: 'packages/client/src/http/probe.ts', specifier: '@grpc/grpc-js', key: 'clientHttpNoGrpc' },
  {
    at: 'packages/client/src/protocol/probe.ts',
    specifier: '@tritonserver-ts/protocol/grpc',
    key: 'clientHttpNoGrpc',
  },
  {
    at: 'packages/client/src/probe.ts',
    specifier: '@tritonserver-ts/protocol/testing',
    key: 'clientHttpNoGrpc',
  },
  { at: 'packages/client/src/probe.ts', specifier: '@bufbuild/protobuf', key: 'clientHttpNoGrpc' },
  // packages/server: no client at run time; a wire-neutral core.
  { at: 'packages/server/src/probe.ts', specifier: '@tritonserver-ts/client', key: 'serverNoClient' },
  {
    at: 'packages/server/src/http/probe.ts',
    specifier: '@tritonserver-ts/client/protocol',
    key: 'serverNoClient',
  },
  { at: 'packages/server/src/core/probe.ts', specifier: '@tritonserver-ts/client', key: 'serverNoClient' },
  {
    at: 'packages/server/src/runtime/onnxruntime/probe.ts',
    specifier: '@tritonserver-ts/client/protocol',
    key: 'serverNoClient',
  },
  { at: 'packages/server/src/core/probe.ts', specifier: '../http/router.js', key: 'coreNoWire' },
  { at: 'packages/server/src/core/probe.ts', specifier: '../grpc/status.js', key: 'coreNoWire' },
  { at: 'packages/server/src/core/probe.ts', specifier: '@tritonserver-ts/protocol/http', key: 'coreNoWire' },
  { at: 'packages/server/src/core/probe.ts', specifier: '@tritonserver-ts/protocol/grpc', key: 'coreNoWire' },
  // packages/server/src folders: lower layers do not import higher ones (ADR 17).
  { at: 'packages/server/src/common/probe.ts', specifier: '../repository/index.js', layer: 'common' },
  { at: 'packages/server/src/repository/probe.ts', specifier: '../runtime/registry.js', layer: 'repository' },
  { at: 'packages/server/src/statistics/probe.ts', specifier: '../scheduler/index.js', layer: 'statistics' },
  { at: 'packages/server/src/runtime/probe.ts', specifier: '../scheduler/index.js', layer: 'runtime' },
  { at: 'packages/server/src/runtime/python/probe.ts', specifier: '../../core/server.js', layer: 'runtime' },
  { at: 'packages/server/src/scheduler/probe.ts', specifier: '../core/server.js', layer: 'scheduler' },
  { at: 'packages/server/src/core/probe.ts', specifier: '../metrics/index.js', layer: 'core' },
  { at: 'packages/server/src/http/probe.ts', specifier: '../process/stop-requests.js', layer: 'http' },
  { at: 'packages/server/src/grpc/handlers/probe.ts', specifier: '../../testing/index.js', layer: 'grpc' },
  { at: 'packages/server/src/core/probe.ts', specifier: '../index.js', key: 'serverRootFiles' },
  {
    at: 'packages/server/src/grpc/handlers/probe.ts',
    specifier: '../../cli-args.js',
    key: 'serverRootFiles',
  },
  // A backend is one folder behind one interface.
  {
    at: 'packages/server/src/scheduler/probe.ts',
    specifier: '../runtime/onnxruntime/worker-instances.js',
    key: 'serverBackendInternals',
  },
  {
    at: 'packages/server/src/core/probe.ts',
    specifier: '../runtime/python/index.js',
    key: 'serverBackendInternals',
  },
  {
    at: 'packages/server/src/http/probe.ts',
    specifier: '../runtime/identity/identity-backend.js',
    key: 'serverBackendInternals',
  },
  {
    at: 'packages/server/src/probe.ts',
    specifier: './runtime/onnxruntime/index.js',
    key: 'serverBackendInternals',
  },
  {
    at: 'packages/server/src/runtime/probe.ts',
    specifier: './onnxruntime/index.js',
    key: 'serverBackendInternals',
  },
  {
    at: 'packages/server/src/runtime/onnxruntime/probe.ts',
    specifier: '../python/index.js',
    key: 'serverOtherBackend',
  },
  // apps/web: works against a real Triton.
  { at: 'apps/web/src/server/probe.ts', specifier: '@tritonserver-ts/server', key: 'webNoEmbeddedServer' },
  {
    at: 'apps/web/src/app/probe/page.tsx',
    specifier: '@tritonserver-ts/server/testing',
    key: 'webNoEmbeddedServer',
  },
];

/** Imports the boundaries leave alone (so a pattern does not catch more than its area). */
const allowed: { at: string; specifier: string }[] = [
  { at: 'packages/protocol/src/probe.ts', specifier: './errors.js' },
  { at: 'packages/protocol/src/http/probe.ts', specifier: 'lossless-json' },
  { at: 'packages/protocol/src/http/probe.ts', specifier: '../errors.js' },
  { at: 'packages/protocol/src/grpc/probe.ts', specifier: '@bufbuild/protobuf' },
  { at: 'packages/protocol/src/testing/probe.ts', specifier: '../grpc/infer-request.js' },
  { at: 'packages/client/src/grpc/probe.ts', specifier: '@grpc/grpc-js' },
  { at: 'packages/client/src/grpc/probe.ts', specifier: '@tritonserver-ts/protocol/grpc' },
  { at: 'packages/client/src/protocol/grpc/probe.ts', specifier: '@tritonserver-ts/protocol/grpc' },
  { at: 'packages/client/src/testing/probe.ts', specifier: '@tritonserver-ts/protocol/testing' },
  { at: 'packages/client/src/http/probe.ts', specifier: 'undici' },
  { at: 'packages/client/src/http/probe.ts', specifier: '@tritonserver-ts/protocol/http' },
  { at: 'packages/server/test/probe.test.ts', specifier: '@tritonserver-ts/client' },
  { at: 'packages/server/src/core/probe.ts', specifier: '@tritonserver-ts/protocol' },
  { at: 'packages/server/src/http/probe.ts', specifier: '@tritonserver-ts/protocol/http' },
  { at: 'packages/server/src/grpc/probe.ts', specifier: '@tritonserver-ts/protocol/grpc' },
  { at: 'packages/server/src/core/probe.ts', specifier: '../scheduler/index.js' },
  { at: 'packages/server/src/core/probe.ts', specifier: '../runtime/index.js' },
  { at: 'packages/server/src/core/probe.ts', specifier: '../common/types.js' },
  { at: 'packages/server/src/core/probe.ts', specifier: './server.js' },
  { at: 'packages/server/src/scheduler/probe.ts', specifier: '../runtime/registry.js' },
  { at: 'packages/server/src/grpc/handlers/probe.ts', specifier: '../status.js' },
  { at: 'packages/server/src/grpc/handlers/probe.ts', specifier: '../../http/memory-budget.js' },
  { at: 'packages/server/src/process/probe.ts', specifier: '../core/server.js' },
  { at: 'packages/server/src/probe.ts', specifier: './runtime/builtin-backends.js' },
  { at: 'packages/server/src/probe.ts', specifier: './core/server.js' },
  { at: 'packages/server/src/runtime/builtin-backends.ts', specifier: './onnxruntime/index.js' },
  { at: 'packages/server/src/runtime/index.ts', specifier: './identity/index.js' },
  { at: 'packages/server/src/runtime/onnxruntime/probe.ts', specifier: '../registry.js' },
  { at: 'packages/server/src/runtime/onnxruntime/probe.ts', specifier: './worker-instances.js' },
  { at: 'packages/server/src/runtime/onnxruntime/probe.ts', specifier: '../../repository/index.js' },
  { at: 'apps/web/test/probe.test.ts', specifier: '@tritonserver-ts/server' },
  { at: 'apps/web/src/server/probe.ts', specifier: '@tritonserver-ts/client' },
];

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function importing(specifier: string): string {
  return `import { probe } from '${specifier}';\nexport const used = probe;\n`;
}

describe('ESLint import boundaries (eslint.boundaries.js)', () => {
  it.each(refused)('$at may not import $specifier ($key$layer)', async ({ at, specifier, key, layer }) => {
    const messages = await boundaryMessages(at, importing(specifier));
    const prefix = `'${specifier}' import is restricted from being used by a pattern. `;
    expect(messages).toEqual([
      key !== undefined
        ? `${prefix}${boundary(key).message}`
        : expect.stringMatching(
            new RegExp(
              `^${escapeRegex(`${prefix}Boundary: packages/server/src is layered`)}.*${escapeRegex(`${layer}/ imports only its own layer and the layers below`)}`,
            ),
          ),
    ]);
  });

  it('re-exports are refused like imports', async () => {
    const messages = await boundaryMessages(
      'packages/protocol/src/probe.ts',
      "export * from './http/index.js';\n",
    );
    expect(messages).toEqual([expect.stringContaining(boundary('protocolRootNoWire').message)]);
  });

  it.each(allowed)('$at may import $specifier', async ({ at, specifier }) => {
    expect(await boundaryMessages(at, importing(specifier))).toEqual([]);
  });

  it("a 'use client' component imports nothing from src/server/", async () => {
    const component = (from: string): string =>
      `'use client';\n\nimport { probe } from '${from}';\nexport { other } from '${from}';\nexport const used = probe;\n`;
    const { USE_CLIENT_NO_SERVER_MESSAGE } = boundaries;
    for (const [at, from] of [
      ['apps/web/src/components/probe.tsx', '@/server/triton'],
      ['apps/web/src/components/probe.tsx', '../server/errors'],
      ['apps/web/src/app/probe/panel.tsx', '../../server/stats'],
    ] as const) {
      expect(await boundaryMessages(at, component(from)), `${at} importing ${from}`).toEqual([
        USE_CLIENT_NO_SERVER_MESSAGE,
        USE_CLIENT_NO_SERVER_MESSAGE,
      ]);
    }
    // A server component may, and a client component may import the shared lib/.
    const serverComponent = "import { probe } from '@/server/gallery';\nexport const used = probe;\n";
    expect(await boundaryMessages('apps/web/src/app/probe/page.tsx', serverComponent)).toEqual([]);
    expect(await boundaryMessages('apps/web/src/components/probe.tsx', component('@/lib/types'))).toEqual([]);
  });

  it('the real source trees keep every boundary', async () => {
    const results = await eslint.lintFiles(['packages/*/src/**', 'apps/web/src/**']);
    expect(results.length).toBeGreaterThan(300);
    const broken = results.flatMap((r) =>
      r.messages.map(
        (m) => `${r.filePath.slice(repoRoot.length)}:${m.line} ${m.ruleId ?? 'fatal'}: ${m.message}`,
      ),
    );
    expect(broken).toEqual([]);
  });
});
