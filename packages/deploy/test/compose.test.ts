// docker/docker-compose-{triton,cpu}.yaml: parsed and checked against the Dockerfiles, the model
// repository and the web app's configuration.
import { dirname, join, posix, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  baseImage,
  commandOf,
  copyPaths,
  exposedPorts,
  instructions,
  lastInherited,
  parseDockerfile,
  resolvedImage,
  shellCommands,
  stageChain,
  workdirAt,
  type Dockerfile,
  type Stage,
} from '../src/dockerfile.js';
import { dockerDir, exists, modelNames, pbtxtField, read, repoRoot } from '../src/repo.js';

interface Volume {
  type?: string | undefined;
  source?: string | undefined;
  target?: string | undefined;
  read_only?: boolean | undefined;
}
interface Service {
  build?: { context?: string; dockerfile?: string; target?: string; args?: Record<string, string> };
  image?: string;
  command?: string[];
  shm_size?: string;
  ports?: string[];
  volumes?: (Volume | string)[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition?: string }>;
  healthcheck?: { test?: string[] };
  deploy?: {
    resources?: {
      reservations?: { devices?: { driver?: string; count?: unknown; capabilities?: string[] }[] };
    };
  };
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const load = (name: string): Compose => parse(read(`docker/${name}`)) as Compose;

/** The Dockerfile and stage a compose service builds (its `target`, or the last stage). */
function builtImage(service: Service): { file: Dockerfile; stage: Stage } {
  const dockerfile = service.build?.dockerfile;
  if (dockerfile === undefined) throw new Error('service has no build.dockerfile');
  const contextDir = resolve(dockerDir, service.build?.context ?? '.');
  const file = parseDockerfile(read(relative(repoRoot, join(contextDir, dockerfile))));
  const target = service.build?.target;
  const stage = target === undefined ? file.stages.at(-1) : file.stages.find((s) => s.name === target);
  if (!stage) throw new Error(`no stage ${target ?? '(last)'} in ${dockerfile}`);
  return { file, stage };
}

/**
 * Where the image a service builds gets the model repository it serves at `path`: a `COPY --from`
 * of the stage or a stage it builds on, from a stage of the same Dockerfile that runs the model build.
 */
function modelRepositoryOrigin(
  service: Service,
  path: string,
): { builder: Stage; source: string; builderWorkdir: string | undefined } | undefined {
  const { file, stage } = builtImage(service);
  for (const s of stageChain(file, stage)) {
    for (const copy of instructions(s, 'COPY')) {
      const { sources, destination } = copyPaths(copy.args);
      const builder = file.stages.find((b) => b.name !== undefined && b.name === copy.flags.from);
      if (builder === undefined || destination.replace(/(.)\/$/, '$1') !== path) continue;
      return { builder, source: sources[0] ?? '', builderWorkdir: workdirAt(file, builder) };
    }
  }
  return undefined;
}

/** `"80:3000"` → { host: 80, container: 3000 }. */
function portMappings(service: Service): { host: number; container: number }[] {
  return (service.ports ?? []).map((p) => {
    const [host, container] = p.split(':').map((x) => Number.parseInt(x, 10));
    return { host: host ?? NaN, container: container ?? NaN };
  });
}

/** `${NAME:-default}` → default; a plain value → itself. */
function defaultOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const match = /^\$\{[A-Z0-9_]+:-([^}]*)\}$/.exec(value);
  return match ? match[1] : value;
}

function modelMount(service: Service): Volume | undefined {
  return (service.volumes ?? [])
    .map((v): Volume => (typeof v === 'string' ? { source: v.split(':')[0], target: v.split(':')[1] } : v))
    .find((v) => v.target === '/models');
}

/** The env names the web app reads (apps/web/src), so compose and k8s cannot drift from them. */
function appReadsEnv(name: string): boolean {
  const env = exists('apps/web/src/env.ts') ? read('apps/web/src/env.ts') : '';
  return env.includes(name);
}

const files = {
  'docker-compose-triton.yaml': { triton: 'triton_server', web: 'gourmetgram_web' },
  'docker-compose-cpu.yaml': { triton: 'triton_server', web: 'gourmetgram_web' },
} as const;

