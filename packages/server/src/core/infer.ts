/**
 * The inference pipeline of the core: validates a decoded request against the model config the way
 * Triton's `InferenceRequest::Normalize` does (same checks, same order, same messages), hands it to
 * the model's scheduler, then selects the requested outputs, applies classification and writes
 * shared-memory outputs.
 * @packageDocumentation
 */
import {
  BytesList,
  DATATYPE_BYTE_SIZE,
  elementCount,
  isDatatype,
  tensorDataToBytes,
  datatypeFromModelConfig,
  type Datatype,
  type PackedTensor,
  type PackedTensorData,
  type TensorData,
} from '@tritonserver-ts/protocol';

import type { ModelConfig, ModelInput } from '../repository/model-config.js';
import type { SchedulerRequest } from '../scheduler/types.js';
import { classify } from './classification.js';
import { echo } from '../common/echo.js';
import { ServerError, internal, invalidArg, toServerError } from '../common/errors.js';
import type { ServingVersion } from './model-manager.js';
import type { SystemSharedMemoryManager } from './shared-memory.js';
import { checkStringInput } from './string-inputs.js';
import { decodeTensorBytes } from './tensor-bytes.js';
import type {
  CoreInferInput,
  CoreInferOutput,
  CoreInferRequest,
  CoreInferResponse,
  ParameterValue,
  SharedMemoryRef,
} from '../common/types.js';

/** `[1,2,3]` like Triton's `DimsListToString`. */
export function dimsToString(dims: readonly number[]): string {
  return `[${dims.join(',')}]`;
}

function logPrefix(id: string | undefined): string {
  return id !== undefined && id !== '' ? `[request id: ${echo(id)}] ` : '';
}

function modelDatatype(input: { data_type: string }): Datatype {
  return datatypeFromModelConfig(input.data_type) ?? 'FP32';
}

function quoteList(names: readonly string[]): string {
  return `[${names.map((n) => `'${echo(n)}'`).join(', ')}]`;
}

function uintParam(params: Readonly<Record<string, ParameterValue>>, key: string): number | undefined {
  const v = params[key];
  if (v === undefined) return undefined;
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    // Triton's HTTP front end reads these as uint64 (TritonJson's wording).
    throw invalidArg(
      `Unable to parse '${echo(key)}': attempt to access JSON non-unsigned-integer as unsigned-integer`,
    );
  }
  return n;
}

/** The packed form of an input's data: BYTES given one `Uint8Array` per element are packed. */
function packed(data: TensorData | BytesList): PackedTensorData {
  return Array.isArray(data) ? BytesList.from(data) : data;
}

/** A config's inputs and outputs by name, and its required inputs: built once per config. */
interface ConfigIndex {
  readonly inputByName: ReadonlyMap<string, ModelInput>;
  readonly outputByName: ReadonlyMap<string, ModelConfig['output'][number]>;
  readonly required: readonly ModelInput[];
}

const configIndexes = new WeakMap<ModelConfig, ConfigIndex>();

function configIndex(config: ModelConfig): ConfigIndex {
  let index = configIndexes.get(config);
  if (index === undefined) {
    index = {
      inputByName: new Map(config.input.map((i) => [i.name, i])),
      outputByName: new Map(config.output.map((o) => [o.name, o])),
      required: config.input.filter((i) => !i.optional),
    };
    configIndexes.set(config, index);
  }
  return index;
}

/** Options of {@link runInference}. */
export interface InferOptions {
  readonly sharedMemory: SystemSharedMemoryManager;
  /** The bytes of the request's shared-memory inputs, read beforehand (`shared-memory-inputs.ts`). */
  readonly sharedMemoryInputs?: ReadonlyMap<SharedMemoryRef, Uint8Array>;
  /** Refuse decoupled models (HTTP `/infer`). */
  readonly refuseDecoupled?: boolean;
  /**
   * The request's parameters are the model's only (HTTP `generate`, whose body members Triton sets
   * as plain request parameters): no `triton_` check, no priority, timeout or sequence fields.
   */
  readonly plainParameters?: boolean;
}

/**
 * A validated request, ready for the scheduler. Exposed for tests and for front ends that want to
 * validate without running.
 */
export interface PreparedRequest {
  readonly schedulerRequest: SchedulerRequest;
  readonly outputs: readonly {
    name: string;
    classification: number;
    sharedMemory?: CoreInferOutput['sharedMemory'];
  }[];
  readonly batched: boolean;
}

/**
 * Refuses a decoupled model on a front end that cannot stream (HTTP `/infer`), with Triton's message.
 * @throws ServerError (UNSUPPORTED)
 */
