// The public packages as a user gets them: `npm pack` of protocol, client, server, perf and
// onnx-builder (from their built dist), installed into an empty project in a temporary directory
// with `npm ci --offline` (the tarballs, plus third-party packages from the npm cache at this
// repository's locked versions: src/pack-install.ts says why a lockfile), then every README's first
// example run there, the bins run through npx, a real server started from the tarball and measured
// with the tarball's perf-analyzer-ts. Nothing here reads the repository's node_modules at run time:
// the project's processes see only its own node_modules.
//
// The checkout must be built (`npm test` builds first). Examples are extracted from the READMEs, so
// README and test cannot drift; what the test changes in an example is listed next to it
// (substitute() fails when the README no longer holds the text it replaces).
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  PUBLIC_PACKAGE_DIRS,
  codeBlocks,
  lockfileFor,
  pack,
  packageJson,
  substitute,
  toModule,
  typeCheck,
  type PublicPackageDir,
  type Tarball,
} from '../src/pack-install.js';
import { read, repoRoot } from '../src/repo.js';
import { freePort } from './free-port.js';
import { killAllGroups, killGroup, spawnGroup, userEnv, type GroupRun } from './process-group.js';

/** A user's shell, plus what installing the tarballs needs. */
function installEnv(): Record<string, string> {
  // onnxruntime-node's install script fetches CUDA libraries from outside the npm registry on
  // linux-x64; its documented switch skips that (the CPU runtime is in the package).
  return userEnv({ ONNXRUNTIME_NODE_INSTALL: 'skip', NO_UPDATE_NOTIFIER: '1' });
}

/** A command in its own process group, in `cwd`, with a user's environment. */
function start(command: string, args: readonly string[], cwd: string): GroupRun {
  return spawnGroup(command, args, { cwd, env: installEnv() });
}

/** Runs a command to its end; its process group is killed after `timeoutMs`. */
async function runToEnd(
  command: string,
  args: readonly string[],
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number; stdout: string; output: string }> {
  const run = start(command, args, cwd);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>(
    (resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)),
  );
  const result = await Promise.race([run.closed, timedOut]);
  clearTimeout(timer);
  if (result === 'timeout') {
    killGroup(run.child, 'SIGKILL');
    throw new Error(`${command} ${args.join(' ')} did not finish in ${timeoutMs / 1000} s:\n${run.output()}`);
  }
  return { code: result, stdout: run.stdout(), output: run.output() };
}

const tmp = mkdtempSync(join(tmpdir(), 'pack-install-'));
const project = join(tmp, 'project');
const tarballs = new Map<PublicPackageDir, Tarball>();
const timings: Record<string, number> = {};

afterAll(() => {
  killAllGroups();
  rmSync(tmp, { recursive: true, force: true });
  console.log(`pack-install timings (s): ${JSON.stringify(timings)}`);
});

beforeAll(async () => {
  let t = Date.now();
  for (const tarball of await Promise.all(PUBLIC_PACKAGE_DIRS.map((dir) => pack(dir, tmp, userEnv()))))
    tarballs.set(tarball.dir, tarball);
  timings.pack = (Date.now() - t) / 1000;

  t = Date.now();
  mkdirSync(project);
  const { packageJson: manifest, lockfile } = lockfileFor(
    [...tarballs.values()],
    tmp,
    'pack-install-project',
  );
  writeFileSync(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(project, 'package-lock.json'), `${JSON.stringify(lockfile, null, 2)}\n`);
  const install = await runToEnd('npm', ['ci', '--offline', '--no-audit', '--no-fund'], project, 150_000);
  timings.install = (Date.now() - t) / 1000;
  if (install.code !== 0) throw new Error(`npm ci --offline failed (${install.code}):\n${install.output}`);
}, 180_000);

