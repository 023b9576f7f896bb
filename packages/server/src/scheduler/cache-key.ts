/**
 * The response cache's key of a request: a SHA-256 digest over the model name and version and, for
 * every input in name order, its name, datatype, shape and data bytes, then the names of the
 * requested outputs (none = every output).
 *
 * Triton hashes the model name, version and each input's name and bytes with a 64-bit hash. This key
 * also covers datatype, shape and the requested outputs, so that two requests whose bytes agree but
 * whose shapes or requested outputs differ never share a response; and it is 256 bits wide, so a
 * collision is not a practical concern. The bytes are fed to the hash as they are (no copy), so the
 * cost grows with the input size and nothing else; request parameters are not part of the key, as
 * in Triton.
 * @packageDocumentation
 */
import { createHash } from 'node:crypto';

import { tensorDataToBytes, type PackedTensor } from '@tritonserver-ts/protocol';

const SEPARATOR = new Uint8Array([0]);

function field(hash: ReturnType<typeof createHash>, text: string): void {
  // Lengths first: no two different field sequences produce the same stream.
  hash.update(`${text.length}:`);
  hash.update(text);
}

/** The key of one request (see the module documentation). */
export function responseCacheKey(
  modelName: string,
  modelVersion: string,
  inputs: ReadonlyMap<string, PackedTensor>,
  requestedOutputs: readonly string[] | undefined,
): string {
  const hash = createHash('sha256');
  field(hash, modelName);
  field(hash, modelVersion);
  const names = [...inputs.keys()].sort();
  hash.update(`${names.length}`);
  for (const name of names) {
    const tensor = inputs.get(name) as PackedTensor;
    field(hash, name);
    field(hash, tensor.datatype);
    field(hash, tensor.shape.join(','));
    const bytes = tensorDataToBytes(tensor.datatype, tensor.data);
    hash.update(`${bytes.byteLength}:`);
    hash.update(bytes);
    hash.update(SEPARATOR);
  }
  if (requestedOutputs === undefined) {
    hash.update('*');
  } else {
    const outputs = [...requestedOutputs].sort();
    hash.update(`${outputs.length}`);
    for (const name of outputs) field(hash, name);
  }
  return hash.digest('hex');
}
