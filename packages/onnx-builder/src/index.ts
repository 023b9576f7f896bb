/**
 * A small, deterministic ONNX graph builder.
 *
 * It writes ONNX `ModelProto` bytes through the `onnx-proto` message classes. The same graph built
 * twice gives the same bytes (no timestamps, no random names, initializers in insertion order), which
 * is what the model build relies on for reproducible artifacts.
 *
 * @example
 * ```ts
 * import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';
 * const g = new OnnxGraphBuilder({ name: 'add_sub' });
 * g.addInput('INPUT0', 'INT32', ['batch', 16]);
 * g.addInput('INPUT1', 'INT32', ['batch', 16]);
 * g.addNode('Add', ['INPUT0', 'INPUT1'], ['OUTPUT0']);
 * g.addNode('Sub', ['INPUT0', 'INPUT1'], ['OUTPUT1']);
 * g.addOutput('OUTPUT0', 'INT32', ['batch', 16]);
 * g.addOutput('OUTPUT1', 'INT32', ['batch', 16]);
 * const bytes: Uint8Array = g.toBytes();
 * ```
 *
 * @packageDocumentation
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

/** Element types this builder can declare, named like ONNX's `TensorProto.DataType`. */
export type OnnxElementType =
  | 'FLOAT'
  | 'UINT8'
  | 'INT8'
  | 'UINT16'
  | 'INT16'
  | 'INT32'
  | 'INT64'
  | 'STRING'
  | 'BOOL'
  | 'FLOAT16'
  | 'DOUBLE'
  | 'UINT32'
  | 'UINT64'
  | 'BFLOAT16';

/** ONNX `TensorProto.DataType` numbers by name. */
export const ONNX_ELEMENT_TYPE: Readonly<Record<OnnxElementType, number>> = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  UINT16: 4,
  INT16: 5,
  INT32: 6,
  INT64: 7,
  STRING: 8,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
  UINT32: 12,
  UINT64: 13,
  BFLOAT16: 16,
};

/** A dimension: a fixed size, or a symbolic name (variable size, e.g. the batch dimension). */
export type OnnxDim = number | string;

/** Attribute values accepted by {@link OnnxGraphBuilder.addNode}. */
export type OnnxAttributeValue =
  | { kind: 'int'; value: number }
  | { kind: 'ints'; value: readonly number[] }
  | { kind: 'float'; value: number }
  | { kind: 'floats'; value: readonly number[] }
  | { kind: 'string'; value: string }
  | { kind: 'tensor'; value: OnnxInitializer };

/** Typed arrays that can back an initializer, with their element type. */
export type OnnxInitializer =
  | { type: 'FLOAT'; dims: readonly number[]; data: Float32Array }
  | { type: 'DOUBLE'; dims: readonly number[]; data: Float64Array }
  | { type: 'INT32'; dims: readonly number[]; data: Int32Array }
  | { type: 'INT64'; dims: readonly number[]; data: BigInt64Array }
  | { type: 'UINT8'; dims: readonly number[]; data: Uint8Array }
  | { type: 'INT8'; dims: readonly number[]; data: Int8Array }
  | { type: 'BOOL'; dims: readonly number[]; data: Uint8Array };

/** Options for a new graph. */
export interface OnnxGraphOptions {
  /** Graph name stored in the model. */
  name: string;
  /** Default-domain opset version; 13 unless given. */
  opsetVersion?: number;
  /** `producer_name` stored in the model. */
  producerName?: string;
  /** Free-form documentation string stored on the model. */
  docString?: string;
}

/** Thrown when a graph is inconsistent (duplicate names, unknown tensors). */
export class OnnxBuildError extends Error {
  /** Stable error code. */
  readonly code = 'ONNX_BUILD_ERROR';
  constructor(message: string) {
    super(message);
    this.name = 'OnnxBuildError';
  }
}

function valueInfo(
  name: string,
  type: OnnxElementType,
  dims: readonly OnnxDim[],
): onnxProto.onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: ONNX_ELEMENT_TYPE[type],
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

