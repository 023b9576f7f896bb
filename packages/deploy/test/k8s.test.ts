// docker/k8s: every manifest parsed, and the references between them checked (selectors, ports,
// probes, the HPA's metric, KServe's ports, the web app's env).
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { exposedPorts, parseDockerfile, type Stage } from '../src/dockerfile.js';
import { modelNames, read, yamlDocuments } from '../src/repo.js';

interface Port {
  name?: string;
  containerPort?: number;
  port?: number;
  targetPort?: number | string;
}
interface Probe {
  httpGet?: { path?: string; port?: number | string };
}
interface Container {
  name: string;
  image?: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  ports?: Port[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  volumeMounts?: { name: string; mountPath: string }[];
  resources?: { limits?: Record<string, unknown> };
}
interface PodSpec {
  containers: Container[];
  volumes?: { name: string; emptyDir?: { medium?: string } }[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}
interface Deployment extends Manifest {
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: PodSpec;
    };
  };
}
interface Service extends Manifest {
  spec: { selector: Record<string, string>; ports: Port[] };
}

const manifests = yamlDocuments('docker/k8s').map(({ file, doc }) => ({
  file,
  m: doc as unknown as Manifest,
}));
const ofKind = <T extends Manifest>(kind: string): T[] =>
  manifests.filter(({ m }) => m.kind === kind).map(({ m }) => m as T);