for (const [name, roles] of Object.entries(files)) {
  describe(`docker/${name}`, () => {
    const compose = load(name);
    const triton = compose.services[roles.triton] as Service;
    const web = compose.services[roles.web] as Service;

    it('has the inference server and the web app, each built from a Dockerfile in docker/', () => {
      expect(Object.keys(compose.services).sort()).toEqual([roles.web, roles.triton].sort());
      for (const service of [triton, web]) {
        expect(resolve(dockerDir, service.build?.context ?? '')).toBe(repoRoot);
        expect(exists(service.build?.dockerfile ?? 'missing'), service.build?.dockerfile).toBe(true);
        expect(dirname(service.build?.dockerfile ?? '')).toBe('docker');
        builtImage(service); // the target stage exists
      }
    });

    it('serves the model repository its image builds, read-only, at the --model-repository it is started with', () => {
      const repository = triton.command
        ?.find((a) => a.startsWith('--model-repository='))
        ?.slice('--model-repository='.length);
      expect(repository).toBe('/models');
      // Nothing at the repository path, and nothing of the host's models_staging/, is mounted: a
      // fresh host without Node.js or a built model runs this file as it is.
      expect(modelMount(triton)).toBeUndefined();
      for (const volume of triton.volumes ?? []) {
        const source = typeof volume === 'string' ? volume.split(':')[0] : volume.source;
        expect(resolve(dockerDir, source ?? '')).not.toContain(join(repoRoot, 'models_staging'));
      }
      // The image's stage copies models_staging/ from a stage that ran the model build and made it
      // read-only (the bind mount's read_only: true before issue 13).
      const origin = modelRepositoryOrigin(triton, repository ?? '');
      expect(origin, 'no COPY --from=<model build stage> into the model repository').toBeDefined();
      expect(origin?.source).toBe(posix.join(origin?.builderWorkdir ?? '?', 'models_staging'));
      const commands = instructions(origin?.builder as Stage, 'RUN').flatMap((i) => shellCommands(i.args));
      const text = commands.map((argv) => argv.join(' '));
      expect(text).toContain('npm run model:build -w @gourmetgram/food-model');
      expect(text).toContain('chmod -R a-w models_staging');
      expect(text.indexOf('chmod -R a-w models_staging')).toBeGreaterThan(
        text.indexOf('npm run model:build -w @gourmetgram/food-model'),
      );
      // The service runs the image's own server command on that repository.
      const image = builtImage(triton);
      const cmd = lastInherited(image.file, image.stage, 'CMD');
      expect(commandOf(cmd?.args ?? '[]')).toContain(`--model-repository=${repository}`);
    });

    it('needs no Node.js or model build on the host', () => {
      const text = read(`docker/${name}`);
      const hostCommands = text
        .split('\n')
        .filter((line) => /^#\s{3,}\S/.test(line))
        .map((line) => line.replace(/^#\s+/, ''));
      expect(hostCommands).toEqual([`docker compose -f docker/${name} up -d --build`]);
    });

    it('publishes only ports the images expose', () => {
      for (const service of [triton, web]) {
        const { file, stage } = builtImage(service);
        const exposed = stageChain(file, stage).flatMap(exposedPorts); // EXPOSE is inherited
        for (const { container } of portMappings(service)) expect(exposed).toContain(container);
      }
      expect(portMappings(web).map((p) => p.host)).toEqual([80]);
    });

    it('starts the web app only once the inference server is healthy', () => {
      expect(web.depends_on?.[roles.triton]?.condition).toBe('service_healthy');
      expect(triton.healthcheck?.test?.join(' ')).toMatch(
        /http:\/\/(localhost|127\.0\.0\.1):8000\/v2\/health\/ready/,
      );
    });

    it('points the web app at the server by a bare host:port and at a model that exists', () => {
      const url = web.environment?.TRITON_SERVER_URL;
      expect(url).toBe(`${roles.triton}:8000`);
      expect(portMappings(triton).map((p) => p.container)).toContain(8000);
      const model = defaultOf(web.environment?.FOOD11_MODEL_NAME);
      expect(modelNames()).toContain(model);
    });

    it('gives the web app the server gRPC address beside the HTTP one, and TRITON_PROTOCOL defaulting to http', () => {
      expect(web.environment?.TRITON_GRPC_URL).toBe(`${roles.triton}:8001`);
      expect(portMappings(triton)).toContainEqual({ host: 8001, container: 8001 });
      expect(web.environment?.TRITON_PROTOCOL).toBe('${TRITON_PROTOCOL:-http}');
      expect(defaultOf(web.environment?.TRITON_PROTOCOL)).toBe('http');
    });

    it('keeps feedback on a named volume that holds FEEDBACK_DIR', () => {
      const dir = web.environment?.FEEDBACK_DIR ?? '';
      const mount = (web.volumes ?? []).find(
        (v): v is string => typeof v === 'string' && dir.startsWith(`${v.split(':')[1] ?? '?'}/`),
      );
      expect(mount, `no volume holds ${dir}`).toBeDefined();
      expect(compose.volumes ?? {}).toHaveProperty(mount?.split(':')[0] ?? '');
      const image = parseDockerfile(read('docker/Dockerfile.web'));
      const runtime = image.stages.at(-1) as Stage;
      expect(runtime.instructions.map((i) => i.args).join('\n')).toContain(`mkdir -p ${dir}`);
    });

    it('uses the environment names the web app reads', () => {
      expect(Object.keys(web.environment ?? {})).toEqual(
        expect.arrayContaining(['TRITON_SERVER_URL', 'FOOD11_MODEL_NAME']),
      );
      for (const key of Object.keys(web.environment ?? {})) {
        expect(appReadsEnv(key), `apps/web/src/env.ts does not read ${key}`).toBe(true);
      }
    });
  });
}

describe('docker/docker-compose-triton.yaml (GPU)', () => {
  const compose = load('docker-compose-triton.yaml');
  const triton = compose.services.triton_server as Service;

  it('reserves NVIDIA GPUs for Triton', () => {
    const devices = triton.deploy?.resources?.reservations?.devices ?? [];
    expect(devices).toContainEqual(expect.objectContaining({ driver: 'nvidia', capabilities: ['gpu'] }));
  });

  it('gives the Python backend shared memory and checks /v2/health/ready', () => {
    const shm = /^(\d+)([mg])$/.exec(triton.shm_size ?? '');
    expect(shm).not.toBeNull();
    const megabytes = Number(shm?.[1]) * (shm?.[2] === 'g' ? 1024 : 1);
    expect(megabytes).toBeGreaterThanOrEqual(256);
    expect(triton.healthcheck?.test).toEqual([
      'CMD',
      'curl',
      '-fsS',
      'http://localhost:8000/v2/health/ready',
    ]);
  });

  it('builds and tags the Triton image with one setting, TRITON_RELEASE, defaulting to the Dockerfile default', () => {
    const { file, stage } = builtImage(triton);
    const release = file.globalArgs.TRITON_RELEASE;
    expect(release).toBe('26.09-py3');
    expect(triton.build?.args).toEqual({ TRITON_RELEASE: `\${TRITON_RELEASE:-${release}}` });
    expect(triton.image).toBe(`gourmetgram/triton-models:\${TRITON_RELEASE:-${release}}`);
    // What `TRITON_RELEASE=24.10-py3 docker compose … up --build` builds from.
    const chosen = defaultOf(triton.build?.args?.TRITON_RELEASE) ?? '';
    expect(resolvedImage(file, stageChain(file, stage).at(-1) as Stage, { TRITON_RELEASE: chosen })).toBe(
      'nvcr.io/nvidia/tritonserver:26.09-py3',
    );
  });

  it("runs the Triton image with Triton's HTTP, gRPC and metrics ports", () => {
    const { file, stage } = builtImage(triton);
    expect(baseImage(file, stage)).toMatch(/^nvcr\.io\/nvidia\/tritonserver:/);
    expect(triton.command?.[0]).toBe('tritonserver');
    expect(
      portMappings(triton)
        .map((p) => p.container)
        .sort(),
    ).toEqual([8000, 8001, 8002]);
  });

  it('defaults the web app to the Python-backend model, like the original', () => {
    const model = defaultOf(compose.services.gourmetgram_web?.environment?.FOOD11_MODEL_NAME) ?? '';
    expect(model).toBe('food_classifier');
    expect(pbtxtField(read(`models_staging/${model}/config.pbtxt`), 'backend')).toBe('python');
  });
});

describe('docker/docker-compose-cpu.yaml', () => {
  const compose = load('docker-compose-cpu.yaml');
  const server = compose.services.triton_server as Service;

  it('has no GPU reservation and runs the embedded server', () => {
    expect(server.deploy).toBeUndefined();
    expect(server.command?.slice(0, 2)).toEqual(['node', 'packages/server/dist/cli.js']);
  });

  it('points the web app at a model the embedded server can run (not the Python backend)', () => {
    const model = defaultOf(compose.services.gourmetgram_web?.environment?.FOOD11_MODEL_NAME) ?? '';
    const config = read(`models_staging/${model}/config.pbtxt`);
    const runtime = pbtxtField(config, 'backend') ?? pbtxtField(config, 'platform');
    expect(runtime).toMatch(/^onnxruntime/);
  });
});