function tensorProto(name: string, init: OnnxInitializer): onnxProto.onnx.ITensorProto {
  const bytes = new Uint8Array(init.data.buffer, init.data.byteOffset, init.data.byteLength);
  return {
    name,
    dataType: ONNX_ELEMENT_TYPE[init.type],
    dims: [...init.dims],
    // Copy: protobufjs keeps a reference and the caller may reuse its buffer.
    rawData: new Uint8Array(bytes),
  };
}

function attribute(name: string, attr: OnnxAttributeValue): onnxProto.onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  switch (attr.kind) {
    case 'int':
      return { name, type: T.INT, i: attr.value };
    case 'ints':
      return { name, type: T.INTS, ints: [...attr.value] };
    case 'float':
      return { name, type: T.FLOAT, f: attr.value };
    case 'floats':
      return { name, type: T.FLOATS, floats: [...attr.value] };
    case 'string':
      return { name, type: T.STRING, s: new TextEncoder().encode(attr.value) };
    case 'tensor':
      return { name, type: T.TENSOR, t: tensorProto('', attr.value) };
  }
}

/** Builds one ONNX graph and serializes it to `ModelProto` bytes. */
export class OnnxGraphBuilder {
  private readonly inputs: onnxProto.onnx.IValueInfoProto[] = [];
  private readonly outputs: onnxProto.onnx.IValueInfoProto[] = [];
  private readonly nodes: onnxProto.onnx.INodeProto[] = [];
  private readonly initializers: onnxProto.onnx.ITensorProto[] = [];
  private readonly names = new Set<string>();
  private nodeCounter = 0;

  constructor(private readonly options: OnnxGraphOptions) {}

  /** Declares a graph input. */
  addInput(name: string, type: OnnxElementType, dims: readonly OnnxDim[]): this {
    this.claim(name);
    this.inputs.push(valueInfo(name, type, dims));
    return this;
  }

  /** Declares a graph output (produced by some node). */
  addOutput(name: string, type: OnnxElementType, dims: readonly OnnxDim[]): this {
    this.outputs.push(valueInfo(name, type, dims));
    return this;
  }

  /** Adds a constant tensor (weights). */
  addInitializer(name: string, init: OnnxInitializer): this {
    this.claim(name);
    this.initializers.push(tensorProto(name, init));
    return this;
  }

  /**
   * Adds a node. Node names are generated deterministically (`<OpType>_<n>`) unless given.
   * @returns the node's output names, for chaining.
   */
  addNode(
    opType: string,
    inputs: readonly string[],
    outputs: readonly string[],
    attributes: Readonly<Record<string, OnnxAttributeValue>> = {},
    nodeName?: string,
  ): readonly string[] {
    for (const o of outputs) this.claim(o);
    const name = nodeName ?? `${opType}_${this.nodeCounter++}`;
    this.nodes.push({
      name,
      opType,
      input: [...inputs],
      output: [...outputs],
      attribute: Object.keys(attributes)
        .sort()
        .map((k) => attribute(k, attributes[k] as OnnxAttributeValue)),
    });
    return outputs;
  }

  /** Serializes the model. Deterministic for the same sequence of builder calls. */
  toBytes(): Uint8Array {
    const produced = new Set<string>([
      ...this.inputs.map((i) => i.name ?? ''),
      ...this.initializers.map((i) => i.name ?? ''),
      ...this.nodes.flatMap((n) => n.output ?? []),
    ]);
    for (const out of this.outputs) {
      if (!produced.has(out.name ?? '')) {
        throw new OnnxBuildError(`graph output '${out.name ?? ''}' is not produced by any node or input`);
      }
    }
    for (const node of this.nodes) {
      for (const input of node.input ?? []) {
        if (input !== '' && !produced.has(input)) {
          throw new OnnxBuildError(`node '${node.name ?? ''}' reads unknown tensor '${input}'`);
        }
      }
    }
    const model = onnx.ModelProto.create({
      irVersion: 8,
      producerName: this.options.producerName ?? 'tritonserver-ts onnx-builder',
      producerVersion: '1',
      docString: this.options.docString ?? '',
      opsetImport: [{ domain: '', version: this.options.opsetVersion ?? 13 }],
      graph: {
        name: this.options.name,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }

  private claim(name: string): void {
    if (this.names.has(name)) throw new OnnxBuildError(`tensor name '${name}' is defined twice`);
    this.names.add(name);
  }
}
