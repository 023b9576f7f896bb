/**
 * The control tensors the sequence batcher adds to each request of a sequence model, as Triton's
 * `SequenceBatch::SetControlTensors`: START / END / READY with the configured false / true values
 * (one element, shape `[1]`, `[1, 1]` with the batch dimension), and CORRID carrying the request's
 * correlation id in the configured type (an integer id is cut to 32 bits for the 32-bit types, as
 * Triton copies the id's low bytes; a string id is one BYTES element). A padding row ("null
 * request") gets READY false, START and END false, and CORRID 0 / "".
 * @packageDocumentation
 */
import { BytesList, type PackedTensor, type PackedTensorData } from '@tritonserver-ts/protocol';

import type { BooleanControl, SequenceControls } from '../repository/sequence-controls.js';
import type { SequenceId } from './sequence-id.js';

/** Triton's request flags. */
export const SEQUENCE_START_FLAG = 1;
export const SEQUENCE_END_FLAG = 2;

function booleanTensor(control: BooleanControl, value: boolean, shape: readonly number[]): PackedTensor {
  const v = value ? control.trueValue : control.falseValue;
  let data: PackedTensorData;
  let datatype: PackedTensor['datatype'];
  if (control.dataType === 'TYPE_INT32') {
    data = Int32Array.of(Number(v));
    datatype = 'INT32';
  } else if (control.dataType === 'TYPE_FP32') {
    data = Float32Array.of(Number(v));
    datatype = 'FP32';
  } else {
    data = Uint8Array.of(v === true ? 1 : 0);
    datatype = 'BOOL';
  }
  return { name: control.name, datatype, shape, data };
}

/** Builds the control tensors of one sequence model (see the module documentation). */
export class SequenceControlTensors {
  readonly #controls: SequenceControls;
  readonly #shape: readonly number[];

  constructor(controls: SequenceControls, batching: boolean) {
    this.#controls = controls;
    this.#shape = batching ? [1, 1] : [1];
  }

  /** Whether the model has any control input. */
  get any(): boolean {
    const c = this.#controls;
    return c.start !== undefined || c.end !== undefined || c.ready !== undefined || c.corrid !== undefined;
  }

  /** Adds the controls of a request with `flags` of sequence `id` (or of a padding row) to `inputs`. */
  addTo(inputs: Map<string, PackedTensor>, flags: number, id: SequenceId | undefined): void {
    const { start, end, ready, corrid } = this.#controls;
    const real = id !== undefined;
    const shape = this.#shape;
    if (start !== undefined)
      inputs.set(start.name, booleanTensor(start, real && (flags & SEQUENCE_START_FLAG) !== 0, shape));
    if (end !== undefined)
      inputs.set(end.name, booleanTensor(end, real && (flags & SEQUENCE_END_FLAG) !== 0, shape));
    if (ready !== undefined) inputs.set(ready.name, booleanTensor(ready, real, shape));
    if (corrid !== undefined) {
      const name = corrid.name;
      const text = id?.text ?? '';
      if (corrid.dataType === 'TYPE_STRING') {
        inputs.set(name, {
          name,
          datatype: 'BYTES',
          shape,
          data: BytesList.from([id?.kind === 'string' ? text : '']),
        });
        return;
      }
      const value = id === undefined || id.kind === 'string' ? 0n : BigInt(text);
      let tensor: PackedTensor;
      switch (corrid.dataType) {
        case 'TYPE_UINT64':
          tensor = { name, datatype: 'UINT64', shape, data: BigUint64Array.of(value) };
          break;
        case 'TYPE_INT64':
          tensor = { name, datatype: 'INT64', shape, data: BigInt64Array.of(BigInt.asIntN(64, value)) };
          break;
        case 'TYPE_UINT32':
          tensor = {
            name,
            datatype: 'UINT32',
            shape,
            data: Uint32Array.of(Number(BigInt.asUintN(32, value))),
          };
          break;
        default:
          tensor = { name, datatype: 'INT32', shape, data: Int32Array.of(Number(BigInt.asIntN(32, value))) };
      }
      inputs.set(name, tensor);
    }
  }
}

/** A zero-filled copy of `tensor` (same datatype and shape): a padding row's inputs. */
export function zeroLike(tensor: PackedTensor): PackedTensor {
  const data = tensor.data;
  let zero: PackedTensorData;
  if (BytesList.isBytesList(data)) zero = BytesList.from(new Array<string>(data.length).fill(''));
  else {
    const Ctor = data.constructor as new (length: number) => typeof data;
    zero = new Ctor(data.length);
  }
  return { name: tensor.name, datatype: tensor.datatype, shape: tensor.shape, data: zero };
}
