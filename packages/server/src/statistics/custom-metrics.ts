/**
 * Custom metric families that models create (the Python backend's `pb_utils.MetricFamily` /
 * `Metric`), kept by the server and rendered on `/metrics` beside Triton's own families, with the
 * rules and messages of Triton's metrics API underneath (prometheus-cpp's registry and families,
 * Triton core's `TRITONSERVER_Metric*` checks):
 *
 * - a family name may be registered again with the same kind (the first description stays); with
 *   another kind it is refused;
 * - metrics of a family are keyed by their label set: creating one with labels that already exist
 *   refers to the same underlying metric (reference-counted; it leaves `/metrics` with its last
 *   reference);
 * - counters only go up, counters and histograms cannot be set, only histograms observe, a
 *   histogram has no single value; histogram buckets must be strictly increasing.
 *
 * Every handle belongs to an owner (one model instance), so everything an instance created is
 * released when it goes away.
 * @packageDocumentation
 */
import { Histogram, type HistogramSnapshot } from './histogram.js';

/** A family's kind (`pb_utils.MetricFamily.COUNTER` / `GAUGE` / `HISTOGRAM`). */
export type CustomMetricKind = 'counter' | 'gauge' | 'histogram';

/** A refused metrics API call; `message` is the text the model sees. */
export class CustomMetricError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CustomMetricError';
  }
}

const KIND_NAMES: Readonly<Record<CustomMetricKind, string>> = {
  counter: 'TRITONSERVER_METRIC_KIND_COUNTER',
  gauge: 'TRITONSERVER_METRIC_KIND_GAUGE',
  histogram: 'TRITONSERVER_METRIC_KIND_HISTOGRAM',
};

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

interface MetricCell {
  readonly labels: Readonly<Record<string, string>>;
  value: number;
  readonly histogram: Histogram | undefined;
  refs: number;
}

interface FamilyRecord {
  readonly name: string;
  readonly description: string;
  readonly kind: CustomMetricKind;
  /** By label key (sorted `name=value` pairs). */
  readonly metrics: Map<string, MetricCell>;
}

interface FamilyHandle {
  readonly family: FamilyRecord;
  /** Set when the model deleted its `MetricFamily` object. */
  deleted: boolean;
}

interface MetricHandle {
  readonly family: FamilyHandle;
  readonly key: string;
  readonly cell: MetricCell;
}

/** One metric of a rendered family. */
export interface CustomMetricSample {
  /** Sorted by name, as prometheus-cpp prints them. */
  readonly labels: readonly (readonly [string, string])[];
  /** Counter or gauge value. */
  readonly value: number;
  /** Histogram state (histograms only). */
  readonly histogram?: HistogramSnapshot;
}

/** A family with at least one metric, as `/metrics` shows it. */
export interface CustomFamilySnapshot {
  readonly name: string;
  readonly description: string;
  readonly kind: CustomMetricKind;
  readonly metrics: readonly CustomMetricSample[];
}

/** The server's own metric families and their kinds (names a custom family cannot take). */
export const SERVER_METRIC_FAMILIES: ReadonlyMap<string, CustomMetricKind> = new Map([
  ...(
    [
      'nv_inference_request_success',
      'nv_inference_request_failure',
      'nv_inference_count',
      'nv_inference_exec_count',
      'nv_inference_request_duration_us',
      'nv_inference_queue_duration_us',
      'nv_inference_compute_input_duration_us',
      'nv_inference_compute_infer_duration_us',
      'nv_inference_compute_output_duration_us',
      'nv_cache_num_hits_per_model',
      'nv_cache_hit_duration_per_model',
      'nv_cache_num_misses_per_model',
      'nv_cache_miss_duration_per_model',
    ] as const
  ).map((n) => [n, 'counter'] as const),
  ...(
    [
      'nv_inference_pending_request_count',
      'nv_cpu_utilization',
      'nv_cpu_memory_total_bytes',
      'nv_cpu_memory_used_bytes',
    ] as const
  ).map((n) => [n, 'gauge'] as const),
  ['nv_inference_first_response_histogram_ms', 'histogram'] as const,
]);

