// The deployment READMEs name real files, stages, scripts and endpoints.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDockerfile } from '../src/dockerfile.js';
import { exists, read, repoRoot } from '../src/repo.js';

const docs = ['docker/README.md', 'docker/k8s/README.md'];

/** Workspace package name → its scripts. */
function workspaceScripts(): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const group of ['packages', 'apps']) {
    for (const dir of readdirSync(join(repoRoot, group))) {
      const file = join(repoRoot, group, dir, 'package.json');
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as {
          name: string;
          scripts?: Record<string, string>;
        };
        out.set(pkg.name, pkg.scripts ?? {});
      } catch {
        // not a package
      }
    }
  }
  return out;
}

/** A section of a Markdown file: from its `## ` heading to the next one. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section ${heading}`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The lines of the fenced code blocks of a Markdown text, trimmed. */
function codeLines(markdown: string): string[] {
  return [...markdown.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].flatMap((m) =>
    (m[1] ?? '').split('\n').map((line) => line.trim()),
  );
}

/** Whether a web-app API path (`/api/examples/A001`) has a Next.js route file, dynamic segments included. */
function hasApiRoute(path: string): boolean {
  let dir = join(repoRoot, 'apps/web/src/app');
  for (const segment of path.split('/').filter(Boolean)) {
    if (existsSync(join(dir, segment))) dir = join(dir, segment);
    else {
      const dynamic = readdirSync(dir).find((name) => /^\[[\w-]+\]$/.test(name));
      if (dynamic === undefined) return false;
      dir = join(dir, dynamic);
    }
  }
  return existsSync(join(dir, 'route.ts'));
}

/** Steps of a deployment that would need Node.js on the host. */
const NODE_ON_HOST =
  /^(?:sudo\s+)?(?:npm|npx|node)\s|nodesource|apt-get install[^\n]*\bnodejs\b|node_modules\//;

for (const doc of docs) {
  describe(doc, () => {
    const text = read(doc);

    it('names files that exist (compose files, Dockerfiles, manifests)', () => {
      const paths = [
        ...text.matchAll(/(?:docker compose -f|docker build -f|kubectl apply -f|-f) (docker\/[\w./-]+)/g),
      ].map((m) => m[1] ?? '');
      expect(paths.length).toBeGreaterThan(0);
      for (const path of paths) expect(exists(path), path).toBe(true);
    });

    it('builds Dockerfile stages that exist', () => {
      for (const m of text.matchAll(/docker build -f (docker\/[\w.]+) --target ([\w-]+)/g)) {
        const stages = parseDockerfile(read(m[1] ?? '')).stages.map((s) => s.name);
        expect(stages, `${m[1]} --target ${m[2]}`).toContain(m[2]);
      }
    });

    it('calls web-app API routes that exist', () => {
      for (const m of text.matchAll(/localhost(?::\d+)?(\/api\/[\w/-]+)/g)) {
        expect(hasApiRoute(m[1] ?? ''), m[1]).toBe(true);
      }
    });

    it('runs npm scripts that exist in the named workspace', () => {
      const scripts = workspaceScripts();
      for (const m of text.matchAll(/npm run ([\w:-]+) -w ([@\w/-]+)/g)) {
        expect(scripts.get(m[2] ?? '')?.[m[1] ?? ''], `${m[2]} has no script ${m[1]}`).toBeDefined();
      }
    });
  });
}

describe('docker/README.md', () => {
  const text = read('docker/README.md');

  it('has the GPU node walk-through: driver, Docker, NVIDIA Container Toolkit, the code, compose, readiness', () => {
    const gpu = section(text, 'Deploy on a GPU node');
    const steps = [
      'nvidia-smi',
      'docker-compose-plugin',
      'nvidia-container-toolkit',
      'nvidia-ctk runtime configure --runtime=docker',
      'git clone',
      'docker compose -f docker/docker-compose-triton.yaml up -d --build',
      'localhost:8000/v2/health/ready',
    ];
    let from = 0;
    for (const step of steps) {
      const at = gpu.indexOf(step, from);
      expect(at, `"${step}" missing or out of order`).toBeGreaterThanOrEqual(0);
      from = at;
    }
  });

  it('needs no Node.js on a GPU or CPU host: the images build the model (issue 13)', () => {
    for (const heading of ['Deploy on a GPU node', 'CPU-only hosts']) {
      const lines = codeLines(section(text, heading));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line, `${heading}: ${line}`).not.toMatch(NODE_ON_HOST);
    }
    // Where it says what the images run, it names the real script (checked above for every doc).
    expect(text).toContain('npm run model:build -w @gourmetgram/food-model');
  });

  it('covers the CPU-only path and Kubernetes', () => {
    expect(text).toContain('docker compose -f docker/docker-compose-cpu.yaml up -d --build');
    expect(text).toContain('k8s/README.md');
  });
});

describe('README.md: Deploy on a GPU node', () => {
  const gpu = section(read('README.md'), 'Deploy on a GPU node');

  it('names compose files and docs that exist', () => {
    const paths = [...gpu.matchAll(/docker compose -f (docker\/[\w./-]+)/g)].map((m) => m[1] ?? '');
    expect(paths).toContain('docker/docker-compose-triton.yaml');
    for (const path of paths) expect(exists(path), path).toBe(true);
    for (const m of gpu.matchAll(/\]\(([\w./-]+\.md)\)/g)) expect(exists(m[1] ?? ''), m[1]).toBe(true);
  });

  it('lists driver and toolkit, the code, compose, readiness, and no Node.js step', () => {
    const first = gpu.indexOf('\n1. ');
    const list = gpu.slice(first, gpu.indexOf('\n\n', first));
    expect(list.split('\n').filter((line) => /^\d+\. /.test(line)).length).toBeGreaterThanOrEqual(3);
    let from = 0;
    for (const step of [
      'nvidia-smi',
      'nvidia-ctk runtime configure --runtime=docker',
      'git clone',
      'docker compose -f docker/docker-compose-triton.yaml up -d --build',
      'localhost:8000/v2/health/ready',
    ]) {
      const at = list.indexOf(step, from);
      expect(at, `"${step}" missing or out of order`).toBeGreaterThanOrEqual(0);
      from = at;
    }
    for (const command of [...list.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '')) {
      // The image's own `npm ci` and `npm run model:build -w …` may be named, never a host step.
      if (command.startsWith('npm run model:build -w ') || command === 'npm ci') continue;
      expect(command).not.toMatch(NODE_ON_HOST);
    }
    expect(list).not.toMatch(/`npm ci &&|Node\.js 20/);
    const scripts = workspaceScripts();
    for (const m of gpu.matchAll(/npm run ([\w:-]+) -w ([@\w/-]+)/g)) {
      expect(scripts.get(m[2] ?? '')?.[m[1] ?? ''], `${m[2]} has no script ${m[1]}`).toBeDefined();
    }
  });
});
