"""GourmetGram streamed caption: a decoupled Triton Python-backend model.

Contract (see ../config.pbtxt):
  INPUT_IMAGE  BYTES [1]  the base64 text of one photo (food_classifier's input contract)
  TEXT         BYTES [1]  one word of the caption per response, with the space before it (all but
                          the first); the final flag follows alone

The photo is classified by food_classifier through BLS (Business Logic Scripting); its
probabilities are then worded ("Likely Seafood, 84 %, or Rice, 9 %.") and sent word by word, with
`word_delay_ms` between words. Before each word the request's cancellation is checked: a cancelled
request (the client disconnected or cancelled its stream) stops at once with a CANCELLED error and
the final flag, and the model logs how far it got.

Request parameters (the generate extension's `parameters`, or any request's): `top_k` (classes
named at most, 1..number of labels) and `word_delay_ms` (0..2000) override the config's values.
"""

import json
import os
import threading
import time

import numpy as np

import triton_python_backend_utils as pb_utils

INPUT_NAME = "INPUT_IMAGE"
OUTPUT_NAME = "TEXT"

DEFAULT_PARAMETERS = {
    "classifier_model_name": "food_classifier",
    "labels_path": "../food_classifier/labels.txt",
    "top_k": "3",
    "word_delay_ms": "60",
}
MAX_WORD_DELAY_MS = 2000
# Alternatives below this share are not worth naming.
MIN_ALTERNATIVE = 0.01


def read_parameters(model_config):
    """The string parameters of a model config (Triton's JSON form), over the defaults."""
    values = dict(DEFAULT_PARAMETERS)
    for key, value in (model_config.get("parameters") or {}).items():
        if isinstance(value, dict) and "string_value" in value:
            values[key] = value["string_value"]
    return values


def percent(probability):
    """"84 %" (a no-break space, so number and sign are one word), or "<1 %" for what rounds to nothing."""
    value = int(round(float(probability) * 100))
    return "<1\u00a0%" if value < 1 else f"{value}\u00a0%"


def caption(labels, probabilities, top_k):
    """The caption of one photo's class probabilities (label order), naming at most top_k classes."""
    order = [int(i) for i in np.argsort(-np.asarray(probabilities, dtype=np.float64), kind="stable")]
    best = order[0]
    lead = "Likely" if probabilities[best] >= 0.5 else "Perhaps"
    parts = [f"{lead} {labels[best]}, {percent(probabilities[best])}"]
    for index in order[1:top_k]:
        if probabilities[index] < MIN_ALTERNATIVE:
            break
        parts.append(f"or {labels[index]}, {percent(probabilities[index])}")
    return ", ".join(parts) + "."


def words(text):
    """The pieces sent one per response: each word with the space before it (but the first)."""
    split = text.split(" ")
    return [split[0]] + [" " + word for word in split[1:]]


