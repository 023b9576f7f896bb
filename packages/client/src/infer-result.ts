/**
 * `InferResult`: the outputs of one inference, by name.
 * @packageDocumentation
 */
import { TritonInvalidArgumentError, protocolFailure } from './errors.js';
import { decompressBody } from '@tritonserver-ts/protocol';
import { NdArrayView } from './ndarray.js';
import { bytesToStrings } from '@tritonserver-ts/protocol';
import { parseClassificationEntry, type ClassificationEntry } from '@tritonserver-ts/protocol';
import type { Datatype, TensorData } from '@tritonserver-ts/protocol';
import { bf16ArrayToFloat32, fp16ArrayToFloat32 } from '@tritonserver-ts/protocol';
import { inferResponseFromHttp } from '@tritonserver-ts/protocol/http';
import { tensorDataToJson } from '@tritonserver-ts/protocol/http';
import type { InferResponse, InferResponseOutput } from '@tritonserver-ts/protocol';
import type { Tensor } from '@tritonserver-ts/protocol';
import type { InferOutputJson, InferResponseJson } from '@tritonserver-ts/protocol/http';
import type { Parameters } from '@tritonserver-ts/protocol';

/**
 * The result of `TritonClient.infer` (and of a gRPC stream message): a view of the
 * transport-neutral {@link InferResponse}, so one request gives the same result over HTTP and gRPC.
 * Output data is not copied from the received message.
 */
export class InferResult {
  readonly #response: InferResponse;
  readonly #byName: Map<string, InferResponseOutput>;
  #httpView: InferResponseJson | undefined;

  /** Wraps a neutral response (what `Transport.infer` returns). */
  constructor(response: InferResponse) {
    this.#response = response;
    this.#byName = new Map(response.outputs.map((o) => [o.name, o]));
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
      return new InferResult(inferResponseFromHttp(plain, options.headerLength));
    } catch (error) {
      throw protocolFailure(error);
    }
  }

  /** The transport-neutral response this result reads. */
  get inferResponse(): InferResponse {
    return this.#response;
  }

  /**
   * The response as an HTTP JSON header (wire field names), built on first use from the neutral
   * response, for code written against the HTTP wire. An output that carries `binary_data_size`
   * (it came in the HTTP binary tail) has no `data`; any other output with data has it as JSON
   * `data` (an FP16/BF16 one, which JSON cannot carry, has none). Over gRPC it is the same view of
   * the gRPC response.
   * @deprecated Read {@link InferResult.modelName}, {@link InferResult.outputParameters},
   *   {@link InferResult.asTypedArray} and the other accessors, or {@link InferResult.inferResponse}.
   */
  get response(): InferResponseJson {
    this.#httpView ??= httpView(this.#response);
    return this.#httpView;
  }

  /** `model_name` of the response. */
  get modelName(): string {
    return this.#response.modelName;
  }

  /** `model_version` of the response. */
  get modelVersion(): string | undefined {
    return this.#response.modelVersion;
  }

  /** The echoed request id, if any. */
  get id(): string | undefined {
    return this.#response.id;
  }

  /** Response parameters. */
  get parameters(): Parameters {
    return this.#response.parameters;
  }

  /** Output names in response order. */
  get outputNames(): string[] {
    return this.#response.outputs.map((o) => o.name);
  }

  /** True when the response has an output of this name. */
  hasOutput(name: string): boolean {
    return this.#byName.has(name);
  }

  #get(name: string): InferResponseOutput {
    const output = this.#byName.get(name);
    if (output === undefined) {
      throw new TritonInvalidArgumentError(
        `the response has no output '${name}' (outputs: ${this.outputNames.join(', ') || 'none'})`,
      );
    }
    return output;
  }

  #data(name: string): { output: InferResponseOutput; data: TensorData } {
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

/** The HTTP JSON header equivalent of a neutral response (see {@link InferResult.response}). */
function httpView(response: InferResponse): InferResponseJson {
  const json = { model_name: response.modelName } as InferResponseJson;
  if (response.modelVersion !== undefined) json.model_version = response.modelVersion;
  if (response.id !== undefined) json.id = response.id;
  if (Object.keys(response.parameters).length > 0) json.parameters = response.parameters;
  json.outputs = response.outputs.map((o): InferOutputJson => {
    const out: InferOutputJson = { name: o.name, datatype: o.datatype, shape: o.shape };
    if (Object.keys(o.parameters).length > 0) out.parameters = o.parameters;
    if (o.data !== undefined && o.parameters.binary_data_size === undefined) {
      try {
        out.data = tensorDataToJson(o.datatype, o.data, 'output', o.name);
      } catch {
        // FP16 / BF16: JSON has no form for them; the view leaves the data out.
      }
    }
    return out;
  });
  return json;
}
