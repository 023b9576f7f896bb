#!/usr/bin/env node
// Generates the TypeScript protobuf messages of `@tritonserver-ts/protocol/grpc` from our
// own .proto files (proto/) with protoc and protoc-gen-es, then formats them with the repository's
// Prettier settings so they pass `npm run lint`. Needs `protoc` on PATH (Debian:
// `apt-get install protobuf-compiler`).
//
//   node scripts/generate-proto.mjs [outDir]     (default: src/grpc/gen)
//
// test/grpc-protocol/generated.test.ts runs this into a temporary directory and fails when the
// committed files differ, so run it after every change to proto/.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const protoDir = join(root, 'proto');
const outDir = resolve(process.argv[2] ?? join(root, 'src/grpc/gen'));
const require = createRequire(import.meta.url);
const plugin = join(dirname(require.resolve('@bufbuild/protoc-gen-es/package.json')), 'bin/protoc-gen-es');

const PROTO_FILES = ['grpc_service.proto', 'model_config.proto', 'health.proto'];

mkdirSync(outDir, { recursive: true });
execFileSync(
  'protoc',
  [
    `-I${protoDir}`,
    `--plugin=protoc-gen-es=${plugin}`,
    `--es_out=${outDir}`,
    '--es_opt=target=ts,import_extension=js',
    ...PROTO_FILES.map((f) => join(protoDir, f)),
  ],
  { stdio: 'inherit' },
);

const prettier = await import('prettier');
const options = (await prettier.resolveConfig(join(root, 'src/index.ts'))) ?? {};
for (const name of readdirSync(outDir).filter((f) => f.endsWith('_pb.ts'))) {
  const file = join(outDir, name);
  // protoc-gen-es disables ESLint for the file; the generated code passes the repository's rules, and
  // an unused directive is reported, so it is dropped.
  const source = readFileSync(file, 'utf8').replace(/^\/\* eslint-disable \*\/\n/m, '');
  const formatted = await prettier.format(source, { ...options, filepath: file });
  writeFileSync(file, formatted);
}