export function refuseDecoupled(config: ModelConfig): void {
  if (config.model_transaction_policy?.decoupled === true) {
    throw new ServerError(
      'UNSUPPORTED',
      "HTTP end point doesn't support models with decoupled transaction policy",
    );
  }
}

/** Validates `request` against `serving`'s config; throws Triton's INVALID_ARG errors. */
export function prepareRequest(
  serving: ServingVersion,
  request: CoreInferRequest,
  options: InferOptions,
  requestStart: bigint = process.hrtime.bigint(),
): PreparedRequest {
  const config = serving.definition.config;
  const model = config.name === '' ? serving.name : config.name;
  const prefix = logPrefix(request.id);
  if (options.refuseDecoupled === true) refuseDecoupled(config);

  const params = options.plainParameters === true ? {} : (request.parameters ?? {});
  for (const key of Object.keys(params)) {
    if (key.startsWith('triton_')) {
      throw invalidArg(
        "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.",
      );
    }
  }
  const priority = uintParam(params, 'priority') ?? 0;
  const timeoutUs = uintParam(params, 'timeout');

  // Shared-memory references are resolved while Triton's front end reads the request, before the
  // model checks: inputs, then requested outputs.
  for (const t of request.inputs) {
    if (t.sharedMemory !== undefined) options.sharedMemory.check(t.sharedMemory);
  }
  for (const t of request.outputs ?? []) {
    if (t.sharedMemory !== undefined) options.sharedMemory.check(t.sharedMemory);
  }

  // Inputs (a front end has already decoded its wire's raw forms into them).
  const inputs: readonly CoreInferInput[] = request.inputs;
  const seen = new Set<string>();
  for (const input of inputs) {
    if (seen.has(input.name))
      throw invalidArg(`${prefix}input '${echo(input.name)}' already exists in request`);
    seen.add(input.name);
  }

  // Requested outputs: duplicates, then existence (GetOutput).
  const { inputByName, outputByName, required } = configIndex(config);
  const requested = request.outputs ?? [];
  const seenOut = new Set<string>();
  for (const out of requested) {
    if (seenOut.has(out.name))
      throw invalidArg(`${prefix}output '${echo(out.name)}' already exists in request`);
    seenOut.add(out.name);
  }
  for (const out of requested) {
    if (!outputByName.has(out.name)) {
      throw invalidArg(`${prefix}unexpected inference output '${echo(out.name)}' for model '${model}'`);
    }
  }

  // Input count (optional inputs may be left out).
  if (inputs.length > config.input.length || inputs.length < required.length) {
    const missing = required.filter((i) => !seen.has(i.name)).map((i) => i.name);
    const got = quoteList(inputs.map((i) => i.name));
    if (required.length === config.input.length) {
      let message = `${prefix}expected ${config.input.length} inputs but got ${inputs.length} inputs for model '${model}'`;
      if (missing.length > 0) {
        message += `. Got input(s) ${got}, but missing required input(s) ${quoteList(missing)}. Please provide all required input(s).`;
      }
      throw invalidArg(message);
    }
    throw invalidArg(
      `${prefix}expected number of inputs between ${required.length} and ${config.input.length} but got ${inputs.length} inputs for model '${model}'`,
    );
  }
  for (const input of inputs) {
    if (!inputByName.has(input.name)) {
      throw invalidArg(`${prefix}unexpected inference input '${echo(input.name)}' for model '${model}'`);
    }
  }
  const missingRequired = required.filter((i) => !seen.has(i.name));
  if (missingRequired.length > 0) {
    throw invalidArg(
      `${prefix}expected ${config.input.length} inputs but got ${inputs.length} inputs for model '${model}'. Got input(s) ${quoteList(inputs.map((i) => i.name))}, but missing required input(s) ${quoteList(missingRequired.map((i) => i.name))}. Please provide all required input(s).`,
    );
  }

  // Batch size.
  const batched = config.max_batch_size > 0;
  let batchSize = 0;
  if (batched) {
    for (const input of inputs) {
      const cfg = inputByName.get(input.name) as ModelInput;
      if (cfg.is_shape_tensor) continue;
      if (input.shape.length === 0) {
        throw invalidArg(
          `${prefix}input '${echo(input.name)}' has no shape but model requires batch dimension for '${model}'`,
        );
      }
      const b = input.shape[0] as number;
      if (batchSize === 0) batchSize = b;
      else if (b !== batchSize) {
        throw invalidArg(
          `${prefix}input '${echo(input.name)}' batch size does not match other inputs for '${model}'`,
        );
      }
    }
    if (batchSize > config.max_batch_size) {
      throw invalidArg(
        `${prefix}inference request batch-size must be <= ${config.max_batch_size} for '${model}'`,
      );
    }
  }

  // Datatype, shape, data size; build the tensors handed to the scheduler.
  const tensors = new Map<string, PackedTensor>();
  for (const input of inputs) {
    const cfg = inputByName.get(input.name) as ModelInput;
    const expected = modelDatatype(cfg);
    if (input.datatype !== expected) {
      throw invalidArg(
        `${prefix}inference input '${echo(input.name)}' data-type is '${echo(input.datatype)}', but model '${model}' expects '${expected}'`,
      );
    }
    const dims = batched && !cfg.is_shape_tensor ? input.shape.slice(1) : [...input.shape];
    let match = dims.length === cfg.dims.length;
    for (let i = 0; match && i < dims.length; i++) {
      const d = dims[i] as number;
      if (d === -1) {
        throw invalidArg(
          `${prefix}All input dimensions should be specified for input '${echo(input.name)}' for model '${model}', got ${dimsToString(input.shape)}`,
        );
      }
      const c = cfg.dims[i] as number;
      if (c !== -1 && c !== d) match = false;
    }
    if (!match) {
      const full = batched && !cfg.is_shape_tensor ? [-1, ...cfg.dims] : cfg.dims;
      throw invalidArg(
        `${prefix}unexpected shape for input '${echo(input.name)}' for model '${model}'. Expected ${dimsToString(full)}, got ${dimsToString(input.shape)}`,
      );
    }
    const count = elementCount(input.shape);
    let data: PackedTensorData;
    if (input.sharedMemory !== undefined) {
      const bytes = options.sharedMemoryInputs?.get(input.sharedMemory);
      if (bytes === undefined) throw internal(`input '${echo(input.name)}' in shared memory was not read`);
      data = decodeTensorBytes(expected, bytes, count, input.name, model);
    } else if (input.dataError !== undefined) {
      // The front end could not decode the input's bytes: refused here, in Triton's order.
      throw input.dataError;
    } else if (input.data !== undefined) {
      data = packed(input.data);
      const n = data.length;
      if (n !== count) {
        if (expected === 'BYTES') {
          throw invalidArg(
            `${prefix}expected ${count} string elements for inference input '${echo(input.name)}' for model '${model}', got ${n}`,
          );
        }
        const size = DATATYPE_BYTE_SIZE[expected];
        throw invalidArg(
          `${prefix}input byte size mismatch for input '${echo(input.name)}' for model '${model}'. Expected ${count * size}, got ${n * size}`,
        );
      }
    } else {
      throw invalidArg(`${prefix}input '${echo(input.name)}' has no data`);
    }
    if (expected === 'BYTES') checkStringInput(serving.definition.backend, data, input.name, model, prefix);
    // Reshape to what the model itself expects.
    let shape: readonly number[] = input.shape;
    if (cfg.reshape !== undefined) {
      const variable = dims.filter((_, i) => cfg.dims[i] === -1);
      const reshaped = cfg.reshape.shape.map((d) => (d === -1 ? (variable.shift() ?? 0) : d));
      shape = batched && !cfg.is_shape_tensor ? [batchSize, ...reshaped] : reshaped;
    }
    tensors.set(input.name, { name: input.name, datatype: expected, shape, data });
  }

  // Outputs to return.
  const outputs = (requested.length > 0 ? requested : config.output.map((o) => ({ name: o.name }))).map(
    (o) => {
      const r = o as {
        name: string;
        classCount?: number;
        sharedMemory?: CoreInferOutput['sharedMemory'];
      };
      if (r.sharedMemory !== undefined) {
        if (r.classCount !== undefined && r.classCount > 0) {
          throw invalidArg(
            `${prefix}classification is not supported for output '${echo(r.name)}' in shared memory`,
          );
        }
        options.sharedMemory.check(r.sharedMemory);
      }
      const output: { name: string; classification: number; sharedMemory?: CoreInferOutput['sharedMemory'] } =
        { name: r.name, classification: r.classCount ?? 0 };
      if (r.sharedMemory !== undefined) output.sharedMemory = r.sharedMemory;
      return output;
    },
  );

  // Built by assignment, not spreads: this runs once per request.
  const schedulerRequest: { -readonly [K in keyof SchedulerRequest]: SchedulerRequest[K] } = {
    inputs: tensors,
    batchSize: Math.max(1, batchSize),
    priority,
    receivedAt: requestStart,
  };
  if (timeoutUs !== undefined) schedulerRequest.timeoutUs = timeoutUs;
  if (request.signal !== undefined) schedulerRequest.signal = request.signal;
  if (request.onActivity !== undefined) schedulerRequest.onActivity = request.onActivity;
  if (request.id !== undefined && request.id !== '') schedulerRequest.id = request.id;
  if (request.parameters !== undefined) schedulerRequest.parameters = request.parameters;
  if (requested.length > 0) schedulerRequest.requestedOutputs = requested.map((o) => o.name);
  setSequenceFields(schedulerRequest, params);
  const onResponse = request.onResponse;
  if (onResponse !== undefined) {
    const prepared = { schedulerRequest, outputs, batched };
    (schedulerRequest as { onResponse?: SchedulerRequest['onResponse'] }).onResponse = (r) => {
      let response: CoreInferResponse | undefined;
      let error = r.error;
      if (r.outputs !== undefined) {
        try {
          response = buildResponse(serving, request, prepared, r.outputs, options, true, r.parameters);
        } catch (e) {
          error = toServerError(e);
        }
      }
      onResponse({
        ...(response !== undefined ? { response } : {}),
        ...(error !== undefined ? { error } : {}),
        final: r.final,
      });
    };
  }
  return { schedulerRequest, outputs, batched };
}

