/**
 * Writes the golden protocol vectors in this folder. The bodies are composed by hand here — JSON text
 * written out literally, binary tails laid out byte by byte with DataView — never with the codec, so
 * the codec tests compare against an independent statement of the wire format.
 *
 * Run: `npx tsx test/golden/write-golden.ts` (from packages/client). The outputs are committed.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));

function le(
  kind: 'f32' | 'i32' | 'u32' | 'f64' | 'i64' | 'u16',
  values: readonly (number | bigint)[],
): Buffer {
  const size = { f32: 4, i32: 4, u32: 4, f64: 8, i64: 8, u16: 2 }[kind];
  const out = Buffer.alloc(values.length * size);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  values.forEach((v, i) => {
    const at = i * size;
    if (kind === 'f32') view.setFloat32(at, Number(v), true);
    else if (kind === 'i32') view.setInt32(at, Number(v), true);
    else if (kind === 'u32') view.setUint32(at, Number(v), true);
    else if (kind === 'f64') view.setFloat64(at, Number(v), true);
    else if (kind === 'i64') view.setBigInt64(at, BigInt(v), true);
    else view.setUint16(at, Number(v), true);
  });
  return out;
}

function bytesTensor(elements: readonly string[]): Buffer {
  return Buffer.concat(
    elements.flatMap((e) => {
      const b = Buffer.from(e, 'utf8');
      return [le('u32', [b.length]), b];
    }),
  );
}

interface Vector {
  body: Buffer;
  headerLength: number | null;
}
const manifest: Record<string, { file: string; headerLength: number | null; bytes: number }> = {};

function write(name: string, { body, headerLength }: Vector): void {
  writeFileSync(`${dir}/${name}.bin`, body);
  manifest[name] = { file: `${name}.bin`, headerLength, bytes: body.length };
}

function withTail(json: string, ...tail: Buffer[]): Vector {
  const header = Buffer.from(json, 'utf8');
  return { body: Buffer.concat([header, ...tail]), headerLength: header.length };
}

// 1. FP32 binary request, Triton's `simple`-style: two INT32 inputs, both binary; one output requested binary.
write(
  'request-int32-binary',
  withTail(
    '{"id":"42","inputs":[{"name":"INPUT0","shape":[1,4],"datatype":"INT32","parameters":{"binary_data_size":16}},' +
      '{"name":"INPUT1","shape":[1,4],"datatype":"INT32","parameters":{"binary_data_size":16}}],' +
      '"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}',
    le('i32', [1, 2, 3, -4]),
    le('i32', [10, 20, 30, 2147483647]),
  ),
);

// 2. FP32 image-like request with no outputs listed → binary_data_output.
write(
  'request-fp32-binary',
  withTail(
    '{"inputs":[{"name":"image","shape":[1,3,2,2],"datatype":"FP32","parameters":{"binary_data_size":48}}],' +
      '"parameters":{"binary_data_output":true}}',
    le('f32', [0.5, -1.25, 3.0, 1e-3, 0, -0, 65504, 1.5, -2.5, 100, 0.1, 7]),
  ),
);

// 3. BYTES: one binary input (with an empty and a non-ASCII element) and one JSON input.
write(
  'request-bytes',
  withTail(
    '{"inputs":[{"name":"TEXT","shape":[3],"datatype":"BYTES","parameters":{"binary_data_size":23}},' +
      '{"name":"TAGS","shape":[2],"datatype":"BYTES","data":["a","ü"]}],' +
      '"outputs":[{"name":"OUT","parameters":{"binary_data":false}}]}',
    bytesTensor(['hello', '', 'wörld']),
  ),
);

// 4. Mixed JSON and binary with every request parameter: sequence (string id), priority, timeout, custom.
write(
  'request-mixed',
  withTail(
    '{"id":"mix-1","inputs":[{"name":"COUNTS","shape":[2,2],"datatype":"INT32","data":[1,2,3,4]},' +
      '{"name":"HALF","shape":[2],"datatype":"FP16","parameters":{"binary_data_size":4}},' +
      '{"name":"FLAGS","shape":[3],"datatype":"BOOL","data":[true,false,true]},' +
      '{"name":"BIG","shape":[2],"datatype":"INT64","data":[9007199254740993,-5]}],' +
      '"outputs":[{"name":"A","parameters":{"binary_data":true}},{"name":"B","parameters":{"binary_data":false}}],' +
      '"parameters":{"sequence_id":"session-7","sequence_start":true,"sequence_end":false,"priority":2,"timeout":1500,"tenant":"gg","boost":1.5,"trace":false}}',
    le('u16', [0x3c00, 0xc000]),
  ),
);

// 5. Classification: top-2 as JSON.
write(
  'request-classification',
  withTail(
    '{"inputs":[{"name":"probs_in","shape":[1,4],"datatype":"FP32","parameters":{"binary_data_size":16}}],' +
      '"outputs":[{"name":"probs","parameters":{"classification":2,"binary_data":false}}]}',
    le('f32', [0.1, 0.7, 0.15, 0.05]),
  ),
);

// 6. Raw binary request (Inference-Header-Content-Length: 0): just the single input's bytes.
write('request-raw-binary', { body: le('f32', [1, 2, 3, 4]), headerLength: 0 });

// 7. Response: two binary outputs (FP32 [1,11] and INT32) and a zero-size binary output.
write(
  'response-fp32-binary',
  withTail(
    '{"model_name":"food_classifier","model_version":"1","id":"42","outputs":[' +
      '{"name":"probs","datatype":"FP32","shape":[1,11],"parameters":{"binary_data_size":44}},' +
      '{"name":"argmax","datatype":"INT32","shape":[1],"parameters":{"binary_data_size":4}},' +
      '{"name":"empty","datatype":"FP32","shape":[0,3],"parameters":{"binary_data_size":0}}]}',
    le('f32', [0.01, 0.02, 0.03, 0.04, 0.05, 0.5, 0.06, 0.07, 0.08, 0.09, 0.05]),
    le('i32', [5]),
  ),
);

// 8. Response: JSON outputs (classification strings, BOOL, INT64 beyond 2^53) and one binary BYTES output.
write(
  'response-mixed',
  withTail(
    '{"model_name":"mixed","model_version":"3","outputs":[' +
      '{"name":"probs","datatype":"BYTES","shape":[1,2],"data":["0.700000:1:pizza","0.150000:2:sushi"]},' +
      '{"name":"names","datatype":"BYTES","shape":[2],"parameters":{"binary_data_size":13}},' +
      '{"name":"ok","datatype":"BOOL","shape":[2],"data":[true,false]},' +
      '{"name":"ids","datatype":"INT64","shape":[2],"data":[9223372036854775807,-1]}]}',
    bytesTensor(['ramen', '']),
  ),
);

// 9. Response: JSON only, no binary tail (no Inference-Header-Content-Length).
const jsonOnly = Buffer.from(
  '{"model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"FP64","shape":[2],"data":[0.25,-1.5]}]}',
  'utf8',
);
write('response-json-only', { body: jsonOnly, headerLength: null });

writeFileSync(`${dir}/manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`wrote ${Object.keys(manifest).length} golden vectors`);
