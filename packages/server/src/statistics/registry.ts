/**
 * All model versions' statistics, by model name and version.
 *
 * Entries outlive schedulers: a version reloaded in `poll` mode keeps counting into the same object,
 * as Triton keeps a version's statistics while it is loaded. The core removes an entry when the
 * version is unloaded for good.
 * @packageDocumentation
 */
import type { MetricsConfig } from './metrics-config.js';
import { ModelStatistics, type ModelStatisticsSnapshot } from './model-statistics.js';

/** Registry of {@link ModelStatistics}, one per model version. */
export class StatisticsRegistry {
  private readonly models = new Map<string, Map<string, ModelStatistics>>();
  private readonly now: (() => number) | undefined;
  /** The server's `--metrics-config`, given to every entry. */
  readonly metricsConfig: MetricsConfig | undefined;

  /**
   * @param options - `now` (ms since the epoch) is passed to every created entry (tests);
   *   `metrics` is the server's `--metrics-config`.
   */
  constructor(options: { now?: () => number; metrics?: MetricsConfig } = {}) {
    this.now = options.now;
    this.metricsConfig = options.metrics;
  }

  /** The statistics of `name` / `version`, created (all zero) on first use. */
  get(name: string, version: string): ModelStatistics {
    let versions = this.models.get(name);
    if (versions === undefined) {
      versions = new Map();
      this.models.set(name, versions);
    }
    let stats = versions.get(version);
    if (stats === undefined) {
      stats = new ModelStatistics(name, version, {
        ...(this.now !== undefined ? { now: this.now } : {}),
        ...(this.metricsConfig !== undefined ? { metrics: this.metricsConfig } : {}),
      });
      versions.set(version, stats);
    }
    return stats;
  }

  /** Whether statistics exist for `name` (and `version`, when given). */
  has(name: string, version?: string): boolean {
    const versions = this.models.get(name);
    if (versions === undefined) return false;
    return version === undefined ? true : versions.has(version);
  }

  /** Forgets a version (or every version of `name` when `version` is omitted). */
  delete(name: string, version?: string): void {
    if (version === undefined) {
      this.models.delete(name);
      return;
    }
    const versions = this.models.get(name);
    versions?.delete(version);
    if (versions?.size === 0) this.models.delete(name);
  }

  /**
   * Snapshots, sorted by model name then numeric version. `name` / `version` narrow the result
   * (an unknown name or version yields `[]`; the core decides which error to answer with).
   */
  snapshot(name?: string, version?: string): ModelStatisticsSnapshot[] {
    const names = name === undefined ? [...this.models.keys()].sort() : [name];
    const out: ModelStatisticsSnapshot[] = [];
    for (const n of names) {
      const versions = this.models.get(n);
      if (versions === undefined) continue;
      const keys = version === undefined ? [...versions.keys()].sort(compareVersions) : [version];
      for (const v of keys) {
        const stats = versions.get(v);
        if (stats !== undefined) out.push(stats.snapshot());
      }
    }
    return out;
  }
}

function compareVersions(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  if (Number.isFinite(na) && Number.isFinite(nb) && na !== nb) return na - nb;
  return a < b ? -1 : a > b ? 1 : 0;
}
