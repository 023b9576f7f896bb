#!/usr/bin/env node
// The `perf-analyzer-ts` command. It runs the compiled CLI (dist/cli/perf-cli.js). In a source checkout where the
// package has not been built yet (right after `npm ci`), it builds it first, once, with the
// monorepo's own build (turbo builds the workspace packages it depends on).
import { ensureBuilt } from './ensure-built.js';

const cli = ensureBuilt('perf-analyzer-ts', new URL('../dist/cli/perf-cli.js', import.meta.url));
await import(cli.href);
