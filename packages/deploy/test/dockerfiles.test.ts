// docker/Dockerfile.{triton,web,server}: read without a Docker engine and checked against the
// repository they build from.
import { readdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { SERVER_VERSION, TRITON_NGC_RELEASE } from '@tritonserver-ts/server';
import { describe, expect, it } from 'vitest';
import {
  baseImage,
  commandOf,
  copyPaths,
  exposedPorts,
  instructions,
  last,
  lastInherited,
  parentStage,
  parseDockerfile,
  resolvePath,
  resolvedImage,
  shellCommands,
  stageChain,
  stageEnv,
  workdirAt,
  type Dockerfile,
  type Instruction,
  type Stage,
} from '../src/dockerfile.js';
import { isIncluded, parseDockerignore } from '../src/dockerignore.js';
import { exists, read, repoRoot, trackedFiles } from '../src/repo.js';

const load = (name: string): Dockerfile => parseDockerfile(read(`docker/${name}`));
const finalStage = (file: Dockerfile): Stage => {
  const stage = file.stages.at(-1);
  if (!stage) throw new Error('no stages');
  return stage;
};
const stageNamed = (file: Dockerfile, name: string): Stage => {
  const stage = file.stages.find((s) => s.name === name);
  if (!stage) throw new Error(`no stage ${name}`);
  return stage;
};
const runText = (stage: Stage): string =>
  instructions(stage, 'RUN')
    .map((i) => i.args)
    .join('\n');

/** Every COPY without --from takes its sources from the build context (the repository root). */
function contextSources(file: Dockerfile): string[] {
  return file.stages.flatMap((stage) =>
    instructions(stage, 'COPY')
      .filter((i) => i.flags.from === undefined)
      .flatMap((i) => copyPaths(i.args).sources),
  );
}

/** The simple commands of every RUN of a stage, with the RUN they belong to. */
function runCommands(stage: Stage): { run: Instruction; argv: string[] }[] {
  return instructions(stage, 'RUN').flatMap((run) => shellCommands(run.args).map((argv) => ({ run, argv })));
}

/** The values of `-w X`, `--workspace X`, `--workspace=X` (and `-w=X`) in an npm command line. */
function workspaceFlags(argv: string[]): string[] {
  const out: string[] = [];
  argv.forEach((arg, i) => {
    const inline = /^(?:-w|--workspace)=(.+)$/.exec(arg);
    if (inline) out.push(inline[1] ?? '');
    else if ((arg === '-w' || arg === '--workspace') && argv[i + 1] !== undefined)
      out.push(argv[i + 1] ?? '');
  });
  return out;
}

interface Workspace {
  dir: string;
  scripts: Record<string, string>;
  dependencies: string[];
}

/** The repository's npm workspaces (root package.json globs `dir/*`) by package name. */
function workspacePackages(): Map<string, Workspace> {
  const root = JSON.parse(read('package.json')) as { workspaces?: string[] };
  const out = new Map<string, Workspace>();
  for (const glob of root.workspaces ?? []) {
    const parent = glob.replace(/\/\*$/, '');
    for (const name of readdirSync(join(repoRoot, parent))) {
      const dir = `${parent}/${name}`;
      if (!exists(`${dir}/package.json`)) continue;
      const pkg = JSON.parse(read(`${dir}/package.json`)) as {
        name: string;
        scripts?: Record<string, string>;
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      out.set(pkg.name, {
        dir,
        scripts: pkg.scripts ?? {},
        dependencies: [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})],
      });
    }
  }
  return out;
}

/** A workspace and every workspace it depends on, directly or not. */
function withWorkspaceDependencies(name: string, all: Map<string, Workspace>): string[] {
  const seen = new Set<string>();
  const visit = (n: string): void => {
    if (seen.has(n) || !all.has(n)) return;
    seen.add(n);
    for (const dep of all.get(n)?.dependencies ?? []) visit(dep);
  };
  visit(name);
  return [...seen];
}

/**
 * Where a COPY from the build context puts a repository path (absolute, in the image), or undefined
 * when no COPY of the stage before `until` sends it. Docker copies a directory's contents, and a file
 * into a destination ending in `/` (or given with other sources) under its own name.
 */
