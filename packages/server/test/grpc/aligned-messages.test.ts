/**
 * Received gRPC messages joined with their first `raw_input_contents` 8-byte aligned
 * (`src/grpc/aligned-messages.ts`, issue 31): grpc-js's `StreamDecoder` (replaced in place) yields
 * the same framed messages as before, whatever the chunking, with large requests' tensor bytes on
 * an aligned offset, so the request reader needs no aligned copy; and a real server answers large
 * FP32 requests of every header length with the very values sent.
 */
import { createRequire } from 'node:module';

import { ModelInferRequestSchema, encodeMessage } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  MIN_ALIGNED_MESSAGE_BYTES,
  installAlignedMessages,
  rawContentsOffset,
} from '../../src/grpc/aligned-messages.js';
import { GrpcTestClient, startGrpcTestServer } from './helpers.js';

interface Decoder {
  write(data: Buffer): Buffer[];
}
const { StreamDecoder } = createRequire(import.meta.url)('@grpc/grpc-js/build/src/stream-decoder.js') as {
  StreamDecoder: new (max: number) => Decoder;
};

function frame(message: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.byteLength, 1);
  return Buffer.concat([head, message]);
}

/** A ModelInferRequest for `identity_fp32` of `n` values, its header lengthened by `idLength`. */
function request(n: number, idLength: number): Uint8Array {
  const values = Float32Array.from({ length: n }, (_, i) => i + 0.5);
  return encodeMessage(ModelInferRequestSchema, {
    modelName: 'identity_fp32',
    id: 'x'.repeat(idLength),
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, BigInt(n)] }],
    rawInputContents: [new Uint8Array(values.buffer)],
  });
}

describe('aligned gRPC messages', () => {
  beforeAll(() => installAlignedMessages());

  it('finds the first raw_input_contents payload past the header records', () => {
    const bytes = request(2048, 3);
    const offset = rawContentsOffset(bytes);
    expect(offset).toBeGreaterThan(0);
    expect(Buffer.from(bytes.subarray(offset, offset + 4)).readFloatLE(0)).toBe(0.5);
    // A header cut short, or bytes that are not protobuf, give no offset.
    expect(rawContentsOffset(bytes.subarray(0, 10))).toBe(-1);
    expect(rawContentsOffset(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff))).toBe(-1);
  });

  it('yields the same framed messages, large requests aligned, whatever the chunking', () => {
    for (let idLength = 0; idLength < 8; idLength++) {
      const big = request(MIN_ALIGNED_MESSAGE_BYTES, idLength);
      const small = request(4, idLength);
      const empty = new Uint8Array(0);
      const wire = Buffer.concat([frame(big), frame(small), frame(empty), frame(big)]);
      for (const chunk of [1, 7, 16384, wire.byteLength]) {
        const decoder = new StreamDecoder(-1);
        const out: Buffer[] = [];
        for (let at = 0; at < wire.byteLength; at += chunk) {
          out.push(...decoder.write(wire.subarray(at, at + chunk)));
        }
        expect(
          out.map((m) =>
            Buffer.compare(m.subarray(5), Buffer.from(m === out[1] ? small : m === out[2] ? empty : big)),
          ),
        ).toEqual([0, 0, 0, 0]);
        if (chunk >= 16384) {
          for (const m of [out[0], out[3]] as Buffer[]) {
            const raw = m.byteOffset + 5 + rawContentsOffset(m.subarray(5));
            expect(raw % 8).toBe(0);
          }
        }
      }
    }
  });

  it('keeps grpc-js’s message size limit and its words', () => {
    const decoder = new StreamDecoder(100);
    expect(() => decoder.write(frame(new Uint8Array(101)))).toThrow(
      'Received message larger than max (101 vs 100)',
    );
  });

  describe('on a real server', () => {
    let server: Awaited<ReturnType<typeof startGrpcTestServer>>;
    let client: GrpcTestClient;
    beforeAll(async () => {
      server = await startGrpcTestServer({ only: ['identity_fp32'] });
      client = new GrpcTestClient(server.grpcTarget);
    });
    afterAll(async () => {
      client.close();
      await server.close();
    });

    it('answers large FP32 requests of every header length with the values sent', async () => {
      for (let idLength = 0; idLength < 4; idLength++) {
        const n = 150_528;
        const values = Float32Array.from({ length: n }, (_, i) => i + 0.5);
        const answer = await client.call<{ rawOutputContents: Uint8Array[] }>('ModelInfer', {
          modelName: 'identity_fp32',
          id: 'x'.repeat(idLength),
          inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, BigInt(n)] }],
          rawInputContents: [new Uint8Array(values.buffer)],
        });
        const out = answer.rawOutputContents[0] as Uint8Array;
        expect(Buffer.compare(Buffer.from(out), Buffer.from(values.buffer))).toBe(0);
      }
    });
  });
});
