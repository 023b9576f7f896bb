/**
 * Request tracing as tritonserver does it in `triton` mode (`TIMESTAMPS` and `TENSORS` levels): the
 * trace settings (global and per model), sampling, and Triton's JSON trace file.
 *
 * - Settings: a model's settings fall back, key by key, to the global ones until set for the model;
 *   `null` clears a key; the global ones fall back to their startup values (`--trace-config`). A
 *   setting that cannot trace (`trace file name is not given`, `sample rate must be non-zero`) is
 *   refused unless it turns tracing off: `Attempting to set invalid trace setting :<reason>`.
 * - Sampling: every `rate`-th request of a setting is traced while `count` (remaining traces,
 *   reported live by the settings API) is not 0.
 * - Output: a trace is a list of objects, `{"id","model_name","model_version"[,"request_id"][,"parent_id"]}`
 *   (`parent_id`: the trace of an ensemble step names its ensemble's trace) then one
 *   `{"id","timestamps":[{"name","ns"}]}` per activity (`TIMESTAMPS`), and with `TENSORS` one
 *   `{"id","activity","tensor":{…}}` per input when the request is queued (`TENSOR_QUEUE_INPUT`) and
 *   per output when its response is sent (`TENSOR_BACKEND_OUTPUT`; `trace-tensors.ts`). As in
 *   tritonserver, a `TENSORS`-only trace has no timestamps and so no model object. Traces collect in memory and are written as
 *   tritonserver writes them: every `log_frequency` traces (and when `count` runs out) to
 *   `<file>.<n>` (n = 0, 1, …, each a JSON array), the rest when the setting is replaced or the
 *   server stops: to `<file>.<n>` when `log_frequency` is set, else appended to `<file>` (one JSON
 *   array, closed at shutdown). Timestamps are `process.hrtime.bigint()` (monotonic ns), like
 *   Triton's steady clock.
 * @packageDocumentation
 */
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';

import type { PackedTensor } from '@tritonserver-ts/protocol';

import { invalidArg } from '../common/errors.js';
import type { RequestTrace } from '../common/request-trace.js';
import type { Logger } from './logging.js';
import { traceTensorObject, type TensorActivity } from './trace-tensors.js';
import {
  initialTraceValues,
  traceSettingsObject,
  tracesTensors,
  tracesTimestamps,
  type TraceSettings,
  type TraceSettingsUpdate,
  type TraceValues,
} from './trace.js';

/** One trace file (shared by every setting that names it). */
class TraceFile {
  readonly path: string;
  readonly #logger: Logger;
  #index = 0;
  #fd: number | undefined;
  #closed = false;

  constructor(path: string, logger: Logger) {
    this.path = path;
    this.#logger = logger;
  }

