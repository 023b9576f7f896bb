/**
 * Prometheus metrics with Triton's names on `--metrics-port` (default 8002).
 * @packageDocumentation
 */
export * from './render.js';
export * from './server.js';
export * from './system.js';
