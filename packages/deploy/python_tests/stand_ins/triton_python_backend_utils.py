"""TEST STAND-IN for Triton's `triton_python_backend_utils` module.

The real module exists only inside Triton's Python backend stub. This stand-in implements the part
of its documented API that models_staging/food_classifier/1/model.py uses, with the same names and
call shapes, and is strict where the real one is strict (output tensors must be numeric or
object/bytes arrays; BLS only inside execute()), so the model can be run and checked under plain
Debian python3. It is never shipped in an image.

Business Logic Scripting: `InferenceRequest(model_name=..., requested_output_names=[...],
inputs=[...]).exec()` dispatches to the handler a test registered for that model name with
`serve_model(name, handler)` (test-only, not part of Triton's API); a handler takes the request and
returns an InferenceResponse. An unregistered name answers Triton's error for an unknown model.
"""

import contextlib

import numpy as np

_TRITON_TO_NUMPY = {
    "TYPE_BOOL": np.bool_,
    "TYPE_UINT8": np.uint8,
    "TYPE_UINT16": np.uint16,
    "TYPE_UINT32": np.uint32,
    "TYPE_UINT64": np.uint64,
    "TYPE_INT8": np.int8,
    "TYPE_INT16": np.int16,
    "TYPE_INT32": np.int32,
    "TYPE_INT64": np.int64,
    "TYPE_FP16": np.float16,
    "TYPE_FP32": np.float32,
    "TYPE_FP64": np.float64,
    "TYPE_STRING": np.object_,
}


class TritonModelException(Exception):
    pass


class TritonError:
    # Triton's codes (python_backend's pb_utils.TritonError, TRITONSERVER_Error_Code order).
    UNKNOWN = 0
    INTERNAL = 1
    NOT_FOUND = 2
    INVALID_ARG = 3
    UNAVAILABLE = 4
    UNSUPPORTED = 5
    ALREADY_EXISTS = 6
    CANCELLED = 7

    def __init__(self, message, code=INTERNAL):
        self._message = message
        self._code = code

    def message(self):
        return self._message

    def code(self):
        return self._code


class Tensor:
    def __init__(self, name, array):
        if not isinstance(array, np.ndarray):
            raise TritonModelException(f"Tensor {name}: expected a numpy array, got {type(array).__name__}")
        if array.dtype.kind == "U":
            raise TritonModelException(f"Tensor {name}: unicode arrays are not supported; use object/bytes")
        if array.dtype == np.object_:
            for element in array.reshape(-1):
                if not isinstance(element, (bytes, np.bytes_)):
                    raise TritonModelException(
                        f"Tensor {name}: BYTES elements must be bytes, got {type(element).__name__}"
                    )
        self._name = name
        self._array = array

    def name(self):
        return self._name

    def as_numpy(self):
        return self._array

    def is_cpu(self):
        return True


# Memory types of tritonserver.h's TRITONSERVER_MemoryType, for PreferredMemory.
TRITONSERVER_MEMORY_CPU = 0
TRITONSERVER_MEMORY_CPU_PINNED = 1
TRITONSERVER_MEMORY_GPU = 2


class PreferredMemory:
    def __init__(self, preferred_memory_type, preferred_device_id=0):
        self.preferred_memory_type = preferred_memory_type
        self.preferred_device_id = preferred_device_id


# TEST-ONLY state: the models BLS requests reach, and whether BLS is allowed right now.
_MODELS = {}
_BLS_ALLOWED = [True]


def serve_model(name, handler):
    """TEST-ONLY: make BLS requests for `name` call handler(request) -> InferenceResponse."""
    _MODELS[name] = handler


def clear_models():
    """TEST-ONLY: forget every model registered with serve_model."""
    _MODELS.clear()


@contextlib.contextmanager
def bls_disabled():
    """TEST-ONLY: Triton supports BLS only inside execute(); wrap initialize()/finalize() in this."""
    _BLS_ALLOWED.append(False)
    try:
        yield
    finally:
        _BLS_ALLOWED.pop()


class InferenceRequest:
    """The requests Triton's scheduler hands execute(), and BLS requests a model builds and exec()s."""

    def __init__(
        self,
        inputs,
        model_name="",
        requested_output_names=(),
        request_id="",
        correlation_id=0,
        model_version=-1,
        flags=0,
        timeout=0,
        preferred_memory=None,
    ):
        for tensor in inputs:
            if not isinstance(tensor, Tensor):
                raise TritonModelException("InferenceRequest inputs must be pb_utils.Tensor objects")
        for name in requested_output_names:
            if not isinstance(name, str):
                raise TritonModelException("requested_output_names must be strings")
        if preferred_memory is not None and not isinstance(preferred_memory, PreferredMemory):
            raise TritonModelException("preferred_memory must be a pb_utils.PreferredMemory")
        self._inputs = list(inputs)
        self._model_name = model_name
        self._requested_output_names = list(requested_output_names)
        self._request_id = request_id
        self._model_version = model_version
        self._timeout = timeout
        self.preferred_memory = preferred_memory

    def model_name(self):
        return self._model_name

    def exec(self, decoupled=False):
        if not _BLS_ALLOWED[-1]:
            raise TritonModelException("BLS requests are supported only inside execute()")
        if decoupled:
            raise TritonModelException("the stand-in has no decoupled models")
        handler = _MODELS.get(self._model_name)
        if handler is None:
            return InferenceResponse(
                output_tensors=[],
                error=TritonError(f"Request for unknown model: '{self._model_name}' is not found"),
            )
        response = handler(self)
        if not isinstance(response, InferenceResponse):
            raise TypeError("a served model's handler must return an InferenceResponse")
        return response

    def inputs(self):
        return list(self._inputs)

    def request_id(self):
        return self._request_id

    def requested_output_names(self):
        return list(self._requested_output_names)


class InferenceResponse:
    def __init__(self, output_tensors, error=None):
        if error is not None and not isinstance(error, TritonError):
            raise TritonModelException("InferenceResponse error must be a TritonError")
        for tensor in output_tensors:
            if not isinstance(tensor, Tensor):
                raise TritonModelException("InferenceResponse output_tensors must hold Tensor objects")
        self._output_tensors = list(output_tensors)
        self._error = error

    def output_tensors(self):
        return list(self._output_tensors)

    def has_error(self):
        return self._error is not None

    def error(self):
        return self._error


def get_input_tensor_by_name(request, name):
    for tensor in request.inputs():
        if tensor.name() == name:
            return tensor
    return None


def get_output_tensor_by_name(response, name):
    for tensor in response.output_tensors():
        if tensor.name() == name:
            return tensor
    return None


def get_output_config_by_name(model_config, name):
    for output in model_config.get("output", []):
        if output.get("name") == name:
            return output
    return None


def get_input_config_by_name(model_config, name):
    for entry in model_config.get("input", []):
        if entry.get("name") == name:
            return entry
    return None


def triton_string_to_numpy(triton_type):
    return _TRITON_TO_NUMPY[triton_type]


class Logger:
    """Collects log lines so tests can read them."""

    lines = []

    @classmethod
    def log_info(cls, message):
        cls.lines.append(("info", message))

    @classmethod
    def log_warn(cls, message):
        cls.lines.append(("warn", message))

    @classmethod
    def log_error(cls, message):
        cls.lines.append(("error", message))

    @classmethod
    def log_verbose(cls, message):
        cls.lines.append(("verbose", message))
