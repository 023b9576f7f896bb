// docker/Dockerfile.{triton,web,server}: read without a Docker engine and checked against the
// repository they build from.
import { describe, expect, it } from 'vitest';
import {
  commandOf,
  copyPaths,
  exposedPorts,
  instructions,
  last,
  parseDockerfile,
  stageEnv,
  type Dockerfile,
  type Stage,
} from '../src/dockerfile.js';
import { isIncluded, parseDockerignore } from '../src/dockerignore.js';
import { exists, read, trackedFiles } from '../src/repo.js';

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

  it('starts from an NVIDIA Triton py3 image of release 24.10 or newer', () => {
    const match = /^nvcr\.io\/nvidia\/tritonserver:(\d+)\.(\d+)-py3$/.exec(triton.image);
    expect(match, triton.image).not.toBeNull();
    const [year, month] = [Number(match?.[1]), Number(match?.[2])];
    expect(year * 100 + month).toBeGreaterThanOrEqual(2410);
  });

  it('installs every third-party module model.py imports that the image lacks', () => {
    const modelPy = read('models_staging/food_classifier/1/model.py');
    const imported = new Set(
      [...modelPy.matchAll(/^\s*(?:import\s+(\w+)|from\s+(\w+)[\w.]*\s+import\s)/gm)].map(
        (m) => m[1] ?? m[2] ?? '',
      ),
    );
    // What model.py needs beyond the standard library and what the Triton image provides.
    const pipName: Record<string, string> = { PIL: 'pillow', onnxruntime: 'onnxruntime-gpu' };
    const providedByImage = new Set(['numpy', 'triton_python_backend_utils']);
    const stdlib = new Set(['base64', 'binascii', 'concurrent', 'io', 'json', 'math', 'os', 're']);
    const installs = runText(triton);
    for (const module of imported) {
      if (stdlib.has(module) || providedByImage.has(module)) continue;
      const name = pipName[module];
      expect(name, `model.py imports ${module}; map it to a pip package here`).toBeDefined();
      expect(installs).toMatch(new RegExp(`pip install[^\\n]*"?${name}[=>"\\s]`));
    }
    expect(installs).toMatch(/import numpy, PIL, onnxruntime/);
  });

  it("exposes Triton's three ports and checks /v2/health/ready", () => {
    expect(exposedPorts(triton).sort()).toEqual([8000, 8001, 8002]);
    const health = last(triton, 'HEALTHCHECK')?.args ?? '';
    expect(health).toContain('http://localhost:8000/v2/health/ready');
  });

  it('serves /models, which the with-models stage fills from models_staging/', () => {
    const command = commandOf(last(triton, 'CMD')?.args ?? '[]');
    expect(command[0]).toBe('tritonserver');
    expect(command).toContain('--model-repository=/models');
    const withModels = stageNamed(file, 'triton-with-models');
    expect(withModels.image).toBe('triton');
    expect(instructions(withModels, 'COPY').map((i) => copyPaths(i.args))).toContainEqual({
      sources: ['models_staging'],
      destination: '/models',
    });
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

  it('copies every workspace package the server depends on', () => {
    const copied = instructions(runtime, 'COPY').map((i) => copyPaths(i.args).sources[0]);
    const pkg = JSON.parse(read('packages/server/package.json')) as { dependencies?: Record<string, string> };
    const workspaceDeps: Record<string, string> = {
      '@tritonserver-ts/client': 'client',
      '@tritonserver-ts/onnx-builder': 'onnx-builder',
    };
    for (const dep of Object.keys(pkg.dependencies ?? {}).filter((d) => d.startsWith('@tritonserver-ts/'))) {
      const dir = workspaceDeps[dep];
      expect(dir, `${dep} is a workspace package: add it to this map and to the Dockerfile`).toBeDefined();
      expect(copied).toContain(`/app/packages/${dir}/dist`);
      expect(copied).toContain(`/app/packages/${dir}/package.json`);
    }
  });

  it('runs as a non-root user, exposes HTTP 8000 and metrics 8002, and has a Triton health check', () => {
    expect(isRootUser(last(runtime, 'USER')?.args)).toBe(false);
    expect(exposedPorts(runtime).sort()).toEqual([8000, 8002]);
    expect(last(runtime, 'HEALTHCHECK')?.args).toContain('http://127.0.0.1:8000/v2/health/ready');
  });
});

describe('build contexts', () => {
  for (const name of ['Dockerfile.triton', 'Dockerfile.web', 'Dockerfile.server']) {
    it(`${name}: every path it COPYs from the context exists and survives its .dockerignore`, () => {
      const rules = parseDockerignore(read(`docker/${name}.dockerignore`));
      const sources = contextSources(load(name));
      expect(sources.length).toBeGreaterThan(0);
      for (const source of sources) {
        expect(exists(source), `${source} is missing from the repository`).toBe(true);
        expect(isIncluded(rules, source), `${source} is excluded by ${name}.dockerignore`).toBe(true);
      }
      expect(isIncluded(rules, 'node_modules/x/index.js')).toBe(false);
    });
  }
});