class RequestError(Exception):
    """A request the model cannot answer; `code` is a pb_utils.TritonError code."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def _int_parameter(parameters, key, default, low, high):
    if key not in parameters:
        return default
    value = parameters[key]
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise RequestError(f"food_caption: parameter {key} must be an integer", pb_utils.TritonError.INVALID_ARG)
    try:
        number = int(value)
    except ValueError:
        raise RequestError(f"food_caption: parameter {key} must be an integer", pb_utils.TritonError.INVALID_ARG) from None
    if not low <= number <= high:
        raise RequestError(
            f"food_caption: parameter {key} must be between {low} and {high}, got {number}",
            pb_utils.TritonError.INVALID_ARG,
        )
    return number


class TritonPythonModel:
    def initialize(self, args):
        self.model_config = json.loads(args["model_config"])
        if not pb_utils.using_decoupled_model_transaction_policy(self.model_config):
            raise pb_utils.TritonModelException("food_caption: the config must set model_transaction_policy { decoupled: true }")
        parameters = read_parameters(self.model_config)
        self.classifier = parameters["classifier_model_name"]
        model_dir = args.get("model_repository") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        labels_path = os.path.normpath(os.path.join(model_dir, parameters["labels_path"]))
        if not os.path.isfile(labels_path):
            raise pb_utils.TritonModelException(f"food_caption: labels not found at {labels_path} (parameter labels_path)")
        with open(labels_path, encoding="utf-8") as handle:
            self.labels = [line.strip() for line in handle if line.strip()]
        if not self.labels:
            raise pb_utils.TritonModelException(f"food_caption: {labels_path} has no labels")
        try:
            self.top_k = _int_parameter(parameters, "top_k", 3, 1, len(self.labels))
            self.word_delay_ms = _int_parameter(parameters, "word_delay_ms", 60, 0, MAX_WORD_DELAY_MS)
        except RequestError as exc:
            raise pb_utils.TritonModelException(str(exc)) from None
        self.threads = set()
        self.threads_lock = threading.Lock()

    def execute(self, requests):
        # Decoupled: each request is answered from its own thread through its response sender.
        for request in requests:
            thread = threading.Thread(target=self._answer, args=(request,), daemon=True)
            with self.threads_lock:
                self.threads.add(thread)
            thread.start()
        return None

    def _answer(self, request):
        sender = request.get_response_sender()
        try:
            self._stream(request, sender)
        except RequestError as exc:
            error = pb_utils.TritonError(str(exc), exc.code)
            sender.send(pb_utils.InferenceResponse(error=error), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        except Exception as exc:  # never leave a request without its final flag
            error = pb_utils.TritonError(f"food_caption: {type(exc).__name__}: {exc}")
            sender.send(pb_utils.InferenceResponse(error=error), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        finally:
            with self.threads_lock:
                self.threads.discard(threading.current_thread())

    def _request_parameters(self, request):
        try:
            parameters = json.loads(request.parameters() or "{}")
        except ValueError:
            parameters = {}
        top_k = _int_parameter(parameters, "top_k", self.top_k, 1, len(self.labels))
        delay = _int_parameter(parameters, "word_delay_ms", self.word_delay_ms, 0, MAX_WORD_DELAY_MS)
        return top_k, delay

    def _classify(self, image):
        """food_classifier's probabilities (label order) for one photo, by BLS."""
        call = pb_utils.InferenceRequest(
            model_name=self.classifier,
            inputs=[pb_utils.Tensor(INPUT_NAME, np.array([image], dtype=np.object_).reshape(1, 1))],
            requested_output_names=["PROBABILITIES"],
        )
        answer = call.exec()
        if answer.has_error():
            error = answer.error()
            raise RequestError(f"food_caption: {self.classifier}: {error.message()}", error.code())
        tensor = pb_utils.get_output_tensor_by_name(answer, "PROBABILITIES")
        if tensor is None:
            raise RequestError(
                f"food_caption: {self.classifier} answered no PROBABILITIES output", pb_utils.TritonError.INTERNAL
            )
        probabilities = tensor.as_numpy().reshape(-1)
        if probabilities.size != len(self.labels):
            raise RequestError(
                f"food_caption: {self.classifier} answered {probabilities.size} probabilities for "
                f"{len(self.labels)} labels",
                pb_utils.TritonError.INTERNAL,
            )
        return probabilities

    def _stream(self, request, sender):
        top_k, delay = self._request_parameters(request)
        tensor = pb_utils.get_input_tensor_by_name(request, INPUT_NAME)
        if tensor is None:
            raise RequestError(f"food_caption: request has no input tensor named {INPUT_NAME}", pb_utils.TritonError.INVALID_ARG)
        elements = tensor.as_numpy().reshape(-1)
        if elements.size != 1:
            raise RequestError(
                f"food_caption: {INPUT_NAME} must hold one photo, got {elements.size}", pb_utils.TritonError.INVALID_ARG
            )
        pieces = words(caption(self.labels, self._classify(elements[0]), top_k))
        for index, piece in enumerate(pieces):
            if index > 0 and delay > 0:
                time.sleep(delay / 1000)
            if sender.is_cancelled():
                pb_utils.Logger.log_info(
                    f"food_caption: request '{request.request_id()}' cancelled after {index} of {len(pieces)} words"
                )
                error = pb_utils.TritonError("request has been cancelled", pb_utils.TritonError.CANCELLED)
                sender.send(pb_utils.InferenceResponse(error=error), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                return
            text = pb_utils.Tensor(OUTPUT_NAME, np.array([piece.encode("utf-8")], dtype=np.object_))
            sender.send(pb_utils.InferenceResponse(output_tensors=[text]))
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

    def finalize(self):
        # Let the requests in flight finish (each thread sends its final flag) before the stub exits.
        with self.threads_lock:
            threads = list(self.threads)
        for thread in threads:
            thread.join(timeout=5)
