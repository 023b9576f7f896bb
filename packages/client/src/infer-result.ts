/**
 * `InferResult`: the outputs of one inference, by name.
 * @packageDocumentation
 */
import { TritonInvalidArgumentError, protocolFailure } from './errors.js';
import { decompressBody } from './protocol/compression.js';
import { NdArrayView } from './ndarray.js';
import { bytesToStrings } from './protocol/bytes.js';
import { parseClassificationEntry, type ClassificationEntry } from './protocol/classification.js';
import type { Datatype, TensorData } from './protocol/datatypes.js';
import { bf16ArrayToFloat32, fp16ArrayToFloat32 } from './protocol/fp16.js';
import {
  decodeInferResponse,
  type DecodedInferResponse,
  type DecodedOutput,
} from './protocol/infer-response.js';
import type { Tensor } from './protocol/tensor.js';
import type { InferResponseJson, Parameters } from './protocol/wire.js';

/** The result of `TritonClient.infer`. Output data is not copied from the response body. */
export class InferResult {
  readonly #decoded: DecodedInferResponse;
  readonly #byName: Map<string, DecodedOutput>;

  constructor(decoded: DecodedInferResponse) {
    this.#decoded = decoded;
    this.#byName = new Map(decoded.outputs.map((o) => [o.name, o]));
  }

  /**
   * Builds a result from an infer response body received by any HTTP stack (the Python client's
   * `InferResult.from_response_body`).
   * @param options.headerLength - the `Inference-Header-Content-Length` response header, if any.
   * @param options.contentEncoding - the `Content-Encoding` response header, if the body is still compressed.
   * @throws TritonProtocolError when the body does not follow the protocol.
   */
  static async fromResponseBody(
    body: Uint8Array,
    options: { headerLength?: string | number | null; contentEncoding?: string | null } = {},
  ): Promise<InferResult> {
    try {
      const plain = await decompressBody(body, options.contentEncoding);
      return new InferResult(decodeInferResponse(plain, options.headerLength));
    } catch (error) {
      throw protocolFailure(error);
    }
  }

  /** The response JSON as received (wire field names; binary outputs carry `binary_data_size`). */
  get response(): InferResponseJson {
    return this.#decoded.json;
  }

  /** `model_name` of the response. */
  get modelName(): string {
    return this.#decoded.json.model_name;
  }

  /** `model_version` of the response. */
  get modelVersion(): string | undefined {
    return this.#decoded.json.model_version;
  }

  /** The echoed request id, if any. */
  get id(): string | undefined {
    return this.#decoded.json.id;
  }

  /** Response parameters. */
  get parameters(): Parameters {
    return this.#decoded.json.parameters ?? {};
  }

  /** Output names in response order. */
  get outputNames(): string[] {
    return this.#decoded.outputs.map((o) => o.name);
  }

  /** True when the response has an output of this name. */
  hasOutput(name: string): boolean {
    return this.#byName.has(name);
  }

  #get(name: string): DecodedOutput {
    const output = this.#byName.get(name);
    if (output === undefined) {
      throw new TritonInvalidArgumentError(
        `the response has no output '${name}' (outputs: ${this.outputNames.join(', ') || 'none'})`,
      );
    }
    return output;
  }

  #data(name: string): { output: DecodedOutput; data: TensorData } {
    const output = this.#get(name);
    if (output.data === undefined) {
      throw new TritonInvalidArgumentError(`output '${name}' has no data in the response (shared memory?)`);
    }
    return { output, data: output.data };
  }

  /** An output as a {@link Tensor}. */
  output(name: string): Tensor {
    const { output, data } = this.#data(name);
    return { name: output.name, datatype: output.datatype, shape: output.shape, data };
  }

  /** Datatype of an output. */
  datatype(name: string): Datatype {
    return this.#get(name).datatype;
  }

  /** Shape of an output. */
  shape(name: string): number[] {
    return this.#get(name).shape;
  }

  /** Parameters of an output (e.g. `binary_data_size`, shared-memory ones). */
  outputParameters(name: string): Parameters {
    return this.#get(name).parameters;
  }

  /**
   * The output's typed array (`Float32Array` for FP32, `BigInt64Array` for INT64, `Uint16Array`
   * bits for FP16/BF16, `Uint8Array[]` for BYTES, …). Pass the expected datatype to narrow the type;
   * a different actual datatype throws `TritonInvalidArgumentError`.
   */
  asTypedArray<D extends Datatype = Datatype>(name: string, datatype?: D): TensorData<D> {
    const { output, data } = this.#data(name);
    if (datatype !== undefined && output.datatype !== datatype) {
      throw new TritonInvalidArgumentError(`output '${name}' is ${output.datatype}, not ${datatype}`);
    }
    return data as TensorData<D>;
  }

  /** Numeric output values as float32 (FP16/BF16 decoded; integers converted). Not for BYTES. */
  asFloat32Array(name: string): Float32Array {
    const { output, data } = this.#data(name);
    switch (output.datatype) {
      case 'FP32':
        return data as Float32Array;
      case 'FP16':
        return fp16ArrayToFloat32(data as Uint16Array);
      case 'BF16':
        return bf16ArrayToFloat32(data as Uint16Array);
      case 'BYTES':
        throw new TritonInvalidArgumentError(`output '${name}' is BYTES; use asStrings()`);
      default:
        return Float32Array.from(data as ArrayLike<number | bigint>, Number);
    }
  }

  /** A BYTES output decoded as UTF-8 strings. */
  asStrings(name: string): string[] {
    const { output, data } = this.#data(name);
    if (output.datatype !== 'BYTES') throw new TritonInvalidArgumentError(`output '${name}' is not BYTES`);
    return bytesToStrings(data as Uint8Array[]);
  }

  /** An ndarray-style view (`get(i, j)`, `strides`, `toNested()`). */
  view<D extends Datatype = Datatype>(name: string): NdArrayView<D> {
    const { output, data } = this.#data(name);
    return new NdArrayView(output.datatype as D, output.shape, data as TensorData<D>);
  }

  /** A classification output (requested with `classCount`) parsed into `{ value, index, label? }`. */
  classifications(name: string): ClassificationEntry[] {
    return this.asStrings(name).map(parseClassificationEntry);
  }
}
