/** `core/echo.ts`: the bounds on client strings in messages and on whole messages. */
import { describe, expect, it } from 'vitest';

import {
  ECHO_MAX_CHARACTERS,
  ERROR_MESSAGE_MAX_BYTES,
  capErrorMessage,
  echo,
} from '../../src/common/echo.js';

describe('echo', () => {
  it('keeps a string up to the limit as it is', () => {
    const s = 'n'.repeat(ECHO_MAX_CHARACTERS);
    expect(echo(s)).toBe(s);
    expect(echo('')).toBe('');
  });

  it('cuts a longer one and says how many characters were cut', () => {
    expect(echo('abcdefghij', 4)).toBe('abcd...[truncated 6 characters]');
    expect(echo('x'.repeat(100_000))).toBe(`${'x'.repeat(256)}...[truncated 99744 characters]`);
  });

  it('never splits a surrogate pair', () => {
    const out = echo(`abc${'😀'.repeat(10)}`, 4); // the cut would fall inside the first emoji
    expect(out).toBe('abc...[truncated 20 characters]');
    expect(echo(`ab${'😀'.repeat(10)}`, 4)).toBe('ab😀...[truncated 18 characters]');
  });
});

describe('capErrorMessage', () => {
  it('keeps a message within the limit as it is', () => {
    const s = 'e'.repeat(ERROR_MESSAGE_MAX_BYTES);
    expect(capErrorMessage(s)).toBe(s);
  });

  it('cuts an ASCII message to the byte limit, marker included', () => {
    const out = capErrorMessage('e'.repeat(50_000));
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(ERROR_MESSAGE_MAX_BYTES);
    expect(Buffer.byteLength(out)).toBeGreaterThan(ERROR_MESSAGE_MAX_BYTES - 40);
    const cut = Number(/\.\.\.\[truncated (\d+) characters\]$/.exec(out)?.[1]);
    const kept = out.slice(0, out.indexOf('...['));
    expect(kept).toBe('e'.repeat(kept.length));
    expect(kept.length + cut).toBe(50_000);
  });

  it('counts UTF-8 bytes, not characters, and keeps whole characters', () => {
    for (const text of ['é'.repeat(10_000), '寿'.repeat(10_000), '😀'.repeat(10_000)]) {
      const out = capErrorMessage(text);
      expect(Buffer.byteLength(out)).toBeLessThanOrEqual(ERROR_MESSAGE_MAX_BYTES);
      expect(Buffer.byteLength(out)).toBeGreaterThan(ERROR_MESSAGE_MAX_BYTES - 60);
      expect(out).not.toContain('\uFFFD');
      const kept = out.slice(0, out.indexOf('...['));
      expect(text.startsWith(kept)).toBe(true);
      expect(Number(/(\d+) characters\]$/.exec(out)?.[1])).toBe(text.length - kept.length);
    }
  });
});
