"""triton_python_backend_utils for tritonserver-ts.

Written for tritonserver-ts from the documented API and observed behaviour of NVIDIA Triton's
Python backend (the module a `model.py` imports as `pb_utils`); none of Triton's code is copied.
The stub (`tritonserver_ts_stub.py`) wires the parts that talk to the server (BLS, the response
sender, the logger) through `_set_channel`. The server README's "pb_utils" table lists what exists
here, what does not, and why.
"""

import ctypes
import json
import threading

import numpy as np

# Request flags (TRITONSERVER_RequestFlag), response flags (TRITONSERVER_ResponseCompleteFlag) and
# request release flags (TRITONSERVER_RequestReleaseFlag).
TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1
TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2
TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
TRITONSERVER_REQUEST_RELEASE_ALL = 1
TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2

# Preferred memory kinds of a BLS request (Triton's PreferredMemory.MemoryType values). Every
# tensor here is in CPU memory.
TRITONSERVER_MEMORY_GPU = 0
TRITONSERVER_MEMORY_CPU = 1

# The model config's datatypes as numpy types (Triton's table has the same keys).
TRITON_STRING_TO_NUMPY = {
    "TYPE_BOOL": bool,
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


class PreferredMemory:
    """Where a BLS response's tensors should be (accepted; they are always in CPU memory here)."""

    def __init__(self, preferred_memory_type, preferred_device_id=0):
        if preferred_memory_type is None or preferred_device_id is None:
            raise TypeError("PreferredMemory takes a memory type and a device id, not None")
        self.preferred_memory_type = preferred_memory_type
        self.preferred_device_id = preferred_device_id


class InferenceTrace:
    """The trace of a request (`request.trace()`). A BLS request built with `trace=request.trace()`
    of a traced request is traced as its child, as in Triton. There is no OpenTelemetry context
    here: `get_context()` is None (Triton's answer in its own trace mode)."""

    def __init__(self, _trace_id=None):
        self._trace_id = _trace_id

    def get_context(self):
        return None


# The stub's connection to the server (set by the stub before model.py is imported).
_channel = None
# The directory of the model.py being served (`get_model_dir`), set by the stub.
_model_dir = None


def _set_channel(channel):
    global _channel
    _channel = channel


def _set_model_dir(directory):
    global _model_dir
    _model_dir = directory


def get_model_dir():
    """The directory holding the model's model.py (its version directory)."""
    return _model_dir


# ---------------------------------------------------------------------------------------------
# Datatypes

_TRITON_TO_NUMPY = {
    "BOOL": np.bool_,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "FP16": np.float16,
    "FP32": np.float32,
    "FP64": np.float64,
    "BYTES": np.object_,
}

# Triton's numeric datatype codes (TRITONSERVER_DataType), as triton_to_numpy_type takes them.
_TYPE_CODES = {
    1: "BOOL",
    2: "UINT8",
    3: "UINT16",
    4: "UINT32",
    5: "UINT64",
    6: "INT8",
    7: "INT16",
    8: "INT32",
    9: "INT64",
    10: "FP16",
    11: "FP32",
    12: "FP64",
    13: "BYTES",
}
_CODE_OF = {name: code for code, name in _TYPE_CODES.items()}


def triton_string_to_numpy(triton_type_string):
    """The numpy type of a config datatype (`TYPE_FP32`; also a protocol datatype, `FP32`)."""
    name = str(triton_type_string)
    if name in TRITON_STRING_TO_NUMPY:
        return TRITON_STRING_TO_NUMPY[name]
    if name.startswith("TYPE_"):
        name = name[5:]
    if name == "STRING":
        name = "BYTES"
    if name not in _TRITON_TO_NUMPY:
        raise TritonModelException(f"datatype '{triton_type_string}' has no numpy equivalent")
    return _TRITON_TO_NUMPY[name]


def triton_to_numpy_type(data_type):
    """The numpy type of a TRITONSERVER_DataType code (or a datatype name); None when there is none."""
    if isinstance(data_type, str):
        return triton_string_to_numpy(data_type)
    name = _TYPE_CODES.get(int(data_type))
    return None if name is None else _TRITON_TO_NUMPY[name]


def numpy_to_triton_type(data_type):
    """The TRITONSERVER_DataType code of a numpy type; None when there is none."""
    try:
        dtype = np.dtype(data_type)
    except TypeError:
        return None
    name = _datatype_of_dtype(dtype)
    return None if name is None else _CODE_OF[name]


def _datatype_of_dtype(dtype):
    if dtype == np.object_ or dtype.kind in ("S", "U"):
        return "BYTES"
    for name, np_type in _TRITON_TO_NUMPY.items():
        if name != "BYTES" and dtype == np.dtype(np_type):
            return name
    return None


def serialize_byte_tensor(input_tensor):
    """A BYTES tensor in Triton's layout: each element (C order) as a 4-byte little-endian length
    and its bytes. `str` elements are UTF-8 encoded, other objects through `str()`."""
    parts = []
    for element in np.asarray(input_tensor, dtype=np.object_).reshape(-1):
        if isinstance(element, str):
            element = element.encode("utf-8")
        elif not isinstance(element, (bytes, bytearray, memoryview)):
            element = str(element).encode("utf-8")
        element = bytes(element)
        parts.append(len(element).to_bytes(4, "little"))
        parts.append(element)
    return b"".join(parts)


def deserialize_bytes_tensor(encoded_tensor):
    """The elements of a serialized BYTES tensor, as a 1-D numpy object array of bytes."""
    view = memoryview(encoded_tensor).cast("B")
    items = []
    offset = 0
    while offset < len(view):
        length = int.from_bytes(view[offset : offset + 4], "little")
        offset += 4
        items.append(bytes(view[offset : offset + length]))
        offset += length
    result = np.empty(len(items), dtype=np.object_)
    result[:] = items
    return result


# ---------------------------------------------------------------------------------------------
# Errors


class TritonModelException(Exception):
    """Raised by this module for invalid use (Triton's pb_utils.TritonModelException); `str(e)` is
    the message."""

    def message(self):
        return str(self.args[0]) if self.args else ""


class TritonError:
    """An error for a response: a message and one of Triton's status codes (TRITONSERVER_Error_Code)."""

    UNKNOWN = 0
    INTERNAL = 1
    NOT_FOUND = 2
    INVALID_ARG = 3
    UNAVAILABLE = 4
    UNSUPPORTED = 5
    ALREADY_EXISTS = 6
    CANCELLED = 7

    _NAMES = {
        0: "UNKNOWN",
        1: "INTERNAL",
        2: "NOT_FOUND",
        3: "INVALID_ARG",
        4: "UNAVAILABLE",
        5: "UNSUPPORTED",
        6: "ALREADY_EXISTS",
        7: "CANCELLED",
    }

    def __init__(self, message, code=INTERNAL):
        if message is None or code is None:
            raise TypeError("TritonError takes a message and a code, not None")
        if isinstance(code, bool) or not isinstance(code, int) or code not in TritonError._NAMES:
            raise TypeError(f"TritonError code must be one of TritonError.UNKNOWN … CANCELLED, got {code!r}")
        self._message = str(message)
        self._code = int(code)

    def message(self):
        return self._message

    def code(self):
        return self._code

    def _code_name(self):
        return TritonError._NAMES[self._code]

    def __repr__(self):
        return f"TritonError({self._message!r}, code={self._code_name()})"

    __str__ = message


def _error_from_name(message, name):
    codes = {v: k for k, v in TritonError._NAMES.items()}
    return TritonError(message, codes.get(name, TritonError.INTERNAL))


# ---------------------------------------------------------------------------------------------
# Parameters (requests and responses)


def _checked_parameters(parameters):
    """A request's or response's parameters: None or a dict whose keys are str and values bool, int
    or str, as Triton checks them (same messages); returns the dict (a copy)."""
    if parameters is None:
        return {}
    if not isinstance(parameters, dict):
        raise TritonModelException(f"Expect dict, got {type(parameters)}")
    for key, value in parameters.items():
        if not isinstance(key, str):
            raise TritonModelException(f"Expect parameters keys to have type str, found type {type(key)}")
        if not isinstance(value, (bool, int, str)):
            raise TritonModelException(
                f"Expect parameters values to have type bool/int/str, found type {type(value)}"
            )
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
            raise TritonModelException(f"parameter '{key}': {value} does not fit a 64-bit signed integer")
    return dict(parameters)


def _parameters_wire(parameters):
    """The parameters as the stub sends them: [key, kind, value], ints as decimal text (exact)."""
    out = []
    for key, value in parameters.items():
        if isinstance(value, bool):
            out.append([key, "bool", value])
        elif isinstance(value, int):
            out.append([key, "int", str(value)])
        else:
            out.append([key, "string", value])
    return out


def _parameters_from_wire(entries):
    result = {}
    for key, kind, value in entries or []:
        result[key] = int(value) if kind == "int" else value
    return result


# ---------------------------------------------------------------------------------------------
# Tensors


def _capsule_device(capsule):
    """(device_type, device_id) of an unused DLPack capsule (DLManagedTensor starts with DLTensor:
    a data pointer, then DLDevice {int32 device_type, int32 device_id})."""
    api = ctypes.pythonapi
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if not api.PyCapsule_IsValid(capsule, b"dltensor"):
        raise TritonModelException("from_dlpack takes an unused 'dltensor' capsule or an object with __dlpack__")
    address = api.PyCapsule_GetPointer(capsule, b"dltensor")
    device = (ctypes.c_int32 * 2).from_address(address + ctypes.sizeof(ctypes.c_void_p))
    return int(device[0]), int(device[1])


class _CapsuleHolder:
    """Gives numpy.from_dlpack (which takes objects with __dlpack__) a bare capsule."""

    def __init__(self, capsule, device):
        self._capsule = capsule
        self._device = device

    def __dlpack__(self, stream=None):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


_DL_CPU = 1


class Tensor:
    """A named tensor held as a numpy array in CPU memory (BYTES: an object array of bytes)."""

    def __init__(self, name, numpy_array):
        if not isinstance(name, str):
            raise TypeError(f"a Tensor's name must be a str, got {type(name)}")
        if name == "":
            raise TritonModelException("Tensor name cannot be an empty string.")
        if not isinstance(numpy_array, np.ndarray):
            raise TritonModelException(
                f"Tensor '{name}': expected a numpy.ndarray, got {type(numpy_array).__name__}"
            )
        if numpy_array.dtype.kind in ("S", "U"):
            numpy_array = numpy_array.astype(np.object_)
        if _datatype_of_dtype(numpy_array.dtype) is None:
            raise TritonModelException(f"Tensor '{name}': numpy dtype {numpy_array.dtype} has no Triton datatype")
        self._name = name
        self._array = numpy_array

    @staticmethod
    def from_numpy(name, numpy_array):
        return Tensor(name, numpy_array)

    @staticmethod
    def from_dlpack(name, dlpack_tensor):
        """A tensor over a DLPack capsule or an object with `__dlpack__` (CPU memory, C order);
        it shares the producer's memory."""
        if name == "":
            raise TritonModelException("Tensor name cannot be an empty string.")
        source = dlpack_tensor
        if type(dlpack_tensor).__name__ == "PyCapsule":
            source = _CapsuleHolder(dlpack_tensor, _capsule_device(dlpack_tensor))
        elif not hasattr(dlpack_tensor, "__dlpack__"):
            raise TritonModelException("from_dlpack takes a DLPack capsule or an object with __dlpack__")
        if hasattr(source, "__dlpack_device__"):
            device_type = int(source.__dlpack_device__()[0])
            if device_type != _DL_CPU:
                raise TritonModelException(f"DLDevice type {device_type} is not support by Python backend.")
        try:
            array = np.from_dlpack(source)
        except (BufferError, TypeError, RuntimeError) as error:
            raise TritonModelException(f"Tensor '{name}': {error}") from None
        if not array.flags["C_CONTIGUOUS"]:
            raise TritonModelException(
                "DLPack tensor is not contiguous. Only contiguous DLPack tensors that are stored in C-Order are supported."
            )
        return Tensor(name, array)

    def name(self):
        return self._name

    def as_numpy(self):
        return self._array

    def triton_dtype(self):
        return numpy_to_triton_type(self._array.dtype)

    def datatype(self):
        """The protocol datatype (`FP32`, `BYTES`, …); tritonserver-ts's addition."""
        return _datatype_of_dtype(self._array.dtype)

    def shape(self):
        return [int(d) for d in self._array.shape]

    def is_cpu(self):
        return True

    def to_dlpack(self):
        """A DLPack capsule over the tensor's memory (not for BYTES tensors)."""
        return self.__dlpack__()

    def __dlpack__(self, stream=None):
        if self._array.dtype == np.object_:
            raise TritonModelException("DLPack does not have support for string tensors.")
        if not self._array.flags["C_CONTIGUOUS"]:
            self._array = np.ascontiguousarray(self._array)
        try:
            return self._array.__dlpack__()
        except (BufferError, TypeError) as error:
            raise TritonModelException(f"Tensor '{self._name}': {error}") from None

    def __dlpack_device__(self):
        return (_DL_CPU, 0)

    def __repr__(self):
        return f"Tensor({self._name!r}, {self.datatype()}, shape={self.shape()})"


def get_input_tensor_by_name(inference_request, name):
    """The input `name` of a request, or None."""
    for tensor in inference_request.inputs():
        if tensor.name() == name:
            return tensor
    return None


def get_output_tensor_by_name(inference_response, name):
    """The output `name` of a response, or None."""
    for tensor in inference_response.output_tensors():
        if tensor.name() == name:
            return tensor
    return None


def get_input_config_by_name(model_config, name):
    """The config entry of input `name` (model_config: a dict), or None."""
    for entry in model_config.get("input", []) or []:
        if entry.get("name") == name:
            return entry
    return None


def get_output_config_by_name(model_config, name):
    """The config entry of output `name` (model_config: a dict), or None."""
    for entry in model_config.get("output", []) or []:
        if entry.get("name") == name:
            return entry
    return None


def using_decoupled_model_transaction_policy(model_config):
    """Whether the model config (a dict) sets `model_transaction_policy { decoupled: true }`."""
    policy = model_config.get("model_transaction_policy") or {}
    return bool(policy.get("decoupled", False))


# ---------------------------------------------------------------------------------------------
# Responses and requests


class InferenceResponse:
    """A response: output tensors, or an error; and its parameters (keys str, values bool/int/str)."""

    def __init__(self, output_tensors=None, error=None, parameters=None):
        tensors = [] if output_tensors is None else output_tensors
        if not isinstance(tensors, (list, tuple)):
            raise TypeError(f"InferenceResponse output_tensors must be a list of pb_utils.Tensor, got {type(tensors)}")
        for tensor in tensors:
            if not isinstance(tensor, Tensor):
                raise TypeError(
                    f"InferenceResponse output_tensors must be pb_utils.Tensor objects, got {type(tensor)}"
                )
        if error is not None and not isinstance(error, TritonError):
            raise TypeError(f"InferenceResponse error must be a pb_utils.TritonError, got {type(error)}")
        self._tensors = list(tensors)
        self._error = error
        self._parameters = _checked_parameters(parameters)

    def output_tensors(self):
        return list(self._tensors)

    def has_error(self):
        return self._error is not None

    def error(self):
        return self._error

    def parameters(self):
        """The parameters as a JSON object (text), as Triton returns them."""
        return json.dumps(self._parameters)


class InferenceResponseSender:
    """Sends the responses of one request. A decoupled model sends any number, then the final flag;
    a non-decoupled one (as Triton allows) exactly one response, with or before the final flag,
    during `execute` or after it returned."""

    def __init__(self, batch, index, decoupled=True, request=None):
        self._batch = batch
        self._index = index
        self._decoupled = decoupled
        self._request = request
        self._sent = 0
        self._closed = False
        self._lock = threading.Lock()

    def send(self, response=None, flags=0):
        if flags != TRITONSERVER_RESPONSE_COMPLETE_FINAL and flags != 0:
            raise TritonModelException("Unable to send response. Unsupported flag provided.")
        if response is None and flags == 0:
            raise TritonModelException(
                "Inference Response object must be provided when the response flags is set to zero."
            )
        if response is not None and not isinstance(response, InferenceResponse):
            raise TypeError(f"send() takes a pb_utils.InferenceResponse, got {type(response)}")
        final = flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL
        with self._lock:
            if not self._decoupled:
                if response is not None and self._sent > 0:
                    raise TritonModelException(
                        "Unable to send response. Non-decoupled model cannot send more than one response."
                    )
                if response is None and final and self._sent == 0:
                    raise TritonModelException(
                        "Unable to send response. Non-decoupled model cannot send complete final before sending a response."
                    )
            if self._closed:
                raise TritonModelException("Unable to send response. Response sender has been closed.")
            if response is not None:
                self._sent += 1
            if final:
                self._closed = True
            _channel.send_response(self._batch, self._index, response, final)
        if final:
            _channel.closed(self._batch)

    def is_cancelled(self):
        return self._request is not None and self._request._cancelled


class InferenceRequest:
    """A request handed to execute(), or (built by the model) a BLS request to another model."""

    def __init__(
        self,
        request_id="",
        correlation_id=0,
        inputs=None,
        requested_output_names=None,
        model_name=None,
        model_version=-1,
        flags=0,
        timeout=0,
        preferred_memory=None,
        trace=None,
        parameters=None,
    ):
        if isinstance(correlation_id, bool) or not isinstance(correlation_id, (int, str)):
            raise TritonModelException("Correlation ID must be integer or string")
        self._model_name = model_name
        self._inputs = list(inputs or [])
        self._requested = list(requested_output_names or [])
        self._request_id = request_id
        self._correlation_id = correlation_id
        self._model_version = model_version
        self._flags = flags
        self._timeout = timeout
        self._preferred_memory = preferred_memory
        self._trace = trace if trace is not None else InferenceTrace()
        self._parameters = _checked_parameters(parameters)
        self._parameters_json = None
        self._release_flags = TRITONSERVER_REQUEST_RELEASE_ALL
        self._sender = None
        self._cancelled = False

    @classmethod
    def _received(
        cls, inputs, requested_output_names, request_id, correlation_id, flags, parameters_json, trace_id=None
    ):
        """A request of an execute() call: its parameters arrive as the JSON text the model reads."""
        request = cls(
            request_id=request_id,
            correlation_id=correlation_id,
            inputs=inputs,
            requested_output_names=requested_output_names,
            flags=flags,
            trace=InferenceTrace(trace_id),
        )
        request._parameters_json = parameters_json
        return request

    def inputs(self):
        return list(self._inputs)

    def requested_output_names(self):
        return list(self._requested)

    def request_id(self):
        return self._request_id

    def correlation_id(self):
        return self._correlation_id

    def flags(self):
        return self._flags

    def set_flags(self, flags):
        self._flags = flags

    def timeout(self):
        return self._timeout

    def model_name(self):
        """The model a BLS request is for (tritonserver-ts's addition)."""
        return self._model_name

    def parameters(self):
        """The request's parameters as a JSON object (text)."""
        if self._parameters_json is not None:
            return self._parameters_json
        return json.dumps(self._parameters)

    def trace(self):
        return self._trace

    def is_cancelled(self):
        """Whether the client cancelled this request (the server tells the stub as it happens)."""
        return self._cancelled

    def set_release_flags(self, flags):
        """Only TRITONSERVER_REQUEST_RELEASE_ALL: tritonserver-ts does not reschedule requests."""
        if flags == TRITONSERVER_REQUEST_RELEASE_RESCHEDULE:
            raise TritonModelException(
                "Request rescheduling (TRITONSERVER_REQUEST_RELEASE_RESCHEDULE) is not supported by tritonserver-ts"
            )
        if flags != TRITONSERVER_REQUEST_RELEASE_ALL:
            raise TritonModelException(f"unknown request release flags {flags!r}")
        self._release_flags = flags

    def get_response_sender(self):
        if self._sender is None:
            raise TritonModelException("Unable to get response sender: this request was not handed to execute().")
        return self._sender

    def _bls_request(self):
        if not self._model_name:
            raise TritonModelException("a BLS InferenceRequest needs a model_name")
        for tensor in self._inputs:
            if not isinstance(tensor, Tensor):
                raise TritonModelException("BLS inputs must be pb_utils.Tensor objects")
        return self

    def exec(self, decoupled=False):
        """Runs this request on a model of the same server; errors come back in response.error()."""
        if decoupled:
            raise TritonModelException("BLS requests to decoupled models are not supported by tritonserver-ts")
        return _channel.bls(self._bls_request()).result()

    def async_exec(self, decoupled=False):
        """Like exec(), as an awaitable (use it from an `async def execute`)."""
        import asyncio

        if decoupled:
            raise TritonModelException("BLS requests to decoupled models are not supported by tritonserver-ts")
        return asyncio.wrap_future(_channel.bls(self._bls_request()))


# ---------------------------------------------------------------------------------------------
# Logger


class Logger:
    """Writes to the server log (Triton's pb_utils.Logger)."""

    class LogLevel:
        INFO = 0
        WARNING = 1
        ERROR = 2
        VERBOSE = 3

    INFO = LogLevel.INFO
    WARNING = LogLevel.WARNING
    ERROR = LogLevel.ERROR
    VERBOSE = LogLevel.VERBOSE

    @staticmethod
    def log(message, level=0):
        _channel.log(int(level), str(message))

    @staticmethod
    def log_info(message):
        Logger.log(message, Logger.INFO)

    @staticmethod
    def log_warn(message):
        Logger.log(message, Logger.WARNING)

    @staticmethod
    def log_error(message):
        Logger.log(message, Logger.ERROR)

    @staticmethod
    def log_verbose(message):
        Logger.log(message, Logger.VERBOSE)


# ---------------------------------------------------------------------------------------------
# Custom metrics: families and metrics live in the server (shown on its /metrics beside Triton's
# own); each call here is a round trip to it, with the Python backend's error prefixes.


def _metric_call(prefix, header):
    if _channel is None:
        raise TritonModelException(f"{prefix}custom metrics are only available inside a model")
    answer = _channel.metric(header)
    if "error" in answer:
        raise TritonModelException(f"{prefix}{answer['error']}")
    return answer


def _metric_forget(header):
    channel = _channel
    if channel is None:
        return
    try:
        channel.metric_nowait(header)
    except Exception:  # the server went away: nothing to release any more
        pass


def _metric_number(value):
    return repr(float(value))


class MetricFamily:
    """A custom metric family (Triton's `pb_utils.MetricFamily(name, description, kind)`)."""

    COUNTER = 0
    GAUGE = 1
    HISTOGRAM = 2

    _KINDS = {0: "counter", 1: "gauge", 2: "histogram"}

    def __init__(self, name, description, kind):
        self._id = None
        if name is None or description is None or kind is None:
            raise TypeError("MetricFamily takes a name, a description and a kind, not None")
        if kind not in MetricFamily._KINDS:
            raise TritonModelException("Error when creating MetricFamily: Unknown metric kind")
        self._name = name
        self._kind = kind
        answer = _metric_call(
            "Error when creating MetricFamily: ",
            {"op": "family_new", "name": str(name), "description": str(description), "kind": MetricFamily._KINDS[kind]},
        )
        self._id = answer["id"]

    def Metric(self, labels=None, buckets=None):
        if labels is not None and not isinstance(labels, dict):
            raise TritonModelException("Failed to create metric. Labels must be a dictionary.")
        header = {"op": "metric_new", "family": self._id, "labels": labels or {}}
        if buckets is not None:
            header["buckets"] = [_metric_number(b) for b in buckets]
        answer = _metric_call("Error when creating Metric: ", header)
        return Metric(answer["id"])

    def __del__(self):
        if getattr(self, "_id", None) is not None:
            _metric_forget({"op": "family_delete", "family": self._id})


MetricKind = MetricFamily
COUNTER = MetricFamily.COUNTER
GAUGE = MetricFamily.GAUGE
HISTOGRAM = MetricFamily.HISTOGRAM


class Metric:
    """One metric of a family (made by `MetricFamily.Metric(labels, buckets)`)."""

    def __init__(self, metric_id):
        self._id = metric_id

    def increment(self, value):
        _metric_call(
            "Failed to increment metric value: ", {"op": "increment", "metric": self._id, "value": _metric_number(value)}
        )

    def set(self, value):
        _metric_call("Failed to set metric value: ", {"op": "set", "metric": self._id, "value": _metric_number(value)})

    def observe(self, value):
        _metric_call(
            "Failed to observe metric value: ", {"op": "observe", "metric": self._id, "value": _metric_number(value)}
        )

    def value(self):
        return float(_metric_call("Failed to get metric value: ", {"op": "value", "metric": self._id})["value"])

    def __del__(self):
        if getattr(self, "_id", None) is not None:
            _metric_forget({"op": "metric_delete", "metric": self._id})


# ---------------------------------------------------------------------------------------------
# Model management from a model (not available here)


def _no_model_control(name):
    def refuse(*args, **kwargs):
        raise TritonModelException(
            f"pb_utils.{name} is not supported by tritonserver-ts: models cannot load or query other "
            "models; use the repository API (v2/repository/...)"
        )

    refuse.__name__ = name
    return refuse


load_model = _no_model_control("load_model")
unload_model = _no_model_control("unload_model")
is_model_ready = _no_model_control("is_model_ready")


# ---------------------------------------------------------------------------------------------
# auto_complete_config


class ModelConfig:
    """The config handed to `auto_complete_config` (Triton's JSON form of the model config). The
    setters check what Triton checks, with its messages."""

    def __init__(self, model_config):
        if isinstance(model_config, str):
            model_config = json.loads(model_config)
        self._model_config = model_config

    def as_dict(self):
        return self._model_config

    def _name(self):
        return str(self._model_config.get("name", ""))

    def set_max_batch_size(self, max_batch_size):
        current = int(self._model_config.get("max_batch_size", 0) or 0)
        if current > max_batch_size:
            raise ValueError(
                f"configuration specified max_batch_size {current}, but in auto-complete-config "
                f"function for model '{self._name()}' specified max_batch_size {max_batch_size}"
            )
        self._model_config["max_batch_size"] = max_batch_size

    def set_dynamic_batching(self):
        for other in ("sequence_batching", "ensemble_scheduling"):
            if other in self._model_config:
                raise ValueError(
                    f"Configuration specified scheduling_choice as '{other}', but auto-complete-config "
                    f"function for model '{self._name()}' tries to set scheduling_choice as 'dynamic_batching'"
                )
        if "dynamic_batching" not in self._model_config:
            self._model_config["dynamic_batching"] = {}

    def _add_tensor(self, kind, tensor, allowed):
        if not isinstance(tensor, dict):
            raise ValueError(f"{kind} in auto-complete-config function for model '{self._name()}' must be a dict")
        for key in tensor:
            if key not in allowed:
                quoted = [f"'{a}'" for a in allowed]
                listed = ", ".join(quoted[:-1]) + " and " + quoted[-1]
                raise ValueError(
                    f"{kind} '{tensor.get('name', '')}' in auto-complete-config function for model "
                    f"'{self._name()}' contains property other than {listed}."
                )
        if "name" not in tensor:
            raise ValueError(
                f"{kind} in auto-complete-config function for model '{self._name()}' is missing 'name' property."
            )
        for key in ("data_type", "dims"):
            if key not in tensor:
                raise ValueError(
                    f"{kind} '{tensor['name']}' in auto-complete-config function for model "
                    f"'{self._name()}' is missing '{key}' property."
                )
        entries = self._model_config.setdefault(kind, [])
        for entry in entries:
            if entry.get("name") != tensor["name"]:
                continue
            current_type = entry.get("data_type", "TYPE_INVALID")
            if current_type != "TYPE_INVALID" and current_type != tensor["data_type"]:
                raise ValueError(
                    f"unable to load model '{self._name()}', configuration expects datatype {current_type} "
                    f"for {kind} '{tensor['name']}', model provides {tensor['data_type']}"
                )
            if entry.get("dims") and list(entry["dims"]) != list(tensor["dims"]):
                raise ValueError(
                    f"model '{self._name()}', tensor '{tensor['name']}': the model expects dims "
                    f"{list(tensor['dims'])} but the model configuration specifies dims {list(entry['dims'])}"
                )
            if "optional" in entry and "optional" in tensor and entry["optional"] != tensor["optional"]:
                raise ValueError(
                    f"model '{self._name()}', tensor '{tensor['name']}': the model expects optional "
                    f"{tensor['optional']} but the model configuration specifies optional {entry['optional']}"
                )
            entry["data_type"] = tensor["data_type"]
            entry["dims"] = tensor["dims"]
            if "optional" in tensor:
                entry["optional"] = tensor["optional"]
            return
        entries.append(tensor)

    def add_input(self, input):
        self._add_tensor("input", input, ("name", "data_type", "dims", "optional"))

    def add_output(self, output):
        self._add_tensor("output", output, ("name", "data_type", "dims"))

    def set_model_transaction_policy(self, transaction_policy_dict):
        for key in transaction_policy_dict:
            if key != "decoupled":
                raise ValueError(
                    f"model transaction property in auto-complete-config function for model '{self._name()}' "
                    "contains property other than 'decoupled'."
                )
        policy = self._model_config.setdefault("model_transaction_policy", {})
        if "decoupled" in transaction_policy_dict:
            wanted = transaction_policy_dict["decoupled"]
            if "decoupled" in policy and policy["decoupled"] != wanted:
                raise ValueError(
                    f"trying to change decoupled property in auto-complete-config for model '{self._name()}', "
                    f"which is already set to '{policy['decoupled']}'."
                )
            policy["decoupled"] = wanted
