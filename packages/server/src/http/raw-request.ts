/**
 * The HTTP raw binary request (`Inference-Header-Content-Length: 0`): the body is the bytes of the
 * model's single input, whose name, datatype and shape come from the model's config (Triton's
 * raw-input rules: one input, at most one variable dim, deduced from the byte size; a BYTES input
 * must have shape [1] and the body is its one element).
 * @packageDocumentation
 */
import {
  BytesList,
  DATATYPE_BYTE_SIZE,
  datatypeFromModelConfig,
  elementCount,
} from '@tritonserver-ts/protocol';

import { echo } from '../common/echo.js';
import { invalidArg } from '../common/errors.js';
import type { CoreInferInput } from '../common/types.js';
import { decodeTensorBytes } from '../core/tensor-bytes.js';
import type { ModelConfig, ModelInput } from '../repository/model-config.js';

/**
 * The single input of a raw binary request to a model with `config`, its data decoded from `body`.
 * @throws ServerError (INVALID_ARG) with Triton's messages when the input cannot be deduced or the
 *   body does not fit it
 */
export function rawRequestInput(config: ModelConfig, body: Uint8Array): CoreInferInput {
  if (config.input.length !== 1) {
    throw invalidArg(
      `Raw request must only have 1 input (found 1) to be deduced but got ${config.input.length} inputs in '${config.name}' model configuration`,
    );
  }
  const input = config.input[0] as ModelInput;
  const datatype = datatypeFromModelConfig(input.data_type) ?? 'FP32';
  const shape: number[] = config.max_batch_size !== 0 ? [1] : [];
  let dynamicAxis = -1;
  let count = 1;
  for (const d of input.dims) {
    if (d === -1) {
      if (dynamicAxis !== -1) {
        throw invalidArg(
          `The shape of the raw input '${echo(input.name)}' can not be deduced because there are more than one variable-sized dimension`,
        );
      }
      dynamicAxis = shape.length;
    } else {
      count *= d;
    }
    shape.push(d);
  }
  if (datatype === 'BYTES') {
    if (dynamicAxis !== -1 || count !== 1) {
      throw invalidArg(
        `For BYTE datatype raw input '${echo(input.name)}', the model must have input shape [1]`,
      );
    }
    return { name: input.name, datatype, shape, data: BytesList.from([body]) };
  }
  const elem = DATATYPE_BYTE_SIZE[datatype];
  if (dynamicAxis !== -1) shape[dynamicAxis] = count === 0 ? 0 : Math.floor(body.byteLength / count / elem);
  return {
    name: input.name,
    datatype,
    shape,
    data: decodeTensorBytes(datatype, body, elementCount(shape), input.name, config.name),
  };
}
