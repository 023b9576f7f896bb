/**
 * Host CPU utilisation and memory for `nv_cpu_utilization`, `nv_cpu_memory_total_bytes` and
 * `nv_cpu_memory_used_bytes`, read as Triton does on Linux (`/proc/stat`, `/proc/meminfo`: used =
 * MemTotal − MemAvailable; utilisation = busy share of all cores since the previous sample, with
 * idle + iowait counted as idle). Other platforms fall back to `node:os`.
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** One reading of the host. */
export interface SystemSample {
  /** 0.0 – 1.0 since the previous sample (0 on the first). */
  readonly cpuUtilization: number;
  readonly memoryTotalBytes: number;
  readonly memoryUsedBytes: number;
}

interface CpuTimes {
  readonly idle: number;
  readonly total: number;
}

function readCpuTimes(): CpuTimes {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    if (line.startsWith('cpu ')) {
      const v = line.trim().split(/\s+/).slice(1).map(Number);
      // user nice system idle iowait irq softirq steal (guest time is already in user/nice)
      const idle = (v[3] ?? 0) + (v[4] ?? 0);
      const total = v.slice(0, 8).reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
      return { idle, total };
    }
  } catch {
    // not Linux: fall through
  }
  let idle = 0;
  let total = 0;
  for (const c of os.cpus()) {
    idle += c.times.idle;
    total += c.times.idle + c.times.user + c.times.nice + c.times.sys + c.times.irq;
  }
  return { idle, total };
}

function readMemory(): { total: number; used: number } {
  try {
    const text = readFileSync('/proc/meminfo', 'utf8');
    const kb = (key: string): number | undefined => {
      const m = new RegExp(`^${key}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
      return m?.[1] === undefined ? undefined : Number(m[1]) * 1024;
    };
    const total = kb('MemTotal');
    const available = kb('MemAvailable');
    if (total !== undefined && available !== undefined) return { total, used: total - available };
  } catch {
    // not Linux: fall through
  }
  const total = os.totalmem();
  return { total, used: total - os.freemem() };
}

/** Samples the host; each call reports CPU utilisation since the previous call. */
export class SystemSampler {
  private previous: CpuTimes = readCpuTimes();

  sample(): SystemSample {
    const now = readCpuTimes();
    const dTotal = now.total - this.previous.total;
    const dIdle = now.idle - this.previous.idle;
    this.previous = now;
    const cpuUtilization = dTotal > 0 ? Math.min(1, Math.max(0, (dTotal - dIdle) / dTotal)) : 0;
    const mem = readMemory();
    return { cpuUtilization, memoryTotalBytes: mem.total, memoryUsedBytes: mem.used };
  }
}

/** Triton's default `--metrics-interval-ms`. */
export const DEFAULT_METRICS_INTERVAL_MS = 2000;

/**
 * Polls the host in the background as Triton's metrics thread does (it wakes every half
 * `--metrics-interval-ms`); a scrape reads the last poll, so `nv_cpu_utilization` is the busy share
 * between the last two polls, whatever the scrape rate. The first reading is taken at once.
 */
export class SystemPoller {
  private readonly sampler = new SystemSampler();
  private current: SystemSample;
  private readonly timer: NodeJS.Timeout;

  /** @param intervalMs - `--metrics-interval-ms` (polls every half of it, at least every 1 ms). */
  constructor(intervalMs: number = DEFAULT_METRICS_INTERVAL_MS) {
    this.current = this.sampler.sample();
    this.timer = setInterval(
      () => {
        this.current = this.sampler.sample();
      },
      Math.max(1, Math.floor(intervalMs / 2)),
    );
    this.timer.unref();
  }

  /** The last reading. */
  get latest(): SystemSample {
    return this.current;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
