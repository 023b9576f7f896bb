/**
 * Worker side of {@link OffThreadJsonDecoder}: decodes large JSON infer bodies (JSON.parse and the
 * conversion of `data` arrays into typed arrays, BYTES strings packed into one buffer) away from the
 * event loop that serves every connection, and sends the typed arrays back without copying them.
 * @packageDocumentation
 */
import { parentPort } from 'node:worker_threads';

import { BytesList, type TensorData } from '@tritonserver-ts/protocol';
import {
  decodeInferRequest,
  type DecodedInferRequest,
  type DecodedInput,
  type RawInferRequest,
} from '@tritonserver-ts/protocol/http';

/**
 * A decoded input as it crosses back to the main thread: a BYTES input's `BytesList` (which does not
 * survive structured cloning) travels as its serialized layout, with its element count.
 */
export type WireDecodedInput = DecodedInput & { readonly bytesCount?: number };

/** `input` as the main thread uses it (see {@link WireDecodedInput}). */
export function fromWireInput(input: WireDecodedInput): DecodedInput {
  const { bytesCount, ...rest } = input;
  if (bytesCount === undefined) return rest;
  return {
    ...rest,
    data: BytesList.fromSerialized(rest.data as Uint8Array, bytesCount, `input '${rest.name}'`),
  };
}

/** A body to decode. */
export interface DecodeJob {
  readonly id: number;
  readonly body: Uint8Array;
  readonly header: string | null;
  readonly modelName: string;
}

/** The answer to a {@link DecodeJob}. */
export type DecodeAnswer =
  | { readonly id: number; readonly ok: true; readonly request: DecodedInferRequest | RawInferRequest }
  | {
      readonly id: number;
      readonly ok: false;
      readonly error: {
        readonly name: string;
        readonly code?: string;
        readonly message: string;
        readonly status?: number;
      };
    };

parentPort?.on('message', (job: DecodeJob) => {
  let answer: DecodeAnswer;
  const transfer: ArrayBuffer[] = [];
  try {
    const decoded = decodeInferRequest(job.body, job.header, { modelName: job.modelName, packBytes: true });
    if (decoded.kind === 'json') {
      // The parsed header still holds the `data` arrays as sent: the server does not use it, and
      // cloning it back would cost what parsing cost. Keep everything but the input data.
      const { inputs: jsonInputs, ...rest } = decoded.json;
      const json = { ...rest, inputs: jsonInputs.map(({ data: _data, ...input }) => input) };
      const inputs = decoded.inputs.map((input): WireDecodedInput => {
        const packed = BytesList.isBytesList(input.data) ? input.data : undefined;
        const data = packed !== undefined ? packed.serialized : (input.data as TensorData | undefined);
        if (data !== undefined && !Array.isArray(data) && data.buffer instanceof ArrayBuffer) {
          if (!transfer.includes(data.buffer)) transfer.push(data.buffer);
        }
        return packed !== undefined ? { ...input, data, bytesCount: packed.length } : input;
      });
      answer = { id: job.id, ok: true, request: { ...decoded, inputs, json: json } };
    } else {
      answer = { id: job.id, ok: true, request: decoded };
    }
  } catch (error) {
    const e = error as { name?: string; code?: string; message?: string; status?: number };
    answer = {
      id: job.id,
      ok: false,
      error: {
        name: e.name ?? 'Error',
        message: e.message ?? String(error),
        ...(e.code !== undefined ? { code: e.code } : {}),
        ...(e.status !== undefined ? { status: e.status } : {}),
      },
    };
  }
  parentPort?.postMessage(answer, transfer);
});