/** The message when a metric is used after its family was deleted (Triton's Python backend). */
export const FAMILY_DELETED_MESSAGE =
  "Invalid metric operation as the corresponding 'MetricFamily' has been deleted. The 'MetricFamily' object should be deleted AFTER its corresponding 'Metric' objects have been deleted.";

function labelKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );
}

/** See the module documentation. */
export class CustomMetricsRegistry {
  /** Families in registration order (never removed, as in Triton's registry). */
  private readonly families = new Map<string, FamilyRecord>();
  /** Names the server's own families use, with their kinds. */
  private readonly reserved: ReadonlyMap<string, CustomMetricKind>;
  private nextHandle = 1;
  private readonly familyHandles = new Map<number, { owner: unknown; handle: FamilyHandle }>();
  private readonly metricHandles = new Map<number, { owner: unknown; handle: MetricHandle }>();

  /** @param reserved - The server's own family names and kinds (a custom family cannot take them). */
  constructor(reserved: ReadonlyMap<string, CustomMetricKind> = SERVER_METRIC_FAMILIES) {
    this.reserved = reserved;
  }

  /**
   * `MetricFamily(name, description, kind)`: a handle on the family `name` (created on first use).
   * @throws CustomMetricError for an invalid name or a name registered with another kind.
   */
  createFamily(owner: unknown, name: string, description: string, kind: CustomMetricKind): number {
    if (!METRIC_NAME.test(name)) throw new CustomMetricError('Invalid metric name');
    const reservedKind = this.reserved.get(name);
    if (reservedKind !== undefined && reservedKind !== kind) {
      throw new CustomMetricError('Family name already exists with different type');
    }
    if (reservedKind !== undefined) {
      throw new CustomMetricError(`Family name '${name}' is one of the server's own metric families`);
    }
    let family = this.families.get(name);
    if (family === undefined) {
      family = { name, description, kind, metrics: new Map() };
      this.families.set(name, family);
    } else if (family.kind !== kind) {
      throw new CustomMetricError('Family name already exists with different type');
    }
    const id = this.nextHandle++;
    this.familyHandles.set(id, { owner, handle: { family, deleted: false } });
    return id;
  }

  /**
   * `family.Metric(labels, buckets)`: a handle on the family's metric with these labels.
   * @throws CustomMetricError for a bad label name, missing or unsorted histogram buckets, or a
   *   deleted family.
   */
  createMetric(
    owner: unknown,
    familyId: number,
    labels: Readonly<Record<string, string>>,
    buckets?: readonly number[],
  ): number {
    const fh = this.familyHandle(owner, familyId);
    if (fh.deleted) throw new CustomMetricError(FAMILY_DELETED_MESSAGE);
    for (const name of Object.keys(labels)) {
      if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new CustomMetricError('Invalid label name');
    }
    const family = fh.family;
    const key = labelKey(labels);
    let cell = family.metrics.get(key);
    if (cell === undefined) {
      let histogram: Histogram | undefined;
      if (family.kind === 'histogram') {
        if (buckets === undefined) {
          throw new CustomMetricError('Missing required buckets for histogram metrics');
        }
        try {
          histogram = new Histogram(buckets);
        } catch (error) {
          throw new CustomMetricError((error as Error).message);
        }
      }
      cell = { labels: { ...labels }, value: 0, histogram, refs: 0 };
      family.metrics.set(key, cell);
    }
    cell.refs += 1;
    const id = this.nextHandle++;
    this.metricHandles.set(id, { owner, handle: { family: fh, key, cell } });
    return id;
  }

  /** `metric.increment(value)`. */
  increment(owner: unknown, metricId: number, value: number): void {
    const { family, cell } = this.live(owner, metricId);
    const kind = family.family.kind;
    if (kind === 'histogram') throw new CustomMetricError(`${KIND_NAMES[kind]} does not support Increment`);
    if (kind === 'counter' && value < 0) {
      throw new CustomMetricError(
        'TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by non-negative values.',
      );
    }
    cell.value += value;
  }

