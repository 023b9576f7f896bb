/**
 * Implicit state of a sequence model (`sequence_batching.state`), as Triton keeps it: each state
 * pairs a model input (`input_name`) that the sequence batcher fills with a model output
 * (`output_name`) whose value it keeps for the next request of the same sequence.
 *
 * {@link loadImplicitStates} validates the states at load with the texts of Triton's
 * `SequenceBatchScheduler::Create` / `GenerateInitialStateData` (INVALID_ARG) and builds each state's
 * value at START: its `initial_state` (`zero_data`, or the raw row-major bytes of `data_file` in the
 * model directory's `initial_state/` folder, which must stay inside that folder) or, without one,
 * zeros shaped like `dims` with every variable dimension 1 (Triton starts from uninitialized memory
 * of that shape; zeros are what an uninitialized CPU buffer most often holds, and are deterministic).
 * A batching model's state has a leading batch dimension of 1 per sequence.
 * @packageDocumentation
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import {
  BytesList,
  DATATYPE_BYTE_SIZE,
  datatypeFromModelConfig,
  elementCount,
  tensorDataFromBytes,
  type Datatype,
  type PackedTensor,
  type PackedTensorData,
} from '@tritonserver-ts/protocol';

import { ServerError, invalidArg } from '../common/errors.js';
import { resolveInside } from '../repository/contained-path.js';
import type { ModelConfig } from '../repository/model-config.js';

/** Triton's folder (in the model directory) of `initial_state.data_file`s (`kInitialStateFolder`). */
export const INITIAL_STATE_FOLDER = 'initial_state';

/** One implicit state of a sequence model (see the module documentation). */
export interface ImplicitState {
  /** The model input the batcher fills with the state. */
  readonly inputName: string;
  /** The model output whose value becomes the state of the sequence's next request. */
  readonly outputName: string;
  readonly datatype: Datatype;
  /** The input state a sequence starts with (also a padding row's). */
  readonly start: PackedTensor;
}

function zeros(datatype: Datatype, count: number): PackedTensorData {
  if (datatype === 'BYTES') return BytesList.from(Array.from({ length: count }, () => new Uint8Array(0)));
  const bytes = new Uint8Array(count * DATATYPE_BYTE_SIZE[datatype]);
  return tensorDataFromBytes(datatype, bytes, count);
}

/**
 * The implicit states of `config` (empty without `sequence_batching.state`), validated, with their
 * start values (files read from `modelDirectory`).
 * @throws ServerError INVALID_ARG with Triton's text for a bad state description or initial state.
 */
export async function loadImplicitStates(
  config: ModelConfig,
  modelDirectory: string | undefined,
): Promise<ImplicitState[]> {
  const states = config.sequence_batching?.state ?? [];
  const batching = config.max_batch_size > 0;
  const initialized = new Set<string>();
  const out: ImplicitState[] = [];
  for (const state of states) {
    const input = state.input_name;
    const datatype = datatypeFromModelConfig(state.data_type);
    if (datatype === undefined) {
      throw invalidArg(`state '${input}' has an invalid data_type ${state.data_type}`);
    }
    if (state.initial_state.length > 1) {
      throw invalidArg(
        `initial_state field for state input '${input}' must contain exactly one or zero element. Found '${state.initial_state.length}' elements.`,
      );
    }
    const initial = state.initial_state[0];
    if (initial === undefined) {
      const shape = [...(batching ? [1] : []), ...state.dims.map((d) => (d === -1 ? 1 : d))];
      out.push({
        inputName: input,
        outputName: state.output_name,
        datatype,
        start: { name: input, datatype, shape, data: zeros(datatype, elementCount(shape)) },
      });
      continue;
    }
    if (initial.data_type !== state.data_type) {
      throw invalidArg(
        `The data type used for 'initial_state' field of state '${input}' does not match the state data type.`,
      );
    }
    if (initial.name === '') {
      throw invalidArg(`Field 'name' must be set when using initial_state for state input '${input}'.`);
    }
    if (initialized.has(input)) throw invalidArg(`State input name '${input}' specified more than once.`);
    initialized.add(input);
    if (initial.dims.length !== state.dims.length) {
      throw invalidArg(
        `Number of dimensions in 'initial_state' doesn't match the size of 'state' dimensions for state input '${input}'. ${initial.dims.length} != ${state.dims.length}`,
      );
    }
    initial.dims.forEach((d, i) => {
      const s = state.dims[i] as number;
      if (d === -1) {
        throw invalidArg(
          `'initial_state' field for state input name '${input}' contains variable dimensions.`,
        );
      }
      if (s !== -1 && d !== s) {
        throw invalidArg(
          `'initial_state' dim for input name '${input}' doesn't match 'state' dim description. ${d} != ${s}`,
        );
      }
    });
    const shape = [...(batching ? [1] : []), ...initial.dims];
    const count = elementCount(initial.dims);
    let data: PackedTensorData;
    if (initial.zero_data !== undefined) {
      data = zeros(datatype, elementCount(shape));
    } else if (initial.data_file !== undefined) {
      data = await readInitialStateFile(modelDirectory, initial.data_file, datatype, count);
    } else {
      throw invalidArg(`initial_state setting expects state'${input}' to have state_data set`);
    }
    out.push({
      inputName: input,
      outputName: state.output_name,
      datatype,
      start: { name: input, datatype, shape, data },
    });
  }
  return out;
}

async function readInitialStateFile(
  modelDirectory: string | undefined,
  dataFile: string,
  datatype: Datatype,
  count: number,
): Promise<PackedTensorData> {
  if (modelDirectory === undefined) {
    throw new ServerError('INTERNAL', `initial_state data_file '${dataFile}' needs the model directory`);
  }
  const shown = `${INITIAL_STATE_FOLDER}/${dataFile}`;
  // The config may come from a load request: the file must stay inside initial_state/ (links too).
  const file = await resolveInside(
    path.join(modelDirectory, INITIAL_STATE_FOLDER),
    dataFile,
    'initial_state data_file',
    `${INITIAL_STATE_FOLDER}/`,
  ).catch((error: unknown) => {
    throw invalidArg(error instanceof Error ? error.message : String(error));
  });
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(file));
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'No such file or directory' : String(error);
    throw new ServerError('INTERNAL', `failed to open text file for read ${shown}: ${reason}`);
  }
  if (datatype === 'BYTES') {
    // Triton takes the whole file as the state's buffer: serialized (length-prefixed) elements.
    try {
      return BytesList.fromSerialized(bytes, count, `initial state ${shown}`);
    } catch (error) {
      throw invalidArg(error instanceof Error ? error.message : String(error));
    }
  }
  const size = count * DATATYPE_BYTE_SIZE[datatype];
  if (bytes.byteLength < size) {
    // Triton's text, its missing space included.
    throw invalidArg(
      `initial_state setting expects ${size} bytes, but the data provided from ${dataFile}only has ${bytes.byteLength} bytes.`,
    );
  }
  return tensorDataFromBytes(datatype, new Uint8Array(bytes.subarray(0, size)), count);
}