describe('the tarballs', () => {
  it.each(PUBLIC_PACKAGE_DIRS)(
    '%s: publishable metadata, and a public package depends on public ones only',
    (dir) => {
      const pkg = packageJson(dir);
      expect(pkg.private).toBeUndefined();
      expect(pkg.publishConfig?.access).toBe('public');
      expect(pkg.license).toBe('Apache-2.0');
      expect(pkg.engines?.node).toMatch(/^>=20\.19/);
      expect(pkg.repository).toMatchObject({ type: 'git', directory: `packages/${dir}` });
      expect(pkg.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
      expect(pkg.keywords?.length).toBeGreaterThan(2);
      // Every workspace package a public one needs at run time is public too (issue 27: the server
      // needed the private onnx-builder through ./testing, so it failed outside this repository).
      for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies })) {
        const local = PUBLIC_PACKAGE_DIRS.find((d) => packageJson(d).name === dep);
        if (dep.startsWith('@tritonserver-ts/') || dep.startsWith('@gourmetgram/'))
          expect(local, `${pkg.name} depends on ${dep}, which is not a public package`).toBeDefined();
      }
    },
  );

  it.each(PUBLIC_PACKAGE_DIRS)(
    '%s: holds its entries, bins, README and CHANGELOG, no tests, and the sources its maps name',
    (dir) => {
      const tarball = tarballs.get(dir);
      if (tarball === undefined) throw new Error(`${dir} was not packed`);
      const files = new Set(tarball.files);
      for (const required of ['package.json', 'README.md', 'CHANGELOG.md']) expect(files).toContain(required);
      for (const [subpath, target] of Object.entries(tarball.pkg.exports ?? {})) {
        const targets = typeof target === 'string' ? [target] : Object.values(target);
        for (const file of targets) expect(files, `export ${subpath}`).toContain(posix.normalize(file));
      }
      for (const file of Object.values(tarball.pkg.bin ?? {})) expect(files).toContain(posix.normalize(file));
      expect(
        tarball.files.filter((f) => /(^|\/)(test|tests|bench|__tests__)\/|\.test\.|\.spec\./.test(f)),
      ).toEqual([]);
      // Source maps and declaration maps point at src/*.ts, which ship too (stale dist files whose
      // source is gone fail here: a clean build fixes them).
      const missing: string[] = [];
      for (const map of tarball.files.filter((f) => f.endsWith('.map'))) {
        const { sources } = JSON.parse(readFileSync(join(repoRoot, 'packages', dir, map), 'utf8')) as {
          sources: string[];
        };
        for (const source of sources) {
          const path = posix.normalize(posix.join(posix.dirname(map), source));
          if (!files.has(path)) missing.push(`${map} → ${path}`);
        }
      }
      expect(missing).toEqual([]);
    },
  );
});

describe('installed from the tarballs into an empty project', () => {
  it('installs offline; the packages are the tarballs, not links into this repository', () => {
    for (const tarball of tarballs.values()) {
      const installed = join(project, 'node_modules', tarball.pkg.name);
      expect(realpathSync(installed).startsWith(realpathSync(project))).toBe(true);
      const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version: string };
      expect(pkg.version).toBe(tarball.pkg.version);
    }
    for (const bin of ['tritonserver-ts', 'perf-analyzer-ts', 'model-analyzer-ts'])
      expect(existsSync(join(project, 'node_modules/.bin', bin))).toBe(true);
  });

  it('every export of every package loads', async () => {
    const specifiers = [...tarballs.values()].flatMap((t) =>
      Object.keys(t.pkg.exports ?? {})
        .filter((subpath) => subpath !== './package.json')
        .map((subpath) => (subpath === '.' ? t.pkg.name : `${t.pkg.name}/${subpath.slice(2)}`)),
    );
    const script = specifiers.map((s) => `await import(${JSON.stringify(s)});`).join('\n');
    writeFileSync(join(project, 'load-all.mjs'), `${script}\nconsole.log('loaded ${specifiers.length}');\n`);
    const run = await runToEnd('node', ['load-all.mjs'], project, 30_000);
    expect(run.output).toContain(`loaded ${specifiers.length}`);
    expect(run.code).toBe(0);
  });
});

/** The README's `index`-th ts/js example, with the test's substitutions, as a module in the project. */
function writeExample(
  dir: PublicPackageDir,
  index: number,
  pairs: readonly (readonly [string, string])[] = [],
): string {
  const block = codeBlocks(read(`packages/${dir}/README.md`))[index];
  if (block === undefined) throw new Error(`packages/${dir}/README.md has no example ${index + 1}`);
  const code = substitute(block, pairs);
  const name = `example-${dir}-${index + 1}`;
  writeFileSync(join(project, `${name}.ts`), code);
  writeFileSync(join(project, `${name}.mjs`), toModule(code));
  return name;
}

async function runExample(name: string, timeoutMs = 60_000): Promise<string> {
  const run = await runToEnd('node', [`${name}.mjs`], project, timeoutMs);
  expect(run.code, `${name}:\n${run.output}`).toBe(0);
  return run.stdout;
}

