// Import boundaries between packages and between folders (issue 27), as ESLint's own
// `no-restricted-imports` patterns per files glob: an early warning in the editor and in `npm run lint`.
// The runtime isolation tests and the server's import-graph test (packages/server/test/architecture/)
// stay the authority: they resolve real paths and read dynamic `import()` too, while a pattern sees only
// the import string of a static `import`/`export … from` as written. So relative paths are matched by the
// folder they climb into (`../grpc/x.js`); in packages/server/src, where the folders are layers, each
// depth below src/ gets its own part, so `../` × depth is exactly src/.
//
// ESLint does not merge a rule's options across config objects: for a file matched by two objects that
// both set `no-restricted-imports`, the later one wins. So each area below is cut into parts that do not
// overlap (a part's files; the rest of the area ignores them), and each part lists every boundary that
// applies to it. packages/deploy/test/lint-boundaries.test.ts proves each boundary fires where it should.

/** Any source file ESLint lints. */
const SOURCE = '*.{ts,tsx,mts,cts,js,mjs,cjs}';

/**
 * One boundary: imports whose specifier matches `regex` (case-sensitive) are refused with `message`.
 * @typedef {{ regex: string, message: string }} Boundary
 */

/** @type {Record<string, Boundary>} */
export const BOUNDARIES = {
  protocolNotAboveClientServer: {
    regex: '^@tritonserver-ts/(client|server)(/|$)',
    message:
      'Boundary: @tritonserver-ts/protocol is the bottom layer that the client and the server both depend on; it imports nothing of either.',
  },
  protocolNoTransport: {
    regex: '^(@grpc/grpc-js|undici)(/|$)',
    message:
      'Boundary: @tritonserver-ts/protocol only encodes and decodes messages; transports (@grpc/grpc-js, undici) belong to the client and the server.',
  },
  protocolRootNoWire: {
    regex: '^\\./(http|grpc)(/|$)|^@tritonserver-ts/protocol/(http|grpc)(/|$)',
    message:
      'Boundary: the protocol root (packages/protocol/src/*.ts) is the wire-neutral model; it imports nothing from http/ or grpc/ (wire details stay in their wire folder).',
  },
  protocolRootNoWireLibrary: {
    regex: '^(lossless-json|@bufbuild/)',
    message:
      "Boundary: the protocol root (packages/protocol/src/*.ts) loads no wire library: lossless-json is the HTTP wire's (http/), @bufbuild/* the gRPC wire's (grpc/).",
  },
  protocolHttpNoGrpc: {
    regex: '^(\\.\\./)+grpc(/|$)|^@tritonserver-ts/protocol/grpc(/|$)|^@bufbuild/',
    message:
      'Boundary: the HTTP wire (packages/protocol/src/http/) imports nothing of the gRPC wire (grpc/, @bufbuild/*), so HTTP-only users load no gRPC code; share through the neutral root.',
  },
  protocolGrpcNoHttp: {
    regex: '^(\\.\\./)+http(/|$)|^@tritonserver-ts/protocol/http(/|$)|^lossless-json(/|$)',
    message:
      'Boundary: the gRPC wire (packages/protocol/src/grpc/) imports nothing of the HTTP wire (http/, lossless-json); share through the neutral root.',
  },
  clientNoServer: {
    regex: '^@tritonserver-ts/server(/|$)',
    message:
      'Boundary: the client talks to any Triton server over the wire; it imports nothing of @tritonserver-ts/server (both share @tritonserver-ts/protocol).',
  },
  clientHttpNoGrpc: {
    regex:
      '^\\.{1,2}/(.*/)?grpc(/|$)|^@tritonserver-ts/(protocol|client)/(grpc|testing)(/|$)|^@grpc/|^@bufbuild/',
    message:
      "Boundary: the client's root, ./http and ./protocol entries load no gRPC code (an HTTP-only user never loads grpc-js or protobuf); gRPC code lives in src/grpc/ behind the ./grpc entry.",
  },
  serverNoClient: {
    regex: '^@tritonserver-ts/client(/|$)',
    message:
      'Boundary: the server depends on @tritonserver-ts/protocol, not on the client (the client is a devDependency for tests only, so the server installs without it).',
  },
  coreNoWire: {
    regex: '^(\\.\\./)+(http|grpc)(/|$)|^@tritonserver-ts/protocol/(http|grpc)(/|$)',
    message:
      'Boundary: the server core is wire-neutral: it imports nothing of the HTTP or gRPC front ends (../http/, ../grpc/) nor of the protocol wires (@tritonserver-ts/protocol/http, /grpc); the front ends translate for it.',
  },
  serverBackendInternals: {
    regex: '', // set per part: it depends on the file's depth below src/
    message:
      "Boundary: a backend is one folder behind one interface (packages/server/src/runtime/<backend>/): outside it only the registration modules (runtime/builtin-backends.ts, runtime/index.ts) import its files; everyone else goes through runtime/'s interface.",
  },
  serverOtherBackend: {
    regex: '', // set per part: it depends on the file's depth below src/
    message:
      "Boundary: a backend's folder (packages/server/src/runtime/<backend>/) imports no other backend's folder; share through runtime/'s interface files.",
  },
  serverRootFiles: {
    regex: '', // set per part: it depends on the file's depth below src/
    message:
      "Boundary: the files directly in packages/server/src/ (cli, start, index, ...) are the server's top layer; no folder imports them.",
  },
  webNoEmbeddedServer: {
    regex: '^@tritonserver-ts/server(/|$)',
    message:
      "Boundary: the web app must work against a real Triton server; it reaches Triton through @tritonserver-ts/client and imports nothing of @tritonserver-ts/server (that is npm start's and the tests' business).",
  },
};

