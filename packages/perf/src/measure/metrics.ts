/**
 * `--collect-metrics`: scrapes the server's Prometheus endpoint every `--metrics-interval` ms while
 * a level is measured and summarises the GPU gauges per `gpu_uuid` as perf_analyzer does
 * (utilisation and power averaged, memory used: maximum, memory total: first). A CPU-only server
 * has no `nv_gpu_*` families: the summary is empty (with perf_analyzer's one-time warnings).
 * @packageDocumentation
 */
import { PerfError } from '../errors.js';
import type { MetricsSummary } from '../types.js';

/** One scrape: the four GPU gauges by GPU uuid. */
export interface GpuMetricsScrape {
  readonly gpuUtilization: ReadonlyMap<string, number>;
  readonly gpuPowerUsage: ReadonlyMap<string, number>;
  readonly gpuMemoryUsedBytes: ReadonlyMap<string, number>;
  readonly gpuMemoryTotalBytes: ReadonlyMap<string, number>;
}

const FAMILIES = {
  nv_gpu_utilization: 'gpuUtilization',
  nv_gpu_power_usage: 'gpuPowerUsage',
  nv_gpu_memory_used_bytes: 'gpuMemoryUsedBytes',
  nv_gpu_memory_total_bytes: 'gpuMemoryTotalBytes',
} as const;

type Family = keyof typeof FAMILIES;

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)/;
const UUID_LABEL = /(?:^|,)\s*gpu_uuid\s*=\s*"((?:[^"\\]|\\.)*)"/;

/** Reads the GPU gauges out of a Prometheus text exposition. */
export function parseGpuMetrics(text: string): GpuMetricsScrape {
  const maps: Record<Family, Map<string, number>> = {
    nv_gpu_utilization: new Map(),
    nv_gpu_power_usage: new Map(),
    nv_gpu_memory_used_bytes: new Map(),
    nv_gpu_memory_total_bytes: new Map(),
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line.trim());
    if (m === null) continue;
    const name = m[1] as string;
    if (!(name in FAMILIES)) continue;
    const uuid = UUID_LABEL.exec(m[2] ?? '')?.[1];
    const value = Number(m[3]);
    if (uuid === undefined || !Number.isFinite(value)) continue;
    maps[name as Family].set(uuid, value);
  }
  return {
    gpuUtilization: maps.nv_gpu_utilization,
    gpuPowerUsage: maps.nv_gpu_power_usage,
    gpuMemoryUsedBytes: maps.nv_gpu_memory_used_bytes,
    gpuMemoryTotalBytes: maps.nv_gpu_memory_total_bytes,
  };
}

/** Families missing from a scrape (perf_analyzer warns once per run: "Unable to parse ..."). */
export function missingFamilies(scrape: GpuMetricsScrape): string[] {
  return (Object.entries(FAMILIES) as [Family, keyof GpuMetricsScrape][])
    .filter(([, key]) => scrape[key].size === 0)
    .map(([family]) => family);
}

/** Summarises the scrapes of a level's reported windows (per GPU uuid). */
export function summarizeMetrics(scrapes: readonly GpuMetricsScrape[]): MetricsSummary {
  const average = (key: 'gpuUtilization' | 'gpuPowerUsage'): Record<string, number> => {
    const sums = new Map<string, { sum: number; n: number }>();
    for (const s of scrapes) {
      for (const [uuid, v] of s[key]) {
        const e = sums.get(uuid) ?? { sum: 0, n: 0 };
        e.sum += v;
        e.n += 1;
        sums.set(uuid, e);
      }
    }
    return Object.fromEntries([...sums].map(([uuid, e]) => [uuid, e.sum / e.n]));
  };
  const maxUsed: Record<string, number> = {};
  const firstTotal: Record<string, number> = {};
  for (const s of scrapes) {
    for (const [uuid, v] of s.gpuMemoryUsedBytes) maxUsed[uuid] = Math.max(maxUsed[uuid] ?? v, v);
    for (const [uuid, v] of s.gpuMemoryTotalBytes) if (!(uuid in firstTotal)) firstTotal[uuid] = v;
  }
  return {
    gpuUtilization: average('gpuUtilization'),
    gpuPowerUsage: average('gpuPowerUsage'),
    gpuMemoryUsedBytes: maxUsed,
    gpuMemoryTotalBytes: firstTotal,
    scrapes: scrapes.length,
  };
}

/** `--metrics-url` as a fetchable URL (perf_analyzer's default has no scheme). */
export function metricsHref(url: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`;
}

/** Scrapes a metrics endpoint on an interval until stopped; scrapes are handed over per window. */
export class MetricsScraper {
  readonly #href: string;
  readonly #intervalMs: number;
  readonly #onWarning: ((message: string) => void) | undefined;
  #scrapes: GpuMetricsScrape[] = [];
  #error: PerfError | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #inflight: Promise<void> | undefined;
  #warnedMissing = false;
  #warnedSlow = false;

  /**
   * @param url - `--metrics-url`
   * @param intervalMs - `--metrics-interval`
   * @param onWarning - perf_analyzer's warnings (missing GPU families, slow endpoint)
   */
  constructor(url: string, intervalMs: number, onWarning?: (message: string) => void) {
    this.#href = metricsHref(url);
    this.#intervalMs = Math.max(1, intervalMs);
    this.#onWarning = onWarning;
  }

  /** Starts scraping (the first scrape now). Idempotent. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#tick();
  }

  #tick(): void {
    if (!this.#running) return;
    const started = performance.now();
    this.#inflight = this.#scrapeOnce().finally(() => {
      this.#inflight = undefined;
      const took = performance.now() - started;
      if (took > this.#intervalMs && !this.#warnedSlow) {
        this.#warnedSlow = true;
        this.#onWarning?.(
          `WARNING: Triton metrics endpoint latency (${Math.floor(took)}ms) is larger than the querying interval (${this.#intervalMs}ms). Please try a larger querying interval via \`--triton-metrics-interval\`.`,
        );
      }
      if (this.#running && this.#error === undefined) {
        this.#timer = setTimeout(() => this.#tick(), Math.max(0, this.#intervalMs - took));
      }
    });
  }

  async #scrapeOnce(): Promise<void> {
    try {
      const response = await fetch(this.#href, { signal: AbortSignal.timeout(10_000) });
      if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
      const scrape = parseGpuMetrics(await response.text());
      const missing = missingFamilies(scrape);
      if (missing.length > 0 && !this.#warnedMissing) {
        this.#warnedMissing = true;
        for (const family of missing) this.#onWarning?.(`WARNING: Unable to parse '${family}' metric.`);
      }
      this.#scrapes.push(scrape);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.#error = new PerfError('SERVER', `failed to collect metrics from ${this.#href}: ${message}`, {
        cause: error,
      });
    }
  }

  /**
   * The scrapes taken since the last call.
   * @throws PerfError `SERVER` when a scrape failed
   */
  takeScrapes(): GpuMetricsScrape[] {
    if (this.#error !== undefined) throw this.#error;
    const taken = this.#scrapes;
    this.#scrapes = [];
    return taken;
  }

  /** Stops scraping and waits for a scrape in progress. Idempotent. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#inflight;
  }
}
