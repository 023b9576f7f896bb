/**
 * Large JSON infer bodies are decoded off the event loop: health checks keep answering in
 * milliseconds while big JSON bodies are parsed, and the large-body path decodes exactly like the
 * inline one (values, errors).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeRepository, post } from '../helpers/server.js';

const MiB = 1024 * 1024;
const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
// The server runs in its own process, so that its event loop is what the probes measure.
let child: ChildProcess;
let repository = '';
const srv = { url: '' };

beforeAll(async () => {
  if (!existsSync(cli)) throw new Error(`build the package first (${cli} is missing)`);
  repository = await makeRepository(['identity_fp32']);
  child = spawn(
    process.execPath,
    [
      cli,
      `--model-repository=${repository}`,
      '--http-port=0',
      '--grpc-port=0',
      '--http-address=127.0.0.1',
      '--allow-metrics=false',
      `--http-max-input-size=${128 * MiB}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  srv.url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${err}`)), 30_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const m = /Started HTTPService at [^:\s]+:(\d+)/.exec(err);
      if (m !== null) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${m[1]}`);
      }
    });
  });
}, 60_000);
afterAll(async () => {
  child.kill('SIGKILL');
  await rm(repository, { recursive: true, force: true });
});

/** The median time of three `JSON.parse` runs of `body` in this process. */
function medianParseMs(body: Buffer): number {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    JSON.parse(body.toString('utf8'));
    runs.push(performance.now() - t);
  }
  return runs.sort((a, b) => a - b)[1] ?? 0;
}

/** A JSON identity request of `n` FP32 values (about 9 bytes of JSON text each), binary output. */
function jsonBody(n: number): string {
  const data = Array.from({ length: n }, (_, i) => (i % 1000) / 8 + 0.125);
  return JSON.stringify({
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, n], data }],
    parameters: { binary_data_output: true },
  });
}

describe('large JSON bodies', () => {
  it('do not stall health checks while they are parsed', async () => {
    const n = 3_000_000; // ~18 MB of JSON each: well over a few hundred ms of JSON.parse inline
    // Encoded up front: the probes measure the server, not this process encoding a string.
    const body = Buffer.from(jsonBody(n));
    expect(body.length).toBeGreaterThan(16 * MiB);
    let stop = false;
    const latencies: number[] = [];
    const prober = (async () => {
      while (!stop) {
        const t = performance.now();
        expect((await fetch(`${srv.url}/v2/health/live`)).status).toBe(200);
        latencies.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const answers = await Promise.all(
      [0, 1, 2].map(() => post(srv.url, '/v2/models/identity_fp32/infer', body)),
    );
    stop = true;
    await prober;
    for (const a of answers) expect(a.status, a.text.slice(0, 200)).toBe(200);
    latencies.sort((a, b) => a - b);
    const worst = latencies.at(-1) ?? 0;
    // The floor, measured in the same run on the same (shared, noisy) machine: one plain JSON.parse
    // of such a body. Decoding a body on the event loop costs at least that (the codec parses and then
    // converts), so a stall from inline decoding is at least this long; reading and copying the bodies
    // (what the event loop still does) costs a fraction of it. Measured idle: about 80 ms at worst
    // off-thread, 690 ms when decoded inline.
    const parseMs = medianParseMs(body);
    const limit = Math.max(250, 0.75 * parseMs);
    console.log(
      `worst health latency ${worst.toFixed(1)} ms over ${latencies.length} probes; one JSON.parse of the body ${parseMs.toFixed(0)} ms; limit ${limit.toFixed(0)} ms`,
    );
    expect(latencies.length).toBeGreaterThan(10);
    expect(worst, `health latencies (ms): ${latencies.map((l) => l.toFixed(0)).join(',')}`).toBeLessThan(
      limit,
    );
  }, 60_000);

  it('decodes values and refuses bad data exactly as the inline path does', async () => {
    const n = 200_000; // over the 1 MiB threshold
    const ok = await fetch(`${srv.url}/v2/models/identity_fp32/infer`, { method: 'POST', body: jsonBody(n) });
    expect(ok.status).toBe(200);
    const headerLength = Number(ok.headers.get('inference-header-content-length'));
    const bytes = new Uint8Array(await ok.arrayBuffer());
    const values = new Float32Array(bytes.slice(headerLength).buffer);
    expect(values.length).toBe(n);
    expect([values[0], values[1], values[999], values[1000]]).toEqual([0.125, 0.25, 999 / 8 + 0.125, 0.125]);
    const bad = jsonBody(n).replace('"data":[0.125,', '"data":["x",');
    const refused = await post(srv.url, '/v2/models/identity_fp32/infer', bad);
    expect(refused.status).toBe(400);
    expect((refused.json as { error: string }).error).toMatch(/Unable to parse 'data'/);
    const deep = JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: 'X' }],
      pad: ' '.repeat(2 * MiB),
    }).replace('"X"', `${'['.repeat(5000)}1${']'.repeat(5000)}`);
    const nested = await post(srv.url, '/v2/models/identity_fp32/infer', deep);
    expect(nested.status).toBe(400);
    expect(nested.json).toEqual({
      error: "Unable to parse 'data': JSON nesting depth exceeds maximum allowed limit (100)",
    });
  }, 60_000);
});
