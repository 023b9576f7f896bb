/**
 * Bench helper for the sequence suite: a closed-loop load generator in its own process. argv: port,
 * model, concurrency, seconds, sequence length, id base. Each client sends sequences one after
 * another (START on the first request, END on the last, a fresh `sequence_id` each), one request at
 * a time over its own keep-alive connection (JSON, one INT32 [1, 1] input). Prints one JSON line:
 * `{"requests":N,"seconds":S,"p50Ms":…,"p99Ms":…,"errors":E}`.
 */
import http from 'node:http';

const [portArg, model, concArg, secondsArg, lengthArg, baseArg] = process.argv.slice(2);
const port = Number(portArg);
const concurrency = Number(concArg ?? 16);
const seconds = Number(secondsArg ?? 2);
const length = Number(lengthArg ?? 8);
let nextId = Number(baseArg ?? 1);

function post(agent: http.Agent, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/v2/models/${model}/infer`,
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const latencies: number[] = [];
let errors = 0;
const deadline = performance.now() + seconds * 1000;
const start = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    while (performance.now() < deadline) {
      const id = nextId++;
      for (let i = 0; i < length; i++) {
        const body = JSON.stringify({
          parameters: { sequence_id: id, sequence_start: i === 0, sequence_end: i === length - 1 },
          inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [i] }],
        });
        const t0 = performance.now();
        const status = await post(agent, body);
        latencies.push(performance.now() - t0);
        if (status !== 200) errors += 1;
      }
    }
    agent.destroy();
  }),
);
const elapsed = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number): number =>
  latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
process.stdout.write(
  `${JSON.stringify({ requests: latencies.length, seconds: elapsed, p50Ms: pct(0.5), p99Ms: pct(0.99), errors })}\n`,
);