const named = <T extends Manifest>(kind: string, name: string): T => {
  const found = ofKind<T>(kind).find((m) => m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in docker/k8s`);
  return found;
};
const container = (d: Deployment): Container => {
  const c = d.spec.template.spec.containers[0];
  if (!c) throw new Error(`${d.metadata.name} has no container`);
  return c;
};
/** A probe's or Service's port (number or container port name) as a number. */
const portNumber = (c: Container, port: number | string | undefined): number | undefined =>
  typeof port === 'number' ? port : c.ports?.find((p) => p.name === port)?.containerPort;
const matches = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('docker/k8s manifests', () => {
  it('all parse as Kubernetes objects with apiVersion, kind and a name', () => {
    const k8s = manifests.filter(({ file }) => !file.includes('prometheus-adapter'));
    expect(k8s.length).toBeGreaterThanOrEqual(6);
    for (const { file, m } of k8s) {
      expect(m.apiVersion, file).toMatch(/\w/);
      expect(m.kind, file).toMatch(/^[A-Z]\w+$/);
      expect(m.metadata.name, file).toMatch(/^[a-z0-9-]+$/);
    }
  });

  it('every Deployment selects its own pods, and every Service selects a Deployment and targets its ports', () => {
    const deployments = ofKind<Deployment>('Deployment');
    for (const d of deployments)
      expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
    for (const s of ofKind<Service>('Service')) {
      const target = deployments.find((d) => matches(s.spec.selector, d.spec.template.metadata.labels));
      expect(target, `Service ${s.metadata.name} selects no Deployment`).toBeDefined();
      const c = container(target as Deployment);
      for (const p of s.spec.ports) {
        const port = portNumber(c, p.targetPort ?? p.port);
        expect(
          c.ports?.map((x) => x.containerPort),
          `${s.metadata.name}:${p.port}`,
        ).toContain(port);
      }
    }
  });
});

describe('docker/k8s/triton (Deployment + Service + HPA on queue time)', () => {
  const triton = named<Deployment>('Deployment', 'triton-server');
  const c = container(triton);
  const image = parseDockerfile(read('docker/Dockerfile.triton'));

  it("runs the model-carrying image's tritonserver on Triton's ports with a GPU", () => {
    expect(c.args?.[0]).toBe('tritonserver');
    expect(c.args).toContain('--model-repository=/models');
    expect(image.stages.map((s) => s.name)).toContain('triton-with-models');
    expect(c.image).toMatch(/triton-models/);
    // Tagged with the Triton release the image is built on: the Dockerfile's default TRITON_RELEASE.
    expect(c.image).toBe(`registry.example.com/gourmetgram/triton-models:${image.globalArgs.TRITON_RELEASE}`);
    const exposed = exposedPorts(image.stages.find((s) => s.name === 'triton') as Stage);
    expect(c.ports?.map((p) => p.containerPort).sort()).toEqual(exposed.sort());
    expect(c.resources?.limits?.['nvidia.com/gpu']).toBe(1);
  });

  it("probes readiness on Triton's /v2/health/ready and liveness on /v2/health/live", () => {
    for (const probe of [c.readinessProbe, c.startupProbe]) {
      expect(probe?.httpGet?.path).toBe('/v2/health/ready');
      expect(portNumber(c, probe?.httpGet?.port)).toBe(8000);
    }
    expect(c.livenessProbe?.httpGet?.path).toBe('/v2/health/live');
  });

  it('gives the Python backend an in-memory /dev/shm', () => {
    const mount = c.volumeMounts?.find((m) => m.mountPath === '/dev/shm');
    const volume = triton.spec.template.spec.volumes?.find((v) => v.name === mount?.name);
    expect(volume?.emptyDir?.medium).toBe('Memory');
  });

  it('is scraped on its metrics port', () => {
    const annotations = triton.spec.template.metadata.annotations ?? {};
    expect(annotations['prometheus.io/scrape']).toBe('true');
    expect(Number(annotations['prometheus.io/port'])).toBe(portNumber(c, 'metrics'));
  });

  it("scales on a queue-time metric that prometheus-adapter derives from Triton's nv_inference_queue_duration_us", () => {
    const hpa = named<Manifest>('HorizontalPodAutoscaler', 'triton-server');
    const spec = hpa.spec as {
      scaleTargetRef: { kind: string; name: string };
      minReplicas: number;
      maxReplicas: number;
      metrics: { type: string; pods?: { metric: { name: string } } }[];
    };
    expect(spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'triton-server' });
    expect(spec.maxReplicas).toBeGreaterThan(spec.minReplicas);
    const metric = spec.metrics.find((m) => m.type === 'Pods')?.pods?.metric.name;

    const adapter = parse(read('docker/k8s/prometheus-adapter/values.yaml')) as {
      rules: { custom: { seriesQuery: string; name: { as: string }; metricsQuery: string }[] };
    };
    const rule = adapter.rules.custom.find((r) => r.name.as === metric);
    expect(rule, `no prometheus-adapter rule produces ${metric}`).toBeDefined();
    expect(rule?.seriesQuery).toContain('nv_inference_queue_duration_us');
    expect(rule?.metricsQuery).toContain('nv_inference_queue_duration_us');
    expect(rule?.metricsQuery).toContain('nv_inference_request_success');
  });
});

describe('docker/k8s/kserve (InferenceService on a Triton ServingRuntime)', () => {
  const runtime = named<Manifest>('ServingRuntime', 'gourmetgram-triton');
  const service = named<Manifest>('InferenceService', 'food11');
  const runtimeSpec = runtime.spec as {
    supportedModelFormats: { name: string }[];
    protocolVersions: string[];
    containers: Container[];
  };
  const rc = runtimeSpec.containers[0] as Container;

  it("serves HTTP on 8080 and gRPC on 9000 from /mnt/models, KServe's Triton conventions", () => {
    expect(rc.name).toBe('kserve-container');
    expect(rc.args?.[0]).toBe('tritonserver');
    expect(rc.args).toEqual(
      expect.arrayContaining(['--model-store=/mnt/models', '--http-port=8080', '--grpc-port=9000']),
    );
    expect(rc.ports?.map((p) => p.containerPort)).toEqual([8080]);
    expect(runtimeSpec.protocolVersions).toContain('v2');
  });

  it("uses the GourmetGram Triton image (the stock one lacks model.py's Pillow)", () => {
    expect(rc.image).toMatch(/gourmetgram\/triton:/);
  });

  it("tags that image with the Dockerfile's default Triton release", () => {
    const release = parseDockerfile(read('docker/Dockerfile.triton')).globalArgs.TRITON_RELEASE;
    expect(release).toBe('26.09-py3');
    expect(rc.image).toBe(`registry.example.com/gourmetgram/triton:${release}`);
  });

  it('points the InferenceService at that runtime, a format it supports, and a model repository URI', () => {
    const spec = service.spec as {
      predictor: { model: { modelFormat: { name: string }; runtime: string; storageUri: string } };
    };
    const model = spec.predictor.model;
    expect(model.runtime).toBe(runtime.metadata.name);
    expect(runtimeSpec.supportedModelFormats.map((f) => f.name)).toContain(model.modelFormat.name);
    expect(model.storageUri).toMatch(/^(s3|gs|pvc|https?):\/\/.+/);
  });
});

describe('docker/k8s/web', () => {
  const web = named<Deployment>('Deployment', 'gourmetgram-web');
  const c = container(web);
  const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));

  it('points TRITON_SERVER_URL at the Triton Service by a bare host:port', () => {
    const triton = named<Service>('Service', 'triton-server');
    const http = triton.spec.ports.find((p) => p.name === 'http');
    expect(env.TRITON_SERVER_URL).toBe(`${triton.metadata.name}:${http?.port}`);
    expect(modelNames()).toContain(env.FOOD11_MODEL_NAME);
    const appEnv = read('apps/web/src/env.ts');
    for (const name of Object.keys(env)) expect(appEnv, `the app does not read ${name}`).toContain(name);
  });

  it("points TRITON_GRPC_URL at the Triton Service's gRPC port and names a protocol the app knows", () => {
    const triton = named<Service>('Service', 'triton-server');
    const grpc = triton.spec.ports.find((p) => p.name === 'grpc');
    expect(grpc?.port).toBe(8001);
    expect(env.TRITON_GRPC_URL).toBe(`${triton.metadata.name}:${grpc?.port}`);
    expect(['http', 'grpc']).toContain(env.TRITON_PROTOCOL);
  });

  it("listens on the web image's port, runs as non-root, and is published on 80", () => {
    const image = parseDockerfile(read('docker/Dockerfile.web'));
    const exposed = exposedPorts(image.stages.at(-1) as Stage);
    expect(c.ports?.map((p) => p.containerPort)).toEqual(exposed);
    expect(web.spec.template.spec.securityContext?.runAsNonRoot).toBe(true);
    const svc = named<Service>('Service', 'gourmetgram-web');
    expect(svc.spec.ports.map((p) => p.port)).toEqual([80]);
    expect(c.readinessProbe?.httpGet?.path).toMatch(/^\/api\//);
  });
});