describe('the README examples and the bins, from the installed tarballs', () => {
  let server: GroupRun | undefined;
  let httpPort = 0;
  let grpcPort = 0;
  const repository = join(tmp, 'models');
  const examples: string[] = [];

  afterAll(async () => {
    if (server !== undefined) {
      killGroup(server.child, 'SIGINT');
      const timer = setTimeout(() => server !== undefined && killGroup(server.child, 'SIGKILL'), 15_000);
      await server.closed;
      clearTimeout(timer);
    }
  });

  it('protocol: the HTTP and gRPC examples', async () => {
    const http = writeExample('protocol', 0);
    const grpc = writeExample('protocol', 1);
    examples.push(http, grpc);
    expect(await runExample(http)).toMatch(/^r1 \[ 'INPUT0:binary', 'NAME:json' \]$/m);
    expect(await runExample(grpc)).toMatch(/^simple r1 \[ 1n, 4n \] 16$/m);
  });

  it('onnx-builder: the first example builds a model onnxruntime-node loads', async () => {
    const name = writeExample('onnx-builder', 0);
    examples.push(name);
    await runExample(name);
  });

  it('npx tritonserver-ts --help; a model repository from ./testing; a real start is ready', async () => {
    const help = await runToEnd('npx', ['tritonserver-ts', '--help'], project, 30_000);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--model-repository');

    // The repository is written by the installed server's ./testing (and so the packed onnx-builder).
    writeFileSync(
      join(project, 'write-models.mjs'),
      `import { writeTestModelRepository } from '@tritonserver-ts/server/testing';\n` +
        `const r = await writeTestModelRepository(${JSON.stringify(repository)}, { only: ['simple'] });\n` +
        `console.log(r.models.map((m) => m.name).join());\n`,
    );
    const written = await runToEnd('node', ['write-models.mjs'], project, 30_000);
    expect(written.stdout.trim(), written.output).toBe('simple');

    httpPort = await freePort();
    grpcPort = await freePort();
    const metricsPort = await freePort();
    server = start(
      'npx',
      [
        'tritonserver-ts',
        `--model-repository=${repository}`,
        `--http-port=${httpPort}`,
        `--grpc-port=${grpcPort}`,
        `--metrics-port=${metricsPort}`,
      ],
      project,
    );
    const deadline = Date.now() + 60_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = await fetch(`http://127.0.0.1:${httpPort}/v2/health/ready`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status, server.output()).toBe(200);
  }, 120_000);

  it('server: the first example starts and stops a server on the repository', async () => {
    // models_staging is this repository's; the project has the ./testing repository instead.
    const name = writeExample('server', 0, [
      ["modelRepositories: ['models_staging']", `modelRepositories: [${JSON.stringify(repository)}]`],
    ]);
    examples.push(name);
    expect(await runExample(name)).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/m);
  });

  it('client: the first example infers against the server', async () => {
    expect(server).toBeDefined();
    const name = writeExample('client', 0, [["'localhost:8000'", `'localhost:${httpPort}'`]]);
    examples.push(name);
    const out = await runExample(name);
    expect(out).toContain('Int32Array(16) [');
    expect(out).toMatch(/^\[ 1, 16 \]$/m);
  });

  it('perf: the first example measures the server', async () => {
    expect(server).toBeDefined();
    // The README sweeps concurrency 1 to 4 with 1 s windows; two levels with 0.5 s windows keep
    // this test short and run the same code.
    const name = writeExample('perf', 0, [
      ["url: 'localhost:8000'", `url: 'localhost:${httpPort}'`],
      ['end: 4', 'end: 2'],
      ['measurementIntervalMs: 1000', 'measurementIntervalMs: 500'],
    ]);
    examples.push(name);
    const out = await runExample(name, 90_000);
    // A level that does not stabilize in 10 windows ends the sweep, as in perf_analyzer (likely on a
    // busy 2-core host), so only the first level is sure to be there.
    expect(out).toMatch(/^1 [\d.]+ [\d.]+ [\d.]+$/m);
    expect(out).toContain('*** Measurement Settings ***');
    expect(out).toContain('Request concurrency: 1');
  }, 120_000);

  it('npx perf-analyzer-ts --help; a short run over HTTP and over gRPC', async () => {
    const help = await runToEnd('npx', ['perf-analyzer-ts', '--help'], project, 30_000);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('-m <model name>');
    for (const [protocol, port] of [
      ['http', httpPort],
      ['grpc', grpcPort],
    ] as const) {
      const run = await runToEnd(
        'npx',
        [
          'perf-analyzer-ts',
          '-m',
          'simple',
          '-i',
          protocol,
          '-u',
          `localhost:${port}`,
          '--concurrency-range',
          '1',
          '--request-count',
          '50',
        ],
        project,
        60_000,
      );
      expect(run.code, run.output).toBe(0);
      expect(run.stdout).toContain('Concurrency: 1, throughput:');
    }
  }, 150_000);

  it("the examples type-check against the tarballs' declarations", () => {
    expect(examples.length).toBe(6);
    expect(
      typeCheck(
        project,
        examples.map((e) => `${e}.ts`),
      ),
    ).toEqual([]);
  });
});
