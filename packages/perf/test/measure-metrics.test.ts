/** Pure: GPU gauges out of Prometheus text, summarised per GPU as perf_analyzer does. */
import { describe, expect, it } from 'vitest';

import { metricsHref, missingFamilies, parseGpuMetrics, summarizeMetrics } from '../src/measure/metrics.js';
import { generatorCost } from '../src/measure/generator-cost.js';

const scrape = (
  util: number,
  power: number,
  used: number,
  total: number,
): string => `# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)
# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-a"} ${util}
nv_gpu_utilization{gpu_uuid="GPU-b"} ${util / 2}
nv_gpu_power_usage{gpu_uuid="GPU-a"} ${power}
nv_gpu_memory_used_bytes{gpu_uuid="GPU-a"} ${used}
nv_gpu_memory_total_bytes{gpu_uuid="GPU-a"} ${total}
nv_inference_count{model="simple",version="1"} 12
`;

describe('parseGpuMetrics', () => {
  it('reads the four GPU families by gpu_uuid and ignores the rest', () => {
    const s = parseGpuMetrics(scrape(0.5, 70, 1000, 8000));
    expect([...s.gpuUtilization]).toEqual([
      ['GPU-a', 0.5],
      ['GPU-b', 0.25],
    ]);
    expect(s.gpuPowerUsage.get('GPU-a')).toBe(70);
    expect(s.gpuMemoryUsedBytes.get('GPU-a')).toBe(1000);
    expect(s.gpuMemoryTotalBytes.get('GPU-a')).toBe(8000);
    expect(missingFamilies(s)).toEqual([]);
  });

  it('a CPU-only server: empty maps, every family missing', () => {
    const s = parseGpuMetrics('nv_cpu_utilization 0.3\nnv_inference_count{model="m",version="1"} 3\n');
    expect(s.gpuUtilization.size).toBe(0);
    expect(missingFamilies(s)).toEqual([
      'nv_gpu_utilization',
      'nv_gpu_power_usage',
      'nv_gpu_memory_used_bytes',
      'nv_gpu_memory_total_bytes',
    ]);
  });
});

describe('summarizeMetrics', () => {
  it('averages utilisation and power, takes the max of memory used and the first total', () => {
    const m = summarizeMetrics([
      parseGpuMetrics(scrape(0.2, 50, 1000, 8000)),
      parseGpuMetrics(scrape(0.6, 70, 3000, 9000)),
      parseGpuMetrics(scrape(0.4, 90, 2000, 9000)),
    ]);
    expect(m.gpuUtilization['GPU-a']).toBeCloseTo(0.4, 10);
    expect(m.gpuUtilization['GPU-b']).toBeCloseTo(0.2, 10);
    expect(m.gpuPowerUsage['GPU-a']).toBeCloseTo(70, 10);
    expect(m.gpuMemoryUsedBytes['GPU-a']).toBe(3000);
    expect(m.gpuMemoryTotalBytes['GPU-a']).toBe(8000);
    expect(m.scrapes).toBe(3);
  });

  it("metricsHref adds http:// to perf_analyzer's scheme-less default", () => {
    expect(metricsHref('localhost:8002/metrics')).toBe('http://localhost:8002/metrics');
    expect(metricsHref('https://h/metrics')).toBe('https://h/metrics');
  });
});

describe('generatorCost', () => {
  it('CPU per request and utilisation, zeros instead of NaN', () => {
    expect(generatorCost(5000, 10_000, 50)).toEqual({
      cpuUs: 5000,
      cpuUsPerRequest: 100,
      cpuUtilization: 0.5,
    });
    expect(generatorCost(0, 0, 0)).toEqual({ cpuUs: 0, cpuUsPerRequest: 0, cpuUtilization: 0 });
  });
});
