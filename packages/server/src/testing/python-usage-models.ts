/**
 * Python-backend test models that use `pb_utils` the way Triton's own Python-backend tests do
 * (written for this project from the documented behaviour; none is copied from Triton): response
 * senders before, on and after `execute` returns, response parameters, `async def execute`,
 * `TritonError` codes and the decoupled transaction policy set in `auto_complete_config`. The
 * server's tests and the conformance suite (which also runs them on a real Triton) share them.
 * @packageDocumentation
 */
import type { GeneratedPythonModel } from './python-models.js';

/** config.pbtxt text of a python-backend model with one CPU instance. */
function config(name: string, body: string): string {
  return `name: "${name}"\nbackend: "python"\n${body}instance_group [ { kind: KIND_CPU count: 1 } ]\n`;
}

function pyModel(name: string, configBody: string, source: string): GeneratedPythonModel {
  return { name, files: { 'config.pbtxt': config(name, configBody), '1/model.py': source } };
}

/** Options of {@link responseSenderPythonModel}. */
export interface ResponseSenderModelOptions {
  /** `model_transaction_policy { decoupled: true }`. */
  readonly decoupled: boolean;
  /** `async def execute`, the responses after return sent by an asyncio task (else a thread). */
  readonly async: boolean;
}

/** Seconds after `execute` returned at which {@link responseSenderPythonModel} sends its late responses. */
export const RESPONSE_SENDER_LATE_SECONDS = 0.3;

/**
 * A model whose requests say how to answer them (Triton's response-sender cases): INT32 PLAN [5]
 * = [responses before return, final flag before return, return a response, responses after
 * return, final flag after return] (max_batch_size 8, a request's rows summed; dynamic batching
 * with a 200 ms queue delay, so requests sent together share one `execute`). Each response is
 * UINT16 INDEX [rows, 1]: 0 for the returned response, 1000 + i for the i-th sent before
 * returning, 2000 + i for the i-th sent {@link RESPONSE_SENDER_LATE_SECONDS} s after returning
 * (from a thread, or from an asyncio task for the async variant). `execute` returns None when no
 * request asked for a returned response.
 */
export function responseSenderPythonModel(
  name: string,
  options: ResponseSenderModelOptions,
): GeneratedPythonModel {
  const later = options.async
    ? `        async def late():
            await asyncio.sleep(LATE_SECONDS)
            send_late(plans)

        task = asyncio.create_task(late())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)`
    : `        timer = threading.Timer(LATE_SECONDS, send_late, args=(plans,))
        timer.daemon = True
        timer.start()`;
  return pyModel(
    name,
    'max_batch_size: 8\n' +
      (options.decoupled ? 'model_transaction_policy { decoupled: true }\n' : '') +
      'input [ { name: "PLAN" data_type: TYPE_INT32 dims: [ 5 ] } ]\n' +
      'output [ { name: "INDEX" data_type: TYPE_UINT16 dims: [ 1 ] } ]\n' +
      'dynamic_batching { max_queue_delay_microseconds: 200000 }\n',
    `import asyncio
import threading

import numpy as np
import triton_python_backend_utils as pb_utils

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
LATE_SECONDS = ${RESPONSE_SENDER_LATE_SECONDS}


def indexed(rows, index):
    return pb_utils.InferenceResponse([pb_utils.Tensor("INDEX", np.full((rows, 1), index, dtype=np.uint16))])


class Plan:
    def __init__(self, request):
        plan = pb_utils.get_input_tensor_by_name(request, "PLAN").as_numpy()
        self.rows = plan.shape[0]
        self.before, self.final_before, self.returned, self.after, self.final_after = (
            int(v) for v in plan.sum(axis=0)
        )
        uses_sender = self.before or self.final_before or self.after or self.final_after
        self.sender = request.get_response_sender() if uses_sender else None


def send(plan, count, final, first_index):
    for i in range(count):
        plan.sender.send(indexed(plan.rows, first_index + i))
    if final:
        plan.sender.send(flags=FINAL)


def send_late(plans):
    for plan in plans:
        send(plan, plan.after, plan.final_after, 2000)


class TritonPythonModel:
    def initialize(self, args):
        self.tasks = set()

    ${options.async ? 'async ' : ''}def execute(self, requests):
        plans = [Plan(request) for request in requests]
        for plan in plans:
            send(plan, plan.before, plan.final_before, 1000)
${later}
        returned = [indexed(plan.rows, 0) if plan.returned else None for plan in plans]
        return None if all(r is None for r in returned) else returned
`,
  );
}