function copiedTo(file: Dockerfile, stage: Stage, path: string, until?: Instruction): string | undefined {
  let landed: string | undefined;
  for (const copy of instructions(stage, 'COPY')) {
    if (until !== undefined && copy.line >= until.line) break;
    if (copy.flags.from !== undefined) continue;
    const { sources, destination } = copyPaths(copy.args);
    const dest = resolvePath(workdirAt(file, stage, copy), destination);
    if (dest === undefined) continue;
    for (const source of sources.map((x) => x.replace(/^\.\//, '').replace(/\/$/, ''))) {
      if (path !== source && !path.startsWith(`${source}/`)) continue;
      const intoDir =
        !statSync(join(repoRoot, source)).isDirectory() && (destination.endsWith('/') || sources.length > 1);
      landed = posix.join(
        intoDir ? posix.join(dest, posix.basename(source)) : dest,
        path.slice(source.length),
      );
    }
  }
  return landed;
}

function isRootUser(user: string | undefined): boolean {
  if (user === undefined) return true;
  const name = user.split(':')[0] ?? '';
  return name === 'root' || name === '0';
}

describe('the Dockerfile parser', () => {
  it('reads stages, flags, continuation lines, exec and shell forms', () => {
    const file = parseDockerfile(
      [
        'ARG X=1',
        'FROM node:20 AS build',
        '# comment',
        'RUN a \\',
        '    # inside',
        '    && b',
        'ENV A=1 B="two words"',
        'FROM build AS final',
        'COPY --from=build --chown=node:node /a /b ./c/',
        'HEALTHCHECK --interval=5s CMD curl -f http://x/',
        'CMD ["node", "server.js"]',
      ].join('\n'),
    );
    expect(file.stages.map((s) => [s.image, s.name])).toEqual([
      ['node:20', 'build'],
      ['build', 'final'],
    ]);
    expect(file.globalArgs).toEqual({ X: '1' });
    const build = stageNamed(file, 'build');
    expect(instructions(build, 'RUN')[0]?.args).toBe('a && b');
    const final = finalStage(file);
    expect(stageEnv(file, final)).toEqual({ A: '1', B: 'two words' });
    const copy = instructions(final, 'COPY')[0];
    expect(copy?.flags).toEqual({ from: 'build', chown: 'node:node' });
    expect(copyPaths(copy?.args ?? '')).toEqual({ sources: ['/a', '/b'], destination: './c/' });
    expect(last(final, 'HEALTHCHECK')?.flags.interval).toBe('5s');
    expect(commandOf(last(final, 'CMD')?.args ?? '')).toEqual(['node', 'server.js']);
    expect(commandOf('echo hi')).toEqual(['/bin/sh', '-c', 'echo hi']);
  });

  it('follows WORKDIR (absolute, relative, inherited) and splits RUN into simple commands', () => {
    const file = parseDockerfile(
      [
        'FROM node:20 AS build',
        'COPY a ./',
        'WORKDIR /app',
        'WORKDIR sub',
        'RUN npm ci --workspace=x && test -s "out/m.onnx" \\',
        "    && (echo 'a && b' || true); chmod -R a-w out 2>&1 | cat",
        'FROM build AS next',
        'COPY --from=build /app/sub/out /models',
        'FROM ubuntu AS other',
      ].join('\n'),
    );
    const [build, next, other] = file.stages as [Stage, Stage, Stage];
    expect(workdirAt(file, build, build.instructions[0])).toBeUndefined();
    expect(workdirAt(file, build)).toBe('/app/sub');
    expect(workdirAt(file, next)).toBe('/app/sub');
    expect(parentStage(file, next)).toBe(build);
    expect(parentStage(file, other)).toBeUndefined();
    expect(stageChain(file, next)).toEqual([next, build]);
    expect(baseImage(file, next)).toBe('node:20');
    expect(lastInherited(file, next, 'RUN')).toBe(instructions(build, 'RUN')[0]);
    expect(workdirAt(file, other)).toBeUndefined();
    expect(resolvePath('/app/sub', 'out/')).toBe('/app/sub/out');
    expect(resolvePath('/app', '/models/')).toBe('/models');
    expect(resolvePath(undefined, 'x')).toBeUndefined();
    expect(shellCommands(instructions(build, 'RUN')[0]?.args ?? '')).toEqual([
      ['npm', 'ci', '--workspace=x'],
      ['test', '-s', 'out/m.onnx'],
      ['echo', 'a && b'],
      ['true'],
      ['chmod', '-R', 'a-w', 'out', '2>&1'],
      ['cat'],
    ]);
  });

  it('expands the ARGs declared before the first FROM in a FROM, from --build-arg or the default', () => {
    const file = parseDockerfile(
      [
        'ARG TAG=1.0',
        'ARG BASE="img"',
        'ARG NONE',
        'FROM ${BASE}:$TAG AS a',
        'FROM x:${NONE}',
        'FROM y:${NOPE}',
      ].join('\n'),
    );
    expect(file.globalArgs).toEqual({ TAG: '1.0', BASE: 'img', NONE: undefined });
    const [a, none, nope] = file.stages as [Stage, Stage, Stage];
    expect(a.image).toBe('${BASE}:$TAG');
    expect(resolvedImage(file, a)).toBe('img:1.0');
    expect(resolvedImage(file, a, { TAG: '2.0' })).toBe('img:2.0');
    expect(() => resolvedImage(file, none)).toThrow(/ARG NONE has no default/);
    expect(resolvedImage(file, none, { NONE: 'z' })).toBe('x:z');
    expect(() => resolvedImage(file, nope)).toThrow(/ARG NOPE is not declared before FROM/);
  });

  it('applies .dockerignore rules in order, with re-includes and directory matches', () => {
    const rules = parseDockerignore('*\n!models_staging\n**/node_modules\n');
    expect(isIncluded(rules, 'models_staging/food_classifier/config.pbtxt')).toBe(true);
    expect(isIncluded(rules, 'packages/server/package.json')).toBe(false);
    expect(isIncluded(rules, 'models_staging/x/node_modules/y')).toBe(false);
  });
});

describe('docker/Dockerfile.triton', () => {
  const file = load('Dockerfile.triton');
  const triton = stageNamed(file, 'triton');

  it('takes the Triton release from one build argument, TRITON_RELEASE, defaulting to the release the embedded server follows', () => {
    // The embedded server reports Triton 2.73.0, the server of NGC release 26.09: the image defaults to it.
    expect([SERVER_VERSION, TRITON_NGC_RELEASE]).toEqual(['2.73.0', '26.09']);
    expect(file.globalArgs).toEqual({ TRITON_RELEASE: `${TRITON_NGC_RELEASE}-py3` });
    expect(triton.image).toBe('nvcr.io/nvidia/tritonserver:${TRITON_RELEASE}');
    expect(resolvedImage(file, triton)).toBe('nvcr.io/nvidia/tritonserver:26.09-py3');
    // The older labs' release, for hosts whose NVIDIA driver is too old for 26.09.
    expect(resolvedImage(file, triton, { TRITON_RELEASE: '24.10-py3' })).toBe(
      'nvcr.io/nvidia/tritonserver:24.10-py3',
    );
    // No stage names a Triton release of its own.
    const tritonStages = file.stages.filter((s) => s.image.includes('tritonserver'));
    expect(tritonStages).toEqual([triton]);
  });

  it('documents the release choice where it is made: the default, 24.10-py3 for older drivers, and each driver', () => {
    const text = read('docker/Dockerfile.triton');
    expect(text).toContain('--build-arg TRITON_RELEASE=24.10-py3');
    expect(text).toMatch(/26\.09[\s\S]*R580/);
    expect(text).toMatch(/24\.10: CUDA 12\.6, driver 560\+/);
    const readme = read('docker/README.md');
    for (const fact of ['TRITON_RELEASE', '26.09-py3', '24.10-py3', 'R580', '560'])
      expect(readme).toContain(fact);
  });

  it('installs every third-party module a model.py imports that the image lacks', () => {
    const modelPy = trackedFiles('models_staging')
      .filter((f) => f.endsWith('/model.py'))
      .map((f) => read(f))
      .join('\n');
    expect(modelPy).toContain('class TritonPythonModel');
    const imported = new Set(
      [...modelPy.matchAll(/^\s*(?:import\s+(\w+)|from\s+(\w+)[\w.]*\s+import\s)/gm)].map(
        (m) => m[1] ?? m[2] ?? '',
      ),
    );
    // What model.py needs beyond the standard library and what the Triton image provides.
    const pipName: Record<string, string> = { PIL: 'pillow' };
    const providedByImage = new Set(['numpy', 'triton_python_backend_utils']);
    const stdlib = new Set([
      'base64',
      'binascii',
      'concurrent',
      'io',
      'json',
      'math',
      'os',
      're',
      'string',
      'threading',
      'time',
    ]);
    const installs = runText(triton);
    for (const module of imported) {
      if (stdlib.has(module) || providedByImage.has(module)) continue;
      const name = pipName[module];
      expect(name, `model.py imports ${module}; map it to a pip package here`).toBeDefined();
      expect(installs).toMatch(new RegExp(`pip install[^\\n]*"?${name}[=>"\\s]`));
    }
    expect(installs).toMatch(/import numpy, PIL\b/);
  });

  it('installs no Python inference runtime: model.py calls food_classifier_onnx by BLS', () => {
    const modelPy = read('models_staging/food_classifier/1/model.py');
    expect(modelPy).toMatch(/pb_utils\.InferenceRequest\(/);
    expect(modelPy).not.toMatch(/^\s*(import|from)\s+onnxruntime/m);
    expect(runText(triton)).not.toMatch(/onnxruntime/);
  });

  it("exposes Triton's three ports and checks /v2/health/ready", () => {
    expect(exposedPorts(triton).sort()).toEqual([8000, 8001, 8002]);
    const health = last(triton, 'HEALTHCHECK')?.args ?? '';
    expect(health).toContain('http://localhost:8000/v2/health/ready');
  });

  it('serves /models; the triton-with-models stage builds on it and adds the model repository', () => {
    const command = commandOf(last(triton, 'CMD')?.args ?? '[]');
    expect(command[0]).toBe('tritonserver');
    expect(command).toContain('--model-repository=/models');
    const withModels = stageNamed(file, 'triton-with-models');
    expect(withModels.image).toBe('triton');
    // The model-free stage takes nothing from the model build, so it needs no model at all.
    expect(instructions(triton, 'COPY')).toEqual([]);
  });
});

// The model repository is built inside the image build (issue 13): a host needs only Docker.
const modelBuilds = [
  { dockerfile: 'Dockerfile.triton', stage: 'model-build', serving: 'triton-with-models' },
  { dockerfile: 'Dockerfile.server', stage: 'build', serving: 'runtime' },
] as const;
const MODEL_BUILDER = '@gourmetgram/food-model';
const BUILT_MODEL = 'models_staging/food_classifier_onnx/1/model.onnx';

for (const { dockerfile, stage: stageName, serving } of modelBuilds) {
  describe(`docker/${dockerfile}: the ${stageName} stage builds the model repository`, () => {
    const file = load(dockerfile);
    const stage = stageNamed(file, stageName);
    const workdir = workdirAt(file, stage) ?? '(base image WORKDIR)';
    const commands = runCommands(stage);
    const all = workspacePackages();
    const needed = withWorkspaceDependencies(MODEL_BUILDER, all);
    const modelBuild = commands.find(
      ({ argv }) => argv[0] === 'npm' && argv[1] === 'run' && argv[2] === 'model:build',
    );

    it('starts from node on Debian bookworm, of the major version package.json asks for', () => {
      const match = /^node:(\d+)-bookworm(?:-slim)?$/.exec(stage.image);
      expect(match, stage.image).not.toBeNull();
      const engines = (JSON.parse(read('package.json')) as { engines?: { node?: string } }).engines?.node;
      expect(engines).toMatch(/^>=\d+/);
      expect(match?.[1]).toBe(/^>=(\d+)/.exec(engines ?? '')?.[1]);
      expect(workdir).toMatch(/^\//);
    });

    it("runs npm ci on the root manifests, with .npmrc's skip of onnxruntime-node's GPU download", () => {
      const ci = commands.find(({ argv }) => argv[0] === 'npm' && argv[1] === 'ci');
      expect(ci, 'no npm ci').toBeDefined();
      for (const manifest of [
        'package.json',
        'package-lock.json',
        '.npmrc',
        'turbo.json',
        'tsconfig.base.json',
      ]) {
        expect(copiedTo(file, stage, manifest, ci?.run), manifest).toBe(posix.join(workdir, manifest));
      }
      expect(read('.npmrc')).toMatch(/^onnxruntime-node-install=skip$/m);
      // Installing only some workspaces needs the root's own devDependencies (turbo, typescript, tsx).
      const only = workspaceFlags(ci?.argv ?? []);
      if (only.length > 0) expect(ci?.argv).toContain('--include-workspace-root');
      for (const name of only) expect(all.has(name), `${name} is not a workspace`).toBe(true);
    });

    it(`installs and copies ${MODEL_BUILDER} and every workspace it depends on`, () => {
      const ci = commands.find(({ argv }) => argv[0] === 'npm' && argv[1] === 'ci');
      const only = workspaceFlags(ci?.argv ?? []);
      expect(needed.length).toBeGreaterThan(1);
      for (const name of needed) {
        const dir = all.get(name)?.dir ?? '?';
        if (only.length > 0) expect(only, `npm ci does not install ${name}`).toContain(name);
        expect(
          copiedTo(file, stage, `${dir}/package.json`, ci?.run),
          `${dir}/package.json before npm ci`,
        ).toBe(posix.join(workdir, dir, 'package.json'));
        for (const source of trackedFiles(`${dir}/src`)) {
          expect(copiedTo(file, stage, source, modelBuild?.run), source).toBe(posix.join(workdir, source));
        }
      }
    });

    it('builds the workspaces the model builder imports (it runs from source) before running it', () => {
      const builds = commands.filter(
        ({ argv }) => argv[0] === 'npx' && argv[1] === 'turbo' && argv[2] === 'run',
      );
      const filters = builds.flatMap(({ argv }) =>
        argv.filter((a) => a.startsWith('--filter=')).map((a) => a.slice('--filter='.length)),
      );
      for (const filter of filters) {
        const name = filter.replace(/^\.\.\.\^?/, '').replace(/\^?\.\.\.$/, '');
        expect(all.has(name), `turbo --filter=${filter}: no workspace ${name}`).toBe(true);
      }
      expect(
        filters.some((f) => f === `${MODEL_BUILDER}^...` || f === `${MODEL_BUILDER}...`),
        filters.join(' '),
      ).toBe(true);
      expect(builds.every(({ run }) => run.line < (modelBuild?.run.line ?? 0))).toBe(true);
      expect(stageEnv(file, stage).TURBO_TELEMETRY_DISABLED).toBe('1');
    });

    it(`runs ${MODEL_BUILDER}'s model:build on the copied model repository, checks the model, then makes it read-only`, () => {
      expect(modelBuild, 'no npm run model:build').toBeDefined();
      expect(workspaceFlags(modelBuild?.argv ?? [])).toEqual([MODEL_BUILDER]);
      expect(all.get(MODEL_BUILDER)?.scripts['model:build']).toMatch(/\bbuild\b/);
      // config.pbtxt's preprocess_* parameters are read by the build; the rest goes into the image.
      for (const source of trackedFiles('models_staging')) {
        expect(copiedTo(file, stage, source, modelBuild?.run), source).toBe(posix.join(workdir, source));
      }
      // The built model is not in git, so a clone has none: the image must build it.
      expect(trackedFiles(BUILT_MODEL)).toEqual([]);
      const after = commands.filter(({ run }) => run.line >= (modelBuild?.run.line ?? Infinity));
      const check = after.find(({ argv }) => argv[0] === 'test' && argv[1] === '-s');
      expect(resolvePath(workdir, check?.argv[2] ?? '?')).toBe(posix.join(workdir, BUILT_MODEL));
      const readOnly = after.find(({ argv }) => argv[0] === 'chmod' && argv.includes('a-w'));
      expect(readOnly?.argv).toContain('-R');
      expect(resolvePath(workdir, readOnly?.argv.at(-1) ?? '?')).toBe(posix.join(workdir, 'models_staging'));
      // The model is built from devDependencies (nsfwjs, the photos): any prune comes after it.
      for (const prune of commands.filter(({ argv }) => argv[0] === 'npm' && argv[1] === 'prune')) {
        expect(commands.indexOf(prune)).toBeGreaterThan(
          commands.indexOf(modelBuild as (typeof commands)[number]),
        );
      }
    });

    it('downloads nothing but npm packages', () => {
      const fetchers = /^(?:curl|wget|git|apt-get|apt|pip|pip3|python3?)$/;
      for (const { argv } of commands) expect(argv[0] ?? '', argv.join(' ')).not.toMatch(fetchers);
      for (const { argv } of commands.filter(({ argv }) => argv[0] === 'npx')) expect(argv[1]).toBe('turbo');
      for (const add of instructions(stage, 'ADD')) expect(add.args).not.toMatch(/https?:\/\/|git@/);
    });

    it(`is what the ${serving} stage serves at its --model-repository, with a licence label`, () => {
      const target = stageNamed(file, serving);
      const command = commandOf(lastInherited(file, target, 'CMD')?.args ?? '[]');
      const repository = command
        .find((a) => a.startsWith('--model-repository='))
        ?.slice('--model-repository='.length);
      expect(repository).toBe('/models');
      const copies = instructions(target, 'COPY')
        .filter((i) => i.flags.from === stageName)
        .map((i) => copyPaths(i.args));
      expect(copies).toContainEqual({
        sources: [posix.join(workdir, 'models_staging')],
        destination: repository,
      });
      const label = instructions(target, 'LABEL')
        .map((i) => i.args)
        .find((l) => l.includes('model-licence'));
      expect(label).toMatch(/AGPL-3\.0/);
      const note = /[\w./-]+\.md/.exec(label ?? '')?.[0] ?? 'missing.md';
      expect(exists(note), note).toBe(true);
      expect(read(note)).toContain('AGPL-3.0');
    });
  });
}

describe('npm scripts in the Dockerfiles', () => {
  it('every `npm run` of a RUN names a script of the workspace it names', () => {
    const all = workspacePackages();
    const rootScripts =
      (JSON.parse(read('package.json')) as { scripts?: Record<string, string> }).scripts ?? {};
    let seen = 0;
    for (const name of ['Dockerfile.triton', 'Dockerfile.web', 'Dockerfile.server']) {
      for (const stage of load(name).stages) {
        for (const { argv } of runCommands(stage).filter(
          ({ argv }) => argv[0] === 'npm' && argv[1] === 'run',
        )) {
          const script = argv[2] ?? '';
          const named = workspaceFlags(argv);
          seen++;
          if (named.length === 0) expect(rootScripts[script], `${name}: npm run ${script}`).toBeDefined();
          for (const ws of named)
            expect(all.get(ws)?.scripts[script], `${name}: ${argv.join(' ')}`).toBeDefined();
        }
      }
    }
    expect(seen).toBeGreaterThanOrEqual(2);
  });
});

describe('docker/Dockerfile.web', () => {
  const file = load('Dockerfile.web');
  const runtime = finalStage(file);

  it('is multi-stage: npm ci, then the Next.js build, then a slim runtime', () => {
    expect(file.stages.length).toBeGreaterThanOrEqual(3);
    expect(runText(file.stages[0] as Stage)).toMatch(/\bnpm ci\b/);
    expect(file.stages.map(runText).join('\n')).toMatch(/turbo run build --filter=@gourmetgram\/web/);
    expect(instructions(runtime, 'RUN').map((i) => i.args)).not.toContainEqual(
      expect.stringMatching(/npm ci/),
    );
  });

  it('copies the standalone server, its static assets, and public/ when the app has one', () => {
    expect(read('apps/web/next.config.ts')).toMatch(/output:\s*'standalone'/);
    const copies = instructions(runtime, 'COPY').map((i) => ({ from: i.flags.from, ...copyPaths(i.args) }));
    const sources = copies.map((c) => c.sources[0]);
    expect(sources).toContain('/app/apps/web/.next/standalone');
    expect(sources).toContain('/app/apps/web/.next/static');
    const hasPublic = trackedFiles('apps/web/public').length > 0;
    expect(sources.includes('/app/apps/web/public')).toBe(hasPublic);
    const command = commandOf(last(runtime, 'CMD')?.args ?? '[]');
    expect(command).toEqual(['node', 'apps/web/server.js']);
  });

  it('runs as a non-root user on the port it exposes, with a health check on that port', () => {
    expect(isRootUser(last(runtime, 'USER')?.args)).toBe(false);
    const port = Number(stageEnv(file, runtime).PORT);
    expect(exposedPorts(runtime)).toEqual([port]);
    expect(last(runtime, 'HEALTHCHECK')?.args).toContain(`http://127.0.0.1:${port}/api/`);
  });
});

describe('docker/Dockerfile.server (embedded server for CPU-only hosts)', () => {
  const file = load('Dockerfile.server');
  const runtime = finalStage(file);

  it('runs the tritonserver-ts bin of @tritonserver-ts/server on /models', () => {
    const pkg = JSON.parse(read('packages/server/package.json')) as { bin?: Record<string, string> };
    const bin = pkg.bin?.['tritonserver-ts'];
    // The bin is a committed launcher (so npm links it right after `npm ci`) that runs dist/cli.js,
    // the file the image runs directly.
    expect(bin).toBe('./bin/tritonserver-ts.js');
    expect(read('packages/server/bin/tritonserver-ts.js')).toContain(
      "new URL('../dist/cli.js', import.meta.url)",
    );
    const command = commandOf(last(runtime, 'CMD')?.args ?? '[]');
    expect(command).toEqual(['node', 'packages/server/dist/cli.js', '--model-repository=/models']);
    const copied = instructions(runtime, 'COPY').map((i) => copyPaths(i.args).sources[0]);
    expect(copied).toContain('/app/packages/server/dist');
  });

  it('copies every entry of the server package.json "files" (dist, the Python stub in python/, …)', () => {
    const pkg = JSON.parse(read('packages/server/package.json')) as { files?: string[] };
    const files = pkg.files ?? [];
    // python/ holds the stub script the Python backend runs: without it no Python model loads.
    expect(files).toContain('python');
    expect(files).toContain('dist');
    const copies = instructions(runtime, 'COPY').map((i) => ({ from: i.flags.from, ...copyPaths(i.args) }));
    for (const entry of files) {
      const name = entry.replace(/^\.\//, '').replace(/\/$/, '');
      const copy = copies.find((c) => c.sources[0] === `/app/packages/server/${name}`);
      expect(
        copy,
        `packages/server/${name} (package.json "files") is not copied to the runtime stage`,
      ).toBeDefined();
      expect(copy?.from).toBe('build');
      expect(copy?.destination.replace(/\/$/, '')).toBe(`./packages/server/${name}`);
    }
  });

  it('copies every workspace package the server depends on', () => {
    const copied = instructions(runtime, 'COPY').map((i) => copyPaths(i.args).sources[0]);
    const pkg = JSON.parse(read('packages/server/package.json')) as { dependencies?: Record<string, string> };
    const workspaceDeps: Record<string, string> = {
      '@tritonserver-ts/protocol': 'protocol',
      '@tritonserver-ts/onnx-builder': 'onnx-builder',
    };
    for (const dep of Object.keys(pkg.dependencies ?? {}).filter((d) => d.startsWith('@tritonserver-ts/'))) {
      const dir = workspaceDeps[dep];
      expect(dir, `${dep} is a workspace package: add it to this map and to the Dockerfile`).toBeDefined();
      expect(copied).toContain(`/app/packages/${dir}/dist`);
      expect(copied).toContain(`/app/packages/${dir}/package.json`);
    }
  });

  it('runs as a non-root user, exposes HTTP 8000, gRPC 8001 and metrics 8002, and has a Triton health check', () => {
    expect(isRootUser(last(runtime, 'USER')?.args)).toBe(false);
    expect(exposedPorts(runtime).sort()).toEqual([8000, 8001, 8002]);
    // The server's CLI serves gRPC on 8001 unless told otherwise: nothing turns it off here.
    expect(last(runtime, 'CMD')?.args).not.toMatch(/--allow-grpc=false|--grpc-port=/);
    expect(last(runtime, 'HEALTHCHECK')?.args).toContain('http://127.0.0.1:8000/v2/health/ready');
  });
});

describe('build contexts', () => {
  for (const name of ['Dockerfile.triton', 'Dockerfile.web', 'Dockerfile.server']) {
    it(`${name}: every path it COPYs from the context is in git and survives its .dockerignore`, () => {
      const rules = parseDockerignore(read(`docker/${name}.dockerignore`));
      const sources = contextSources(load(name));
      expect(sources.length).toBeGreaterThan(0);
      for (const source of sources) {
        expect(exists(source), `${source} is missing from the repository`).toBe(true);
        // What a fresh clone has: every tracked file under a copied directory is sent, too.
        const tracked = trackedFiles(source);
        expect(tracked.length, `${source} is not tracked by git`).toBeGreaterThan(0);
        for (const path of [source, ...tracked]) {
          expect(isIncluded(rules, path), `${path} is excluded by ${name}.dockerignore`).toBe(true);
        }
      }
    });

    it(`${name}: the context leaves out installs, builds, caches and a host-built model`, () => {
      const rules = parseDockerignore(read(`docker/${name}.dockerignore`));
      for (const path of [
        'node_modules/x/index.js',
        'packages/food-model/node_modules/x/index.js',
        'packages/onnx-builder/dist/index.js',
        'packages/food-model/.cache/features.bin',
        'packages/food-model/artifacts/food11-report.json',
        '.turbo/cache/x',
        BUILT_MODEL,
      ]) {
        expect(isIncluded(rules, path), `${path} is sent to the builder`).toBe(false);
      }
    });
  }
});