/** `sequence_id` / `sequence_start` / `sequence_end` as the correlation id and request flags. */
function setSequenceFields(
  target: { correlationId?: number | bigint | string; flags?: number },
  params: Readonly<Record<string, ParameterValue>>,
): void {
  const id = params.sequence_id;
  // A bigint (gRPC int64, or an HTTP id above 2^53) stays an integer: the sequence batcher tells
  // integer and string ids apart, as Triton does.
  if (typeof id === 'number' || typeof id === 'string' || typeof id === 'bigint') target.correlationId = id;
  const flags = (params.sequence_start === true ? 1 : 0) | (params.sequence_end === true ? 2 : 0);
  if (flags !== 0) target.flags = flags;
}

/** Runs a validated request and builds the response. */
export async function runPrepared(
  serving: ServingVersion,
  request: CoreInferRequest,
  prepared: PreparedRequest,
  options: InferOptions,
): Promise<CoreInferResponse> {
  const result = await serving.scheduler.enqueue(prepared.schedulerRequest);
  if (request.onResponse !== undefined) {
    if (result.outputs.size > 0) {
      // A backend without the per-request path (e.g. ONNX Runtime) on a model configured decoupled
      // answers each request whole: as in tritonserver, that is one response flagged final.
      request.onResponse({
        response: buildResponse(
          serving,
          request,
          prepared,
          result.outputs,
          options,
          false,
          result.parameters,
        ),
        final: true,
      });
    }
    // A decoupled request's responses went to onResponse; this marks its completion.
    return buildResponse(serving, request, prepared, new Map(), options, true);
  }
  return buildResponse(serving, request, prepared, result.outputs, options, false, result.parameters);
}

