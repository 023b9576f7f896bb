"""triton_python_backend_utils for tritonserver-ts.

Written for tritonserver-ts from the documented API of NVIDIA Triton's Python backend (the module a
`model.py` imports as `pb_utils`). The stub (`tritonserver_ts_stub.py`) wires the parts that talk to
the server (BLS, the response sender, the logger) through `_set_channel`.
"""

import json
import threading

import numpy as np

# Response flags (TRITONSERVER_ResponseCompleteFlag) and request flags (TRITONSERVER_RequestFlag).
TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1
TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2

# Memory kinds (TRITONSERVER_MemoryType). Every tensor here is in CPU memory.
TRITONSERVER_MEMORY_CPU = 0
TRITONSERVER_MEMORY_CPU_PINNED = 1
TRITONSERVER_MEMORY_GPU = 2


class PreferredMemory:
    """Where a BLS response's tensors should be (accepted; they are always in CPU memory here)."""

    def __init__(self, preferred_memory_type, preferred_device_id=0):
        self.preferred_memory_type = preferred_memory_type
        self.preferred_device_id = preferred_device_id

# The stub's connection to the server (set by the stub before model.py is imported).
_channel = None


def _set_channel(channel):
    global _channel
    _channel = channel


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
    """The numpy type of a config datatype (`TYPE_FP32`) or a protocol datatype (`FP32`)."""
    name = str(triton_type_string)
    if name.startswith("TYPE_"):
        name = name[5:]
    if name == "STRING":
        name = "BYTES"
    if name not in _TRITON_TO_NUMPY:
        raise TritonModelException(f"datatype '{triton_type_string}' has no numpy equivalent")
    return _TRITON_TO_NUMPY[name]


def triton_to_numpy_type(data_type):
    """The numpy type of a TRITONSERVER_DataType code (or a datatype name)."""
    if isinstance(data_type, str):
        return triton_string_to_numpy(data_type)
    name = _TYPE_CODES.get(int(data_type))
    return None if name is None else _TRITON_TO_NUMPY[name]


def numpy_to_triton_type(data_type):
    """The TRITONSERVER_DataType code of a numpy type."""
    name = _datatype_of_dtype(np.dtype(data_type))
    return None if name is None else _CODE_OF[name]


def _datatype_of_dtype(dtype):
    if dtype == np.object_ or dtype.kind in ("S", "U"):
        return "BYTES"
    for name, np_type in _TRITON_TO_NUMPY.items():
        if name != "BYTES" and dtype == np.dtype(np_type):
            return name
    return None


def serialize_byte_tensor(array):
    """A BYTES tensor's Triton layout: each element as a 4-byte little-endian length and its bytes."""
    parts = []
    for element in np.asarray(array, dtype=np.object_).reshape(-1):
        if isinstance(element, str):
            element = element.encode("utf-8")
        elif not isinstance(element, (bytes, bytearray, memoryview)):
            element = str(element).encode("utf-8")
        element = bytes(element)
        parts.append(len(element).to_bytes(4, "little"))
        parts.append(element)
    return b"".join(parts)


def deserialize_bytes_tensor(buffer):
    """The elements of a serialized BYTES tensor, as a 1-D numpy object array of bytes."""
    view = memoryview(buffer)
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
    """Raised by this module for invalid use (Triton's pb_utils.TritonModelException)."""

    def message(self):
        return str(self.args[0]) if self.args else ""


class TritonError:
    """An error for a response: a message and one of Triton's status codes."""

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
        if code not in TritonError._NAMES:
            raise TritonModelException(f"unknown TritonError code {code!r}")
        self._message = str(message)
        self._code = code

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
# Tensors, requests, responses


class Tensor:
    """A named tensor held as a numpy array (BYTES: an object array of bytes)."""

    def __init__(self, name, array):
        if not isinstance(name, str):
            raise TritonModelException("a Tensor's name must be a str")
        if not isinstance(array, np.ndarray):
            raise TritonModelException(
                f"Tensor '{name}': expected a numpy.ndarray, got {type(array).__name__}"
            )
        if array.dtype.kind in ("S", "U"):
            array = array.astype(np.object_)
        if _datatype_of_dtype(array.dtype) is None:
            raise TritonModelException(f"Tensor '{name}': numpy dtype {array.dtype} has no Triton datatype")
        self._name = name
        self._array = array

    @staticmethod
    def from_numpy(name, array):
        return Tensor(name, array)

    def name(self):
        return self._name

    def as_numpy(self):
        return self._array

    def triton_dtype(self):
        return numpy_to_triton_type(self._array.dtype)

    def datatype(self):
        return _datatype_of_dtype(self._array.dtype)

    def shape(self):
        return list(self._array.shape)

    def is_cpu(self):
        return True

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


class InferenceResponse:
    """A response: output tensors, or an error."""

    def __init__(self, output_tensors=None, error=None, parameters=None):
        tensors = list(output_tensors or [])
        for tensor in tensors:
            if not isinstance(tensor, Tensor):
                raise TritonModelException(
                    f"InferenceResponse output_tensors must be pb_utils.Tensor objects, got {type(tensor).__name__}"
                )
        if error is not None and not isinstance(error, TritonError):
            error = TritonError(str(error))
        self._tensors = tensors
        self._error = error
        if isinstance(parameters, str):
            parameters = json.loads(parameters)
        self._parameters = dict(parameters or {})

    def output_tensors(self):
        return list(self._tensors)

    def has_error(self):
        return self._error is not None

    def error(self):
        return self._error

    def parameters(self):
        return json.dumps(self._parameters)


