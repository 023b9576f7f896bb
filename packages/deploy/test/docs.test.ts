// The deployment READMEs name real files, stages, scripts and endpoints.
import { readdirSync, readFileSync } from 'node:fs';
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

  it('has the GPU node walk-through: driver, Docker, NVIDIA Container Toolkit, model build, compose, readiness', () => {
    const section = text.slice(text.indexOf('## Deploy on a GPU node'));
    expect(section.length).toBeLessThan(text.length);
    const steps = [
      'nvidia-smi',
      'docker-compose-plugin',
      'nvidia-container-toolkit',
      'nvidia-ctk runtime configure --runtime=docker',
      'npm run model:build -w @gourmetgram/food-model',
      'docker compose -f docker/docker-compose-triton.yaml up -d --build',
      'localhost:8000/v2/health/ready',
    ];
    let from = 0;
    for (const step of steps) {
      const at = section.indexOf(step, from);
      expect(at, `"${step}" missing or out of order`).toBeGreaterThanOrEqual(0);
      from = at;
    }
  });

  it('covers the CPU-only path and Kubernetes', () => {
    expect(text).toContain('docker compose -f docker/docker-compose-cpu.yaml up -d --build');
    expect(text).toContain('k8s/README.md');
  });
});
