// `npm start` runs the embedded inference server with scripts/embedded-server.mjs's command line. The
// browser only talks to the gateway, so the inference server and its metrics must listen on loopback
// only: checked here on the real server, from the kernel's own socket table (/proc/net/tcp*), with no
// traffic to any other address.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { modelsDir, repoRoot } from '../src/repo.js';

type Command = (
  root: string,
  env: Record<string, string | undefined>,
) => { args: string[]; tritonUrl: string };
const { embeddedServerCommand } = (await import(
  pathToFileURL(join(repoRoot, 'scripts/embedded-server.mjs')).href
)) as { embeddedServerCommand: Command };

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
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
    const everywhere = embeddedServerCommand(repoRoot, {
      TRITON_HTTP_ADDRESS: '0.0.0.0',
      TRITON_HTTP_PORT: '9000',
    });
    expect(everywhere.args).toContain('--http-address=0.0.0.0');
    expect(everywhere.tritonUrl).toBe('127.0.0.1:9000');
    expect(embeddedServerCommand(repoRoot, { TRITON_HTTP_ADDRESS: '::1' }).tritonUrl).toBe('[::1]:8000');
  });

  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('listens on 127.0.0.1 only, for HTTP and for metrics', async () => {
    const httpPort = await freePort();
    const metricsPort = await freePort();
    const { args, tritonUrl } = embeddedServerCommand(repoRoot, {
      TRITON_HTTP_PORT: String(httpPort),
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
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
  }, 120_000);
});