  /** `metric.set(value)` (gauges). */
  set(owner: unknown, metricId: number, value: number): void {
    const { family, cell } = this.live(owner, metricId);
    const kind = family.family.kind;
    if (kind !== 'gauge') throw new CustomMetricError(`${KIND_NAMES[kind]} does not support Set`);
    cell.value = value;
  }

  /** `metric.observe(value)` (histograms). */
  observe(owner: unknown, metricId: number, value: number): void {
    const { family, cell } = this.live(owner, metricId);
    const kind = family.family.kind;
    if (kind !== 'histogram' || cell.histogram === undefined) {
      throw new CustomMetricError(`${KIND_NAMES[kind]} does not support Observe`);
    }
    cell.histogram.observe(value);
  }

  /** `metric.value()` (counters and gauges). */
  value(owner: unknown, metricId: number): number {
    const { family, cell } = this.live(owner, metricId);
    const kind = family.family.kind;
    if (kind === 'histogram') throw new CustomMetricError(`${KIND_NAMES[kind]} does not support Value`);
    return cell.value;
  }

  /** Drops a metric handle (the model's `Metric` object went away). */
  deleteMetric(owner: unknown, metricId: number): void {
    const entry = this.metricHandles.get(metricId);
    if (entry === undefined || entry.owner !== owner) return;
    this.metricHandles.delete(metricId);
    const { family, key, cell } = entry.handle;
    cell.refs -= 1;
    if (cell.refs <= 0 && family.family.metrics.get(key) === cell) family.family.metrics.delete(key);
  }

  /**
   * Drops a family handle and the metrics created through it (as the Python backend clears them
   * when a `MetricFamily` object goes away); their handles fail from now on. The family name stays
   * registered, as in Triton's registry.
   */
  deleteFamily(owner: unknown, familyId: number): void {
    const entry = this.familyHandles.get(familyId);
    if (entry === undefined || entry.owner !== owner) return;
    this.familyHandles.delete(familyId);
    entry.handle.deleted = true;
    for (const [id, m] of [...this.metricHandles]) {
      if (m.handle.family === entry.handle) this.deleteMetric(owner, id);
    }
  }

  /** Releases every handle of `owner` (a model instance that stopped). */
  release(owner: unknown): void {
    for (const [id, entry] of [...this.metricHandles])
      if (entry.owner === owner) this.deleteMetric(owner, id);
    for (const [id, entry] of [...this.familyHandles])
      if (entry.owner === owner) this.deleteFamily(owner, id);
  }

  /** Families with at least one metric, in registration order. */
  snapshot(): CustomFamilySnapshot[] {
    const out: CustomFamilySnapshot[] = [];
    for (const family of this.families.values()) {
      if (family.metrics.size === 0) continue;
      out.push({
        name: family.name,
        description: family.description,
        kind: family.kind,
        metrics: [...family.metrics.values()].map((cell) => ({
          labels: Object.keys(cell.labels)
            .sort()
            .map((k) => [k, cell.labels[k] as string] as const),
          value: cell.value,
          ...(cell.histogram !== undefined ? { histogram: cell.histogram.snapshot() } : {}),
        })),
      });
    }
    return out;
  }

  private familyHandle(owner: unknown, id: number): FamilyHandle {
    const entry = this.familyHandles.get(id);
    if (entry === undefined || entry.owner !== owner) throw new CustomMetricError(FAMILY_DELETED_MESSAGE);
    return entry.handle;
  }

  private live(owner: unknown, id: number): MetricHandle {
    const entry = this.metricHandles.get(id);
    if (entry === undefined || entry.owner !== owner || entry.handle.family.deleted) {
      throw new CustomMetricError(FAMILY_DELETED_MESSAGE);
    }
    return entry.handle;
  }
}