/** Message of the `'use client'` rule (a `no-restricted-syntax` selector: a pattern cannot see directives). */
export const USE_CLIENT_NO_SERVER_MESSAGE =
  "Boundary: a 'use client' component runs in the browser; it imports nothing from src/server/ (server-only code, secrets, Node APIs): fetch the API routes instead.";

/**
 * @param {string} name
 * @param {string[]} files
 * @param {string[]} ignores
 * @param {Boundary[]} boundaries
 * @returns {import('eslint').Linter.Config}
 */
function part(name, files, ignores, boundaries) {
  return {
    name: `boundaries/${name}`,
    files,
    ...(ignores.length > 0 ? { ignores } : {}),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: boundaries.map(({ regex, message }) => ({ regex, message, caseSensitive: true })),
        },
      ],
    },
  };
}

/**
 * An area cut into parts that do not overlap: each part gets `common` plus its own boundaries, the
 * rest of the area (the files of no part) gets `common` plus `rest`.
 * @param {{ name: string, files: string[], common: Boundary[], rest?: Boundary[],
 *   parts?: { name: string, files: string[], ignores?: string[], boundaries: Boundary[] }[] }} area
 * @returns {import('eslint').Linter.Config[]}
 */
function area({ name, files, common, rest = [], parts = [] }) {
  return [
    part(
      name,
      files,
      parts.flatMap((p) => p.files),
      [...common, ...rest],
    ),
    ...parts.map((p) => part(`${name}/${p.name}`, p.files, p.ignores ?? [], [...common, ...p.boundaries])),
  ];
}

const B = BOUNDARIES;

/**
 * The server's folders in layers, lowest first (ADR 17; packages/server/test/architecture/import-graph.test.ts
 * reads this list): a folder imports its own layer and the layers below. The files directly in src/ are above
 * them all.
 */
export const SERVER_LAYERS = [
  ['common'],
  ['repository'],
  ['statistics'],
  ['runtime'],
  ['scheduler'],
  ['core'],
  ['http', 'grpc', 'metrics'],
  ['process', 'testing'],
];

/** The modules of runtime/ that may name the backends' folders. */
export const SERVER_REGISTRATION_MODULES = ['runtime/builtin-backends.ts', 'runtime/index.ts'];

/** How deep below a layer folder the folder rules reach (files deeper get only the package rules). */
const SERVER_MAX_DEPTH = 4;

/** `../` written `depth` times, as a regex. */
const up = (depth) => (depth === 0 ? '\\./' : `(\\.\\./){${depth}}`);

/**
 * The server's folder rules, one part per layer folder and depth below it: a file `depth` folders below
 * src/ reaches src/ with exactly `depth` `../`, so a pattern can tell `../http/` (the HTTP front end)
 * from `../x.js` (a root file) and from an import inside its own folder.
 * @returns {{ name: string, files: string[], ignores?: string[], boundaries: Boundary[] }[]}
 */
