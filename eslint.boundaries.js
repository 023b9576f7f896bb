// Import boundaries between packages and between folders (issue 27), as ESLint's own
// `no-restricted-imports` patterns per files glob: an early warning in the editor and in `npm run lint`.
// The runtime isolation tests and the server's import-graph test stay the authority (they resolve real
// paths; a pattern only sees the import string as written, so relative paths are matched by the folder
// name they climb into: `../http/x.js`, `../../http/x.js`).
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
 *   parts?: { name: string, files: string[], boundaries: Boundary[] }[] }} area
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
    ...parts.map((p) => part(`${name}/${p.name}`, p.files, [], [...common, ...p.boundaries])),
  ];
}

const B = BOUNDARIES;

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