/**
 * BYTES PARAMETERS [1] (max_batch_size 0) holds JSON; the model answers with those response
 * parameters (`InferenceResponse(parameters=…)`) and BYTES OUTPUT [1] = `response.parameters()`.
 * A key "#<digits>" becomes that int, to try a non-str key. When `InferenceResponse` refuses the
 * parameters, the answer is that error as INVALID_ARG. Decoupled: PARAMETERS is a JSON list, one
 * response per element, then the final flag alone.
 */
export function responseParametersPythonModel(
  name: string,
  options: { readonly decoupled?: boolean } = {},
): GeneratedPythonModel {
  const decoupled = options.decoupled === true;
  const execute = decoupled
    ? `    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            for wanted in json.loads(text_of(request)):
                sender.send(answer(wanted))
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
`
    : `    def execute(self, requests):
        return [answer(json.loads(text_of(request))) for request in requests]
`;
  return pyModel(
    name,
    'max_batch_size: 0\n' +
      (decoupled ? 'model_transaction_policy { decoupled: true }\n' : '') +
      'input [ { name: "PARAMETERS" data_type: TYPE_STRING dims: [ 1 ] } ]\n' +
      'output [ { name: "OUTPUT" data_type: TYPE_STRING dims: [ 1 ] } ]\n',
    `import json

import numpy as np
import triton_python_backend_utils as pb_utils


def text_of(request):
    return pb_utils.get_input_tensor_by_name(request, "PARAMETERS").as_numpy()[0].decode("utf-8")


def with_int_keys(wanted):
    if not isinstance(wanted, dict):
        return wanted
    return {int(k[1:]) if isinstance(k, str) and k[:1] == "#" and k[1:].isdigit() else k: v for k, v in wanted.items()}


def answer(wanted):
    try:
        response = pb_utils.InferenceResponse(output_tensors=[], parameters=with_int_keys(wanted))
        text = response.parameters()
        out = pb_utils.Tensor("OUTPUT", np.array([text.encode("utf-8")], dtype=np.object_))
        return pb_utils.InferenceResponse(output_tensors=[out], parameters=with_int_keys(wanted))
    except Exception as error:
        return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(error), pb_utils.TritonError.INVALID_ARG))


class TritonPythonModel:
${execute}`,
  );
}

/** Options of {@link asyncExecutePythonModel}. */
export interface AsyncExecuteModelOptions {
  /** Decoupled (default): execute runs in the background; else the responses are returned. */
  readonly decoupled?: boolean;
}

/**
 * `async def execute`: FP32 WAIT_SECONDS [1] (max_batch_size 8, dynamic batching) → FP32 DUMMY_OUT
 * [1] = 0 per row, answered after `asyncio.sleep` of the request's largest value (the requests of
 * one call sleep concurrently). Decoupled (default; no queue delay): each request gets its response
 * with the final flag through its sender, so calls run concurrently on the stub's event loop; a
 * negative value sends the final flags and raises ValueError("wait seconds must not be negative"),
 * and -2 raises it without sending anything. Non-decoupled (300 ms queue delay, so requests sent
 * together share a call): the responses are returned.
 */
