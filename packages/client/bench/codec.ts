/**
 * Bench part 1: binary vs JSON encode+decode of one [1,3,224,224] FP32 request and its [1,11] FP32
 * response, both ends (client encodes the request, server decodes it, server encodes the response,
 * client decodes it), with the shared codec.
 */
import {
  decodeInferRequest,
  decodeInferResponse,
  encodeInferRequest,
  encodeInferResponse,
  outputWantsBinary,
  type DecodedInferRequest,
} from '@tritonserver-ts/protocol/http';

const REQUEST_SHAPE = [1, 3, 224, 224];
const RESPONSE_SHAPE = [1, 11];

function timeIt(
  fn: () => void,
  minMs: number,
  minIterations: number,
): { medianMs: number; iterations: number } {
  for (let i = 0; i < 3; i++) fn(); // warm up
  const samples: number[] = [];
  const started = performance.now();
  while (samples.length < minIterations || performance.now() - started < minMs) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { medianMs: samples[Math.floor(samples.length / 2)] as number, iterations: samples.length };
}

function codecRoundTrip(image: Float32Array, probs: Float32Array, binary: boolean): void {
  const req = encodeInferRequest(
    [{ name: 'image', datatype: 'FP32', shape: REQUEST_SHAPE, data: image, binaryData: binary }],
    {
      outputs: [{ name: 'probs', binaryData: binary }],
    },
  );
  const decodedReq = decodeInferRequest(req.body, req.headerLength) as DecodedInferRequest;
  if ((decodedReq.inputs[0]?.data as Float32Array).length !== image.length)
    throw new Error('bad request decode');
  const res = encodeInferResponse({
    modelName: 'food_classifier',
    modelVersion: '1',
    outputs: [
      {
        tensor: { name: 'probs', datatype: 'FP32', shape: RESPONSE_SHAPE, data: probs },
        binary: outputWantsBinary(decodedReq, 'probs'),
      },
    ],
  });
  const decodedRes = decodeInferResponse(res.body, res.headerLength);
  if ((decodedRes.outputs[0]?.data as Float32Array).length !== 11) throw new Error('bad response decode');
}

/** The codec figures: median ms per round trip of the tensors, binary and JSON. */
export interface CodecResult {
  readonly binaryMs: number;
  readonly binaryIterations: number;
  readonly jsonMs: number;
  readonly jsonIterations: number;
}

/** Measures both encodings (about 5 s). */
export function measureCodec(): CodecResult {
  const image = Float32Array.from({ length: 3 * 224 * 224 }, (_, i) => Math.sin(i) * 2.5);
  const probs = Float32Array.from({ length: 11 }, (_, i) => (i + 1) / 66);
  const binary = timeIt(() => codecRoundTrip(image, probs, true), 1500, 50);
  const json = timeIt(() => codecRoundTrip(image, probs, false), 3000, 10);
  return {
    binaryMs: binary.medianMs,
    binaryIterations: binary.iterations,
    jsonMs: json.medianMs,
    jsonIterations: json.iterations,
  };
}