/**
 * The response to a request from the model's outputs: the requested outputs, classification and
 * shared memory applied. `partial`: a decoupled model's response, which may carry only some of them.
 * `parameters`: the response's own (a Python model's), handed on as they are.
 */
function buildResponse(
  serving: ServingVersion,
  request: CoreInferRequest,
  prepared: PreparedRequest,
  produced: ReadonlyMap<string, PackedTensor>,
  options: InferOptions,
  partial: boolean,
  parameters?: Readonly<Record<string, ParameterValue>>,
): CoreInferResponse {
  const labels = serving.definition.labels;
  // A requested output the model did not produce is left out, as in Triton's responses (a Python
  // model may skip one; an ensemble step's optional output); a decoupled response (`partial`)
  // carries only some outputs anyway.
  const selected = prepared.outputs.filter((o) => produced.has(o.name));
  const outputs: CoreInferOutput[] = selected.map((o) => {
    const tensor = produced.get(o.name) as PackedTensor;
    if (!isDatatype(tensor.datatype)) throw internal(`output '${o.name}' has an invalid datatype`);
    if (o.classification > 0) {
      return {
        name: o.name,
        classification: true,
        tensor: classify(tensor, o.classification, prepared.batched, labels.get(o.name)),
      };
    }
    if (o.sharedMemory !== undefined) {
      options.sharedMemory.write(o.sharedMemory, tensorDataToBytes(tensor.datatype, tensor.data), o.name);
      return { name: o.name, classification: false, tensor, sharedMemory: o.sharedMemory };
    }
    return { name: o.name, classification: false, tensor };
  });
  return {
    modelName: serving.name,
    modelVersion: String(serving.version),
    ...(request.id !== undefined && request.id !== '' ? { id: request.id } : {}),
    ...(parameters !== undefined ? { parameters } : {}),
    outputs,
  };
}
