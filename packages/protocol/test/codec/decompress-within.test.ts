import { randomBytes } from 'node:crypto';
import { deflateSync, gzipSync } from 'node:zlib';

import { describe, expect, it } from 'vitest';

import { ProtocolError, decompressWithin } from '../../src/index.js';

describe('decompressWithin (limited streaming decompression)', () => {
  const plain = Buffer.concat([randomBytes(100_000), Buffer.alloc(300_000, 7)]);

  it('returns the pieces of both codings, joined equal to the original, each reported first', async () => {
    for (const [algorithm, body] of [
      ['gzip', gzipSync(plain)],
      ['deflate', deflateSync(plain)],
    ] as const) {
      const seen: number[] = [];
      const out = await decompressWithin(body, algorithm, {
        maxBytes: plain.byteLength,
        chunkBytes: 16 * 1024,
        onChunk: (n) => seen.push(n),
      });
      expect(out.byteLength).toBe(plain.byteLength);
      expect(out.chunks.length).toBeGreaterThan(1);
      expect(seen).toEqual(out.chunks.map((c) => c.byteLength));
      expect(Buffer.concat(out.chunks).equals(plain)).toBe(true);
    }
  });

  it('stops a bomb as soon as the output passes the limit', async () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024));
    let produced = 0;
    const error = await decompressWithin(bomb, 'gzip', {
      maxBytes: 1024 * 1024,
      onChunk: (n) => (produced += n),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ code: 'DECOMPRESSED_TOO_LARGE', status: 400 });
    expect(produced).toBeLessThanOrEqual(1024 * 1024);
  });

  it('rejects with what onChunk throws, and with CORRUPT_COMPRESSED_BODY for bad data', async () => {
    const budget = new Error('budget exhausted');
    await expect(
      decompressWithin(gzipSync(plain), 'gzip', {
        maxBytes: plain.byteLength,
        onChunk: () => {
          throw budget;
        },
      }),
    ).rejects.toBe(budget);
    await expect(decompressWithin(Buffer.from('not gzip'), 'gzip', { maxBytes: 100 })).rejects.toMatchObject({
      code: 'CORRUPT_COMPRESSED_BODY',
      message: 'failed to decompress the gzip body',
    });
  });
});
