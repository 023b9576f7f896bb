// Triton 2.73's TENSORS trace level, set over each transport: the trace settings accept it (alone
// or with TIMESTAMPS, reported as Triton reports it), and a traced request's trace has one
// {"id","activity","tensor":{"name","data","shape","dtype"}} object per input when it is queued
// (TENSOR_QUEUE_INPUT) and per output when it is answered (TENSOR_BACKEND_OUTPUT). The suite reads
// the server's trace file: the embedded server's, or a running Triton's at TRITON_TRACE_FILE (see
// README: the server writes it with log-frequency 1 into a directory this host can read).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newClient, traceFile, transports } from './target.js';

interface TraceObject {
  id: number;
  model_name?: string;
  request_id?: string;
  timestamps?: { name: string }[];
  activity?: string;
  tensor?: { name: string; data: string; shape: string; dtype: string };
}

/** Every object of the trace files `<file>.<n>` written so far. */
function traceObjects(): TraceObject[] {
  const dir = dirname(traceFile);
  if (!existsSync(dir)) return [];
  const prefix = `${basename(traceFile)}.`;
  return readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && /^\d+$/.test(f.slice(prefix.length)))
    .flatMap((f) => {
      try {
        return JSON.parse(readFileSync(join(dir, f), 'utf8')) as TraceObject[];
      } catch {
        return []; // being written
      }
    });
}

/** Waits (up to 5 s: a trace is written once the server has released the request) for `find`. */
async function waitFor<T>(find: (objects: TraceObject[]) => T | undefined): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found = find(traceObjects());
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no such trace in ${traceFile}.<n>`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const tensor = (name: string, values: readonly number[], shape = '1,16', dtype = 'INT32') => ({
  name,
  data: values.join(','),
  shape,
  dtype,
});

describe.each(transports)('%s: the TENSORS trace level', (transport) => {
  const client = newClient(transport);
  afterAll(async () => {
    await client.updateTraceSettings({
      trace_level: ['OFF'],
      trace_rate: '1000',
      log_frequency: '0',
      trace_count: '-1',
    });
    await client.close();
  });

  it('knows where the server writes its trace file', () => {
    expect(traceFile, 'TRITON_TRACE_FILE (see README)').not.toBe('');
  });

  it('with TIMESTAMPS: inputs when queued, outputs when answered, in Triton’s layout', async () => {
    const settings = await client.updateTraceSettings({
      trace_level: ['TIMESTAMPS', 'TENSORS'],
      trace_rate: '1',
      log_frequency: '1',
      trace_count: '-1',
    });
    expect(settings.trace_level).toEqual(['TIMESTAMPS', 'TENSORS']);
    expect((await client.getTraceSettings()).trace_level).toEqual(['TIMESTAMPS', 'TENSORS']);
    const requestId = `conformance-tensors-${transport}-${process.pid}`;
    const a = Array.from({ length: 16 }, (_, i) => i);
    await client.infer(
      'simple',
      [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Int32Array.from(a) },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(3) },
      ],
      { requestId },
    );
    await client.updateTraceSettings({ trace_level: ['OFF'] });
    const trace = await waitFor((objects) => {
      const id = objects.find((o) => o.request_id === requestId)?.id;
      const mine = objects.filter((o) => o.id === id);
      return mine.filter((o) => o.activity !== undefined).length >= 4 ? mine : undefined;
    });
    const byActivity = (activity: string) =>
      Object.fromEntries(
        trace.filter((o) => o.activity === activity).map((o) => [o.tensor?.name ?? '', o.tensor]),
      );
    expect(trace.find((o) => o.model_name !== undefined)).toMatchObject({ model_name: 'simple' });
    expect(byActivity('TENSOR_QUEUE_INPUT')).toEqual({
      INPUT0: tensor('INPUT0', a),
      INPUT1: tensor('INPUT1', new Array<number>(16).fill(3)),
    });
    expect(byActivity('TENSOR_BACKEND_OUTPUT')).toEqual({
      OUTPUT0: tensor(
        'OUTPUT0',
        a.map((v) => v + 3),
      ),
      OUTPUT1: tensor(
        'OUTPUT1',
        a.map((v) => v - 3),
      ),
    });
    expect(trace.some((o) => o.timestamps?.[0]?.name === 'QUEUE_START')).toBe(true);
  });

  it('alone: the trace has the tensors, no timestamps and no model object', async () => {
    const settings = await client.updateTraceSettings({
      trace_level: ['TENSORS'],
      trace_rate: '1',
      log_frequency: '1',
    });
    expect(settings.trace_level).toEqual(['TENSORS']);
    // A value no other case sends: it finds this request's trace.
    const mark = transport === 'http' ? 7001 : 7002;
    await client.infer('simple', [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(mark) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(1) },
    ]);
    await client.updateTraceSettings({ trace_level: ['OFF'] });
    const trace = await waitFor((objects) => {
      const id = objects.find(
        (o) => o.activity === 'TENSOR_QUEUE_INPUT' && o.tensor?.data === new Array(16).fill(mark).join(','),
      )?.id;
      const mine = objects.filter((o) => o.id === id);
      return mine.length >= 4 ? mine : undefined;
    });
    expect(trace.every((o) => o.activity !== undefined && o.timestamps === undefined)).toBe(true);
    expect(trace.map((o) => `${o.activity}:${o.tensor?.name}`).sort()).toEqual([
      'TENSOR_BACKEND_OUTPUT:OUTPUT0',
      'TENSOR_BACKEND_OUTPUT:OUTPUT1',
      'TENSOR_QUEUE_INPUT:INPUT0',
      'TENSOR_QUEUE_INPUT:INPUT1',
    ]);
  });
});