  /** Writes `content` (comma-separated trace objects) to `<path>.<n>`, or appends it to `<path>`. */
  save(content: string, indexed: boolean): void {
    if (this.#closed) return;
    try {
      if (indexed) {
        writeFileSync(`${this.path}.${this.#index++}`, `[${content}]`);
        return;
      }
      if (this.#fd === undefined) {
        this.#fd = openSync(this.path, 'w');
        writeSync(this.#fd, '[');
      } else writeSync(this.#fd, ',');
      writeSync(this.#fd, content);
    } catch (error) {
      this.#logger.error(`failed creating trace file: ${(error as Error).message}`);
    }
  }

  /** Closes the JSON array of `<path>` (when anything was written to it). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#fd === undefined) return;
    try {
      writeSync(this.#fd, ']');
      closeSync(this.#fd);
    } catch (error) {
      this.#logger.error(`failed closing trace file: ${(error as Error).message}`);
    }
  }
}

type Specified = Record<'level' | 'rate' | 'count' | 'logFrequency' | 'file', boolean>;

const NONE_SPECIFIED: Specified = {
  level: false,
  rate: false,
  count: false,
  logFrequency: false,
  file: false,
};

/** One trace setting in effect: its values, its sampling state and the traces not yet written. */
class TraceSetting {
  readonly values: Readonly<TraceValues>;
  readonly specified: Readonly<Specified>;
  /** Why this setting cannot trace ('' when it can, apart from `count`). */
  readonly invalidReason: string;
  /** Traces still to collect (-1: no limit). */
  count: number;
  readonly #file: TraceFile | undefined;
  #sampled = 0;
  #collected = 0;
  #pending: string[] = [];
  /** Traces collected since the last write (empty ones included, as tritonserver counts them). */
  #inStream = 0;
  #active = 0;
  #retired = false;

  constructor(values: TraceValues, specified: Specified, file: TraceFile | undefined) {
    this.values = { ...values };
    this.specified = { ...specified };
    this.count = values.count;
    this.#file = file;
    this.invalidReason =
      values.level === 'OFF'
        ? 'tracing is disabled'
        : values.rate === 0
          ? 'sample rate must be non-zero'
          : values.file === ''
            ? 'trace file name is not given'
            : '';
  }

  get valid(): boolean {
    return this.invalidReason === '' && this.count !== 0;
  }

  /** A child trace of a traced request (an ensemble step): traced whatever the rate and count. */
  adopt(): void {
    this.#sampled += 1;
    this.#active += 1;
  }

  /** Counts one request; true when it is to be traced. */
  sample(): boolean {
    if (!this.valid || this.#retired) return false;
    this.#sampled += 1;
    if (this.#sampled % this.values.rate !== 0) return false;
    if (this.count > 0) this.count -= 1;
    this.#active += 1;
    return true;
  }

  /** Takes a finished trace (its objects, comma-separated) and writes when tritonserver would. */
  finished(trace: string): void {
    this.#active -= 1;
    this.#collected += 1;
    this.#inStream += 1;
    if (trace !== '') this.#pending.push(trace);
    const countDone = this.count === 0 && this.#collected === this.#sampled;
    const frequencyDone = this.values.logFrequency !== 0 && this.#inStream >= this.values.logFrequency;
    if (countDone || frequencyDone) this.#flush(true);
    if (this.#retired && this.#active === 0) this.#flush(this.values.logFrequency !== 0);
  }

  /** No longer used for new requests: writes what is left once its traces have finished. */
  retire(force = false): void {
    this.#retired = true;
    if (this.#active === 0 || force) this.#flush(this.values.logFrequency !== 0);
  }

  #flush(indexed: boolean): void {
    this.#inStream = 0;
    if (this.#pending.length === 0) return;
    const content = this.#pending.join(',');
    this.#pending = [];
    this.#file?.save(content, indexed);
  }
}

/**
 * One request being traced. Front ends capture their timestamps (`HTTP_RECV_START`, …), the core
 * and the scheduler theirs; {@link ActiveTrace.finish} hands the trace over for writing.
 */
export class ActiveTrace implements RequestTrace {
  /** The trace id (1, 2, … in sampling order). */
  readonly id: number;
  /** The id of the trace this one was spawned from (an ensemble's, for its steps), if any. */
  readonly parentId: number | undefined;
  readonly #setting: TraceSetting;
  readonly #nextId: () => number;
  readonly #parts: string[] = [];
  #done = false;

  constructor(id: number, setting: TraceSetting, nextId: () => number, parentId?: number) {
    this.id = id;
    this.parentId = parentId;
    this.#setting = setting;
    this.#nextId = nextId;
  }

  /**
   * A trace for a request this traced request sends (Triton's `SpawnChildTrace`: an ensemble's
   * steps): its own id, the same settings and file, its parent's id in its model object. The caller
   * finishes it.
   */
  spawnChild(): ActiveTrace {
    this.#setting.adopt();
    return new ActiveTrace(this.#nextId(), this.#setting, this.#nextId, this.id);
  }

  /** Records activity `name` at `ns` (`process.hrtime.bigint()`), at the `TIMESTAMPS` level. */
  capture(name: string, ns: bigint): void {
    if (this.#done || !tracesTimestamps(this.#setting.values.level)) return;
    this.#parts.push(`{"id":${this.id},"timestamps":[{"name":${JSON.stringify(name)},"ns":${ns}}]}`);
  }

  /** The core started the request on `model` version `version`: its description, then REQUEST_START. */
  requestStart(model: string, version: number, requestId: string | undefined, ns: bigint): void {
    if (this.#done || !tracesTimestamps(this.#setting.values.level)) return;
    const id =
      requestId !== undefined && requestId !== '' ? `,"request_id":${JSON.stringify(requestId)}` : '';
    const parent = this.parentId !== undefined ? `,"parent_id":${this.parentId}` : '';
    this.#parts.push(
      `{"id":${this.id},"model_name":${JSON.stringify(model)},"model_version":${version}${id}${parent}}`,
    );
    this.capture('REQUEST_START', ns);
  }

  /** Whether the trace records tensors (the `TENSORS` level). */
  get tensors(): boolean {
    return !this.#done && tracesTensors(this.#setting.values.level);
  }

  /** Records `tensors` as `activity` (inputs when queued, outputs when answered), at the `TENSORS` level. */
  captureTensors(activity: TensorActivity, tensors: Iterable<PackedTensor>): void {
    if (!this.tensors) return;
    for (const tensor of tensors) this.#parts.push(traceTensorObject(this.id, activity, tensor));
  }

  /** The request is over (its response sent or abandoned). Idempotent. */
  finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#setting.finished(this.#parts.join(','));
  }
}

/** Trace settings, sampling and trace files of one server. */
export class TraceManager {
  readonly #logger: Logger;
  /** Startup values: what a cleared global key falls back to. */
  readonly #defaults: TraceSetting;
  #global: TraceSetting;
  readonly #models = new Map<string, TraceSetting>();
  /** Models with some keys of their own and the rest mirroring the global setting. */
  readonly #mirroring = new Set<string>();
  readonly #files = new Map<string, TraceFile>();
  #nextId = 1;
  #closed = false;

  /** @throws TraceConfigError on invalid initial settings */
  constructor(initial: Partial<TraceSettings>, logger: Logger) {
    this.#logger = logger;
    const values = initialTraceValues(initial);
    this.#defaults = new TraceSetting(values, NONE_SPECIFIED, undefined);
    this.#global = new TraceSetting(values, NONE_SPECIFIED, this.#file(values.file));
  }

  /**
   * Why tracing is on at startup but nothing will be traced (for a warning), e.g. `trace file name is
   * not given`; undefined when tracing is off or works.
   */
  get startupProblem(): string | undefined {
    const g = this.#defaults;
    return g.values.level !== 'OFF' && g.invalidReason !== '' ? g.invalidReason : undefined;
  }

  /** The settings in effect for `model` (its own or the global ones), `count` live. */
  settings(model?: string): TraceSettings {
    const s = (model === undefined ? undefined : this.#models.get(model)) ?? this.#global;
    return traceSettingsObject({ ...s.values, count: s.count });
  }

  /** Applies an update to the global settings or to `model`'s; returns the settings in effect. */
  update(update: TraceSettingsUpdate, model?: string): TraceSettings {
    if (model !== undefined) this.#apply(model, update);
    else {
      this.#apply(undefined, update);
      // Models that mirror some global keys pick up the new global values.
      for (const name of [...this.#mirroring]) this.#apply(name, {});
    }
    return this.settings(model);
  }

  #apply(model: string | undefined, update: TraceSettingsUpdate): void {
    const current = model === undefined ? this.#global : this.#models.get(model);
    const fallback = model === undefined ? this.#defaults : this.#global;
    const values: TraceValues = { ...fallback.values, count: fallback.count };
    const specified = { ...NONE_SPECIFIED };
    const pick = <K extends 'level' | 'rate' | 'count' | 'logFrequency'>(
      key: K,
      given: TraceValues[K] | null | undefined,
      own: TraceValues[K] | undefined,
    ): void => {
      specified[key] = given === null ? false : (current?.specified[key] ?? false) || given !== undefined;
      if (specified[key]) values[key] = (given ?? own) as TraceValues[K];
    };
    pick('level', update.level, current?.values.level);
    pick('rate', update.rate, current?.values.rate);
    pick('count', update.count, current?.count);
    pick('logFrequency', update.logFrequency, current?.values.logFrequency);
    // The file comes from the command line only.
    specified.file = current?.specified.file ?? false;
    if (specified.file && current !== undefined) values.file = current.values.file;

    const setting = new TraceSetting(values, specified, this.#file(values.file));
    if (!setting.valid && values.level !== 'OFF') {
      throw invalidArg(`Attempting to set invalid trace setting :${setting.invalidReason}`);
    }
    if (model === undefined) {
      this.#global = setting;
    } else {
      const all = Object.values(specified).every(Boolean);
      const none = !Object.values(specified).some(Boolean);
      if (none) {
        // Nothing of its own: the model simply uses the global setting.
        this.#mirroring.delete(model);
        this.#models.delete(model);
        current?.retire();
        return;
      }
      if (all) this.#mirroring.delete(model);
      else this.#mirroring.add(model);
      this.#models.set(model, setting);
    }
    current?.retire();
  }

  #file(path: string): TraceFile | undefined {
    if (path === '') return undefined;
    let file = this.#files.get(path);
    if (file === undefined) {
      file = new TraceFile(path, this.#logger);
      this.#files.set(path, file);
    }
    return file;
  }

  /** A trace for the next request to `model`, or undefined when this request is not traced. */
  sample(model: string): ActiveTrace | undefined {
    if (this.#closed) return undefined;
    const setting = this.#models.get(model) ?? this.#global;
    return setting.sample() ? new ActiveTrace(this.#nextId++, setting, () => this.#nextId++) : undefined;
  }

  /** Writes every collected trace and closes the trace files (server shutdown). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#global.retire(true);
    for (const s of this.#models.values()) s.retire(true);
    for (const f of this.#files.values()) f.close();
  }
}
