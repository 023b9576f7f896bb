import { describe, expect, it } from 'vitest';

import {
  applyHeapGrowingPercent,
  DEFAULT_HEAP_GROWING_PERCENT,
  HEAP_GROWING_PERCENT_ENV,
} from '../src/index.js';

/** Runs `applyHeapGrowingPercent` with a recording setter; returns what it returned and set. */
function apply(env: NodeJS.ProcessEnv, execArgv: readonly string[] = []): { result: unknown; set: string[] } {
  const set: string[] = [];
  const result = applyHeapGrowingPercent({ env, execArgv, setFlags: (flags) => set.push(flags) });
  return { result, set };
}

describe('applyHeapGrowingPercent', () => {
  it('applies 300 % (the limit at 4x the live heap) by default', () => {
    expect(DEFAULT_HEAP_GROWING_PERCENT).toBe(300);
    expect(apply({})).toEqual({ result: 300, set: ['--heap-growing-percent=300'] });
    expect(apply({ [HEAP_GROWING_PERCENT_ENV]: ' ' })).toEqual({
      result: 300,
      set: ['--heap-growing-percent=300'],
    });
  });

  it('takes the environment variable, and 0 leaves V8 alone', () => {
    expect(apply({ [HEAP_GROWING_PERCENT_ENV]: '150' })).toEqual({
      result: 150,
      set: ['--heap-growing-percent=150'],
    });
    expect(apply({ [HEAP_GROWING_PERCENT_ENV]: '0' })).toEqual({ result: undefined, set: [] });
  });

  it("leaves Node's own command-line flag in charge", () => {
    for (const flag of ['--heap-growing-percent=50', '--heap_growing_percent=50', '--heap-growing-percent']) {
      expect(apply({ [HEAP_GROWING_PERCENT_ENV]: '150' }, ['--trace-gc', flag])).toEqual({
        result: undefined,
        set: [],
      });
    }
    expect(apply({}, ['--heap-growing-percentage=1'])).toEqual({
      result: 300,
      set: ['--heap-growing-percent=300'],
    });
  });

  it('refuses a value that is not an integer from 0 to 1000, naming the variable', () => {
    for (const bad of ['-1', '1001', '2.5', 'lots', '1e3']) {
      expect(() => apply({ [HEAP_GROWING_PERCENT_ENV]: bad })).toThrow(
        new RangeError(`${HEAP_GROWING_PERCENT_ENV} must be an integer from 0 to 1000, got '${bad}'`),
      );
    }
  });
});