class InferenceResponseSender:
    """Sends the responses of one request. A decoupled model sends any number, then the final flag;
    a non-decoupled one (as Triton allows) exactly one response, with or before the final flag."""

    def __init__(self, batch, index, decoupled=True, request=None):
        self._batch = batch
        self._index = index
        self._decoupled = decoupled
        self._request = request
        self._sent = 0
        self._closed = False
        self._lock = threading.Lock()

    def send(self, response=None, flags=0):
        final = bool(flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        if response is None and not final:
            raise TritonModelException("Inference Response object must be provided when the response flags is set to zero.")
        if response is not None and not isinstance(response, InferenceResponse):
            raise TritonModelException("send() takes a pb_utils.InferenceResponse")
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
        model_name=None,
        inputs=None,
        requested_output_names=None,
        request_id="",
        correlation_id=0,
        model_version=-1,
        flags=0,
        timeout=0,
        parameters=None,
        **_ignored,
    ):
        self._model_name = model_name
        self._inputs = list(inputs or [])
        self._requested = list(requested_output_names or [])
        self._request_id = request_id
        self._correlation_id = correlation_id
        self._model_version = model_version
        self._flags = flags
        self._timeout = timeout
        if parameters is None:
            parameters = {}
        elif isinstance(parameters, str):
            parameters = json.loads(parameters)
        elif not isinstance(parameters, dict):
            raise TritonModelException("parameters must be a dict or a JSON string")
        self._parameters = parameters
        self._sender = None
        self._cancelled = False

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

    def timeout(self):
        return self._timeout

    def model_name(self):
        return self._model_name

    def parameters(self):
        return json.dumps(self._parameters)

    def is_cancelled(self):
        """Whether the client cancelled this request (the server tells the stub as it happens)."""
        return self._cancelled

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

    INFO = 0
    WARNING = 1
    ERROR = 2
    VERBOSE = 3

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
# auto_complete_config


class ModelConfig:
    """The config handed to `auto_complete_config` (Triton's JSON form of the model config)."""

    def __init__(self, model_config):
        if isinstance(model_config, str):
            model_config = json.loads(model_config)
        self._config = model_config

    def as_dict(self):
        return self._config

    def set_max_batch_size(self, max_batch_size):
        current = int(self._config.get("max_batch_size", 0) or 0)
        if current != 0 and current != int(max_batch_size):
            raise ValueError(
                f"configuration specified max_batch_size {current}, but in auto-complete-config "
                f"function for model '{self._config.get('name', '')}' specified max_batch_size {max_batch_size}"
            )
        self._config["max_batch_size"] = int(max_batch_size)

    def _add_tensor(self, kind, tensor):
        if not isinstance(tensor, dict):
            raise ValueError(f"{kind} passed to add_{kind} must be a dict")
        for key in tensor:
            if key not in ("name", "data_type", "dims", "optional", "label_filename", "is_shape_tensor"):
                raise ValueError(f"unexpected key '{key}' in {kind} {tensor.get('name', '')!r}")
        for key in ("name", "data_type", "dims"):
            if key not in tensor:
                raise ValueError(f"{kind} {tensor.get('name', '')!r} in auto-complete-config function must have '{key}'")
        entries = self._config.setdefault(kind, [])
        for entry in entries:
            if entry.get("name") != tensor["name"]:
                continue
            if entry.get("data_type", "TYPE_INVALID") not in ("TYPE_INVALID", tensor["data_type"]):
                raise ValueError(
                    f"{kind} '{tensor['name']}' has data_type {tensor['data_type']} but the model configuration "
                    f"specifies data_type {entry.get('data_type')}"
                )
            if entry.get("dims") and [int(d) for d in entry["dims"]] != [int(d) for d in tensor["dims"]]:
                raise ValueError(
                    f"{kind} '{tensor['name']}' has dims {list(tensor['dims'])} but the model configuration "
                    f"specifies dims {list(entry['dims'])}"
                )
            entry.update({k: v for k, v in tensor.items() if k not in entry or not entry[k]})
            return
        entry = dict(tensor)
        entry["dims"] = [int(d) for d in tensor["dims"]]
        entries.append(entry)

    def add_input(self, input):
        self._add_tensor("input", input)

    def add_output(self, output):
        self._add_tensor("output", output)

    def set_dynamic_batching(self):
        if not self._config.get("dynamic_batching"):
            self._config["dynamic_batching"] = {}

    def set_model_transaction_policy(self, transaction_policy_dict):
        if not isinstance(transaction_policy_dict, dict):
            raise ValueError("set_model_transaction_policy takes a dict")
        for key in transaction_policy_dict:
            if key != "decoupled":
                raise ValueError(f"unexpected key '{key}' in model_transaction_policy")
        current = self._config.get("model_transaction_policy") or {}
        wanted = bool(transaction_policy_dict.get("decoupled", False))
        if "decoupled" in current and bool(current["decoupled"]) != wanted:
            raise ValueError(
                "trying to change decoupled property in auto-complete-config for model "
                f"'{self._config.get('name', '')}', which is already set to {bool(current['decoupled'])}."
            )
        self._config["model_transaction_policy"] = {"decoupled": wanted}
