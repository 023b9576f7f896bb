/**
 * ADR 0008: HTTP-only users load no gRPC code (ADR 0016: the protocol package's entries too). Imports each entry point of the built package in a
 * fresh Node process and records which protobuf / gRPC modules get resolved.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

// A resolve hook that prints every @bufbuild / @grpc specifier it sees, registered with
// module.register() from an --import module (Node 20.6+; `--loader` is deprecated on Node 22 and 24).
// The hook runs on the loader thread: it writes to fd 1 synchronously, because a console.log there
// is forwarded to the main thread, and on Node 24 a line was lost when the process exited first.
const hook = `data:text/javascript,${encodeURIComponent(
  "import { writeSync } from 'node:fs'; export async function resolve(s, c, next) { if (/@bufbuild|@grpc/.test(s)) writeSync(1, 'LOAD ' + s + '\\n'); return next(s, c); }",
)}`;
const registerHook = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module'; register(${JSON.stringify(hook)});`,
)}`;

function loadedBy(entry: string): string[] {
  const out = execFileSync(
    process.execPath,
    ['--no-warnings', '--import', registerHook, '--input-type=module', '-e', `await import('${entry}')`],
    { cwd: root },
  ).toString('utf8');
  return [
    ...new Set(
      out
        .split('\n')
        .filter((l) => l.startsWith('LOAD '))
        .map((l) => l.slice(5)),
    ),
  ].sort();
}

it("the root, ./http and ./protocol entry points (and the protocol package's root and ./http) load neither the protobuf runtime nor grpc-js", () => {
  for (const entry of [
    '@tritonserver-ts/client',
    '@tritonserver-ts/client/http',
    '@tritonserver-ts/client/protocol',
    '@tritonserver-ts/protocol',
    '@tritonserver-ts/protocol/http',
  ]) {
    expect(loadedBy(entry), entry).toEqual([]);
  }
});

it("./protocol/grpc (the protocol package's ./grpc) loads the protobuf runtime only; ./grpc adds grpc-js", () => {
  for (const entry of ['@tritonserver-ts/client/protocol/grpc', '@tritonserver-ts/protocol/grpc']) {
    expect(loadedBy(entry), entry).toEqual(['@bufbuild/protobuf', '@bufbuild/protobuf/codegenv2']);
  }
  expect(loadedBy('@tritonserver-ts/client/grpc')).toContain('@grpc/grpc-js');
});
