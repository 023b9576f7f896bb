/**
 * The CLI's shutdown on SIGTERM and SIGINT as tritonserver's (`HTTPServer::Stop` before the server
 * stops): the built CLI serves `slow` (identity, 800 ms per execution, two instances); a request is
 * in flight on an open keep-alive connection when the signal arrives. Until that connection's
 * requests are answered the HTTP port stays open: the request in flight gets its 200, a second
 * request sent on that connection meanwhile is answered too, and a new connection is reset, not
 * refused. Once they are done the port closes: a new connection is refused (ECONNREFUSED) and the
 * process exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const DELAY_MS = 800;

let repository: string;
beforeAll(async () => {
  repository = await mkdtemp(join(tmpdir(), 'graceful-stop-'));
  await mkdir(join(repository, 'slow', '1'), { recursive: true });
  await writeFile(
    join(repository, 'slow', 'config.pbtxt'),
    `name: "slow"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 2 } ]
parameters { key: "execute_delay_ms" value: { string_value: "${DELAY_MS}" } }
`,
  );
});
afterAll(async () => {
  await rm(repository, { recursive: true, force: true });
});

async function startCli(): Promise<{ child: ChildProcess; port: number; exit: Promise<number | null> }> {
  if (!existsSync(CLI)) throw new Error(`build the package first (${CLI} is missing)`);
  const child = spawn(
    process.execPath,
    [
      CLI,
      `--model-repository=${repository}`,
      '--http-port=0',
      '--http-address=127.0.0.1',
      '--allow-grpc=false',
      '--allow-metrics=false',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let err = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${err}`)), 30_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const m = /Started HTTPService at [^:\s]+:(\d+)/.exec(err);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    void exit.then((code) => reject(new Error(`server exited (${code}):\n${err}`)));
  });
  return { child, port, exit };
}

/** POSTs a `slow` request on `agent`'s connection; resolves with the status and OUTPUT0. */
function infer(port: number, agent: Agent, value: number): Promise<{ status: number; out: unknown }> {
  const body = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [value] }] });
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/v2/models/slow/infer', method: 'POST', agent },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          const json = JSON.parse(text) as { outputs?: { data: unknown[] }[] };
          resolve({ status: res.statusCode ?? 0, out: json.outputs?.[0]?.data[0] });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** What a new TCP connection to `port` meets: 'refused', 'reset' (accepted, then reset or closed), or 'open'. */
function probe(port: number): Promise<'refused' | 'reset' | 'open'> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let connected = false;
    socket.on('connect', () => {
      connected = true;
      // A served connection stays open: send nothing and wait a little for a reset.
      setTimeout(() => {
        socket.destroy();
        resolve('open');
      }, 300);
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      resolve(e.code === 'ECONNREFUSED' ? 'refused' : 'reset');
    });
    socket.on('close', () => {
      if (connected) resolve('reset');
    });
  });
}

describe.each(['SIGTERM', 'SIGINT'] as const)('the CLI on %s', (signal) => {
  it('serves its open connection to the end with the port open, resets new connections, then closes the port', async () => {
    const { child, port, exit } = await startCli();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await probe(port)).toBe('open');
      const first = infer(port, agent, 1);
      await new Promise((r) => setTimeout(r, DELAY_MS / 4));
      child.kill(signal);
      await new Promise((r) => setTimeout(r, 100));
      // The same connection (maxSockets 1) takes another request while the first is in flight.
      const second = infer(port, agent, 2);
      // Draining: the port is still bound, a new connection is reset rather than refused.
      expect(await probe(port)).toBe('reset');
      expect(await first).toEqual({ status: 200, out: 1 });
      expect(await second).toEqual({ status: 200, out: 2 });
      expect(await exit).toBe(0);
      expect(await probe(port)).toBe('refused');
    } finally {
      agent.destroy();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 30_000);
});