function serverLayerParts() {
  const src = 'packages/server/src';
  const runtimeLayer = SERVER_LAYERS.findIndex((layer) => layer.includes('runtime'));
  const parts = [
    {
      name: 'root',
      files: [`${src}/${SOURCE}`],
      boundaries: [{ ...B.serverBackendInternals, regex: `^${up(0)}runtime/[^/]+/` }],
    },
  ];
  SERVER_LAYERS.forEach((layer, index) => {
    const higher = SERVER_LAYERS.slice(index + 1).flat();
    for (const folder of layer) {
      // The core's wire imports get the coreNoWire message alone.
      const refused = folder === 'core' ? higher.filter((f) => f !== 'http' && f !== 'grpc') : higher;
      const layerMessage =
        `Boundary: packages/server/src is layered, lowest first: ${SERVER_LAYERS.map((l) => l.join(' | ')).join(' < ')} < the root files. ` +
        `${folder}/ imports only its own layer and the layers below, not ${higher.map((f) => `${f}/`).join(', ')}.`;
      for (let depth = 1; depth <= SERVER_MAX_DEPTH; depth++) {
        const boundaries = [{ ...B.serverRootFiles, regex: `^${up(depth)}[^./][^/]*$` }];
        if (refused.length > 0) {
          boundaries.push({ regex: `^${up(depth)}(${refused.join('|')})(/|$)`, message: layerMessage });
        }
        if (folder === 'core') {
          boundaries.push({
            ...B.coreNoWire,
            regex: `^${up(depth)}(http|grpc)(/|$)|^@tritonserver-ts/protocol/(http|grpc)(/|$)`,
          });
        }
        if (index > runtimeLayer) {
          boundaries.push({ ...B.serverBackendInternals, regex: `^${up(depth)}runtime/[^/]+/` });
        } else if (folder === 'runtime' && depth === 1) {
          boundaries.push({ ...B.serverBackendInternals, regex: '^\\./[^/]+/' });
        } else if (folder === 'runtime') {
          boundaries.push({ ...B.serverOtherBackend, regex: `^${up(depth - 1)}[^./][^/]*/` });
        }
        const files = [`${src}/${folder}/${'*/'.repeat(depth - 1)}${SOURCE}`];
        if (folder === 'runtime' && depth === 1) {
          const registration = SERVER_REGISTRATION_MODULES.map((m) => `${src}/${m}`);
          parts.push({ name: `${folder}/${depth}`, files, ignores: registration, boundaries });
          parts.push({
            name: 'runtime/registration',
            files: registration,
            boundaries: boundaries.filter((b) => b.message !== B.serverBackendInternals.message),
          });
        } else {
          parts.push({ name: `${folder}/${depth}`, files, boundaries });
        }
      }
    }
  });
  return parts;
}

/** The flat-config objects of every boundary; spread them into eslint.config.js after the shared rules. */
export const boundaryConfigs = [
  ...area({
    name: 'protocol',
    files: ['packages/protocol/src/**'],
    common: [B.protocolNotAboveClientServer, B.protocolNoTransport],
    parts: [
      {
        name: 'root',
        files: [`packages/protocol/src/${SOURCE}`],
        boundaries: [B.protocolRootNoWire, B.protocolRootNoWireLibrary],
      },
      { name: 'http', files: ['packages/protocol/src/http/**'], boundaries: [B.protocolHttpNoGrpc] },
      { name: 'grpc', files: ['packages/protocol/src/grpc/**'], boundaries: [B.protocolGrpcNoHttp] },
    ],
  }),
  ...area({
    name: 'client',
    files: ['packages/client/src/**'],
    common: [B.clientNoServer],
    rest: [B.clientHttpNoGrpc],
    parts: [
      {
        // The ./grpc, ./protocol/grpc and ./testing entries may load gRPC code.
        name: 'grpc-entries',
        files: [
          'packages/client/src/grpc/**',
          'packages/client/src/protocol/grpc/**',
          'packages/client/src/testing/**',
        ],
        boundaries: [],
      },
    ],
  }),
  ...area({
    name: 'server',
    files: ['packages/server/src/**'],
    common: [B.serverNoClient],
    parts: serverLayerParts(),
  }),
  ...area({ name: 'web', files: ['apps/web/src/**'], common: [B.webNoEmbeddedServer] }),
  {
    name: 'boundaries/web-use-client',
    files: ['apps/web/src/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['ImportDeclaration', 'ExportNamedDeclaration', 'ExportAllDeclaration', 'ImportExpression'].map(
          (node) => ({
            selector: `Program:has(> ExpressionStatement[directive='use client']) ${node}[source.value=/^(@\\u002F|(\\.\\.\\u002F)+)server(\\u002F|$)/]`,
            message: USE_CLIENT_NO_SERVER_MESSAGE,
          }),
        ),
      ],
    },
  },
];