export function asyncExecutePythonModel(
  name: string,
  options: AsyncExecuteModelOptions = {},
): GeneratedPythonModel {
  const decoupled = options.decoupled !== false;
  const finish = decoupled
    ? `        for request, rows in zip(requests, rows_of):
            request.get_response_sender().send(zeros(rows), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
`
    : `        return [zeros(rows) for rows in rows_of]
`;
  return pyModel(
    name,
    'max_batch_size: 8\n' +
      (decoupled ? 'model_transaction_policy { decoupled: true }\n' : '') +
      'input [ { name: "WAIT_SECONDS" data_type: TYPE_FP32 dims: [ 1 ] } ]\n' +
      'output [ { name: "DUMMY_OUT" data_type: TYPE_FP32 dims: [ 1 ] } ]\n' +
      (decoupled ? 'dynamic_batching { }\n' : 'dynamic_batching { max_queue_delay_microseconds: 300000 }\n'),
    `import asyncio

import numpy as np
import triton_python_backend_utils as pb_utils


def zeros(rows):
    return pb_utils.InferenceResponse([pb_utils.Tensor("DUMMY_OUT", np.zeros((rows, 1), dtype=np.float32))])


class TritonPythonModel:
    async def execute(self, requests):
        waits = [float(pb_utils.get_input_tensor_by_name(r, "WAIT_SECONDS").as_numpy().max()) for r in requests]
        rows_of = [pb_utils.get_input_tensor_by_name(r, "WAIT_SECONDS").as_numpy().shape[0] for r in requests]
        if any(w < 0 for w in waits):
            if ${decoupled ? 'all(w != -2 for w in waits)' : 'False'}:
                for request in requests:
                    request.get_response_sender().send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
            raise ValueError("wait seconds must not be negative")
        await asyncio.gather(*(asyncio.sleep(w) for w in waits))
${finish}`,
  );
}

/**
 * INT32 CODE [1] (max_batch_size 0) → INT32 OUT [1] = CODE, except: 0…7 answer
 * `TritonError("error code <n>", n)` (UNKNOWN … CANCELLED) and -1 raises
 * RuntimeError("execute raised for code -1") from `execute`.
 */
export function errorCodePythonModel(name: string): GeneratedPythonModel {
  return pyModel(
    name,
    'max_batch_size: 0\n' +
      'input [ { name: "CODE" data_type: TYPE_INT32 dims: [ 1 ] } ]\n' +
      'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]\n',
    `import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            code = int(pb_utils.get_input_tensor_by_name(request, "CODE").as_numpy()[0])
            if code == -1:
                raise RuntimeError("execute raised for code -1")
            if 0 <= code <= 7:
                responses.append(pb_utils.InferenceResponse(error=pb_utils.TritonError(f"error code {code}", code)))
            else:
                out = pb_utils.Tensor("OUT", np.array([code], dtype=np.int32))
                responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
`,
  );
}

/**
 * A decoupled model made so by `auto_complete_config` (config.pbtxt has no transaction policy):
 * it checks `pb_utils.using_decoupled_model_transaction_policy` before (false) and after setting
 * it, and `initialize` refuses to load unless the final config is decoupled. INT32 IN [1] = n →
 * n responses OUT = n, then the final flag.
 */
export function decoupledPolicyPythonModel(name: string): GeneratedPythonModel {
  return pyModel(
    name,
    'max_batch_size: 0\n' +
      'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]\n' +
      'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]\n',
    `import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        if pb_utils.using_decoupled_model_transaction_policy(auto_complete_model_config.as_dict()):
            raise pb_utils.TritonModelException("the config was decoupled before auto_complete_config")
        auto_complete_model_config.set_model_transaction_policy({"decoupled": True})
        if not pb_utils.using_decoupled_model_transaction_policy(auto_complete_model_config.as_dict()):
            raise pb_utils.TritonModelException("set_model_transaction_policy did not make the model decoupled")
        return auto_complete_model_config

    def initialize(self, args):
        if not pb_utils.using_decoupled_model_transaction_policy(json.loads(args["model_config"])):
            raise pb_utils.TritonModelException("this model must run with the decoupled transaction policy")

    def execute(self, requests):
        for request in requests:
            n = int(pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()[0])
            sender = request.get_response_sender()
            for _ in range(n):
                sender.send(pb_utils.InferenceResponse([pb_utils.Tensor("OUT", np.array([n], dtype=np.int32))]))
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
`,
  );
}
