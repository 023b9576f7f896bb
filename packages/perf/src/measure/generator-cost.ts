/**
 * The load generator's own CPU over the measured windows (`process.cpuUsage()` of this process):
 * the figure that shows whether the generator, not the server, limits a measurement.
 * @packageDocumentation
 */
import type { GeneratorCost } from '../types.js';

/** CPU µs (user + system) of this process since it started. */
export function cpuNowUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/**
 * The cost of `requests` requests that took `cpuUs` of CPU over `wallUs` of wall time.
 * Zero requests or zero time give zeros, never NaN.
 */
export function generatorCost(cpuUs: number, wallUs: number, requests: number): GeneratorCost {
  return {
    cpuUs,
    cpuUsPerRequest: requests > 0 ? cpuUs / requests : 0,
    cpuUtilization: wallUs > 0 ? cpuUs / wallUs : 0,
  };
}
