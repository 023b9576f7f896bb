"""The tritonserver-ts Python backend stub: hosts one instance of a model.py (TritonPythonModel).

Started by the server as `python3 tritonserver_ts_stub.py <model.py>` with two extra pipes: fd 3
(server -> stub) and fd 4 (stub -> server). stdout and stderr are the model's own and end up in the
server log. Every message is one frame:

    uint32 LE  n = byte length of everything after this field
    uint32 LE  h = byte length of the JSON header
    h bytes    JSON header (message type and fields; tensors as {name, datatype, shape, offset, size})
    n-4-h      payload: the tensors' raw bytes (little-endian, row-major; BYTES length-prefixed)

The stub exits when fd 3 reaches end of file (the server went away) or after `finalize`.

SIGINT, SIGTERM and SIGHUP are for the server, not for its stubs (as Triton's stub skips SIGINT and
SIGTERM): a terminal's Ctrl+C or hang-up reaches the whole process group, and the server then stops
each stub by closing its fd 3. Without this a Ctrl+C printed a KeyboardInterrupt traceback from
every stub into the server log. Handlers, not SIG_IGN, so processes a model starts get the default
actions.
"""

import signal


def _leave_to_the_server(signum, frame):
    pass


for _name in ("SIGINT", "SIGTERM", "SIGHUP"):
    signal.signal(getattr(signal, _name), _leave_to_the_server)

import asyncio  # noqa: E402
import concurrent.futures  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import queue  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402

STUB_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, STUB_DIR)

import numpy as np  # noqa: E402

import triton_python_backend_utils as pb_utils  # noqa: E402

IN_FD = 3
OUT_FD = 4
_HEAD = struct.Struct("<II")


def _read_exact(stream, n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = stream.readinto(view[got:])
        if not k:
            return None
        got += k
    return buf


# Frames of these directories are left out of error reports: the stub's own, and the machinery
# that runs coroutines on the stub's event loop.
_HIDDEN_DIRS = (STUB_DIR, os.path.dirname(asyncio.__file__), os.path.dirname(concurrent.futures.__file__))


def format_exception(error):
    """`Type: message` and the frames, innermost first, like Triton's stub reports errors."""
    lines = [f"{type(error).__name__}: {error}", "", "At:"]
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        if os.path.dirname(os.path.abspath(frame.filename)) in _HIDDEN_DIRS:
            continue
        lines.append(f"  {frame.filename}({frame.lineno}): {frame.name}")
    return "\n".join(lines) + "\n"


def format_traceback(error):
    """Python's own traceback of `error`, as Triton logs an exception of a background coroutine."""
    return "".join(traceback.TracebackException.from_exception(error).format())


def init_error(error):
    """The `init_error` frame for an exception raised loading or initializing the model: the error,
    and for a module that cannot be imported its name and this interpreter, so the server can say
    which interpreters on the machine do have it."""
    frame = {"type": "init_error", "message": format_exception(error)}
    if isinstance(error, ModuleNotFoundError) and error.name:
        frame["missing_module"] = error.name
        frame["executable"] = sys.executable
    return frame


def tensors_to_refs(tensors, chunks, offset):
    """Header entries for `tensors`, appending their bytes to `chunks`; returns (refs, offset)."""
    refs = []
    for tensor in tensors:
        array = tensor.as_numpy()
        datatype = tensor.datatype()
        if datatype == "BYTES":
            data = pb_utils.serialize_byte_tensor(array)
        else:
            data = memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8))
        size = len(data)
        refs.append(
            {"name": tensor.name(), "datatype": datatype, "shape": [int(d) for d in array.shape], "offset": offset, "size": size}
        )
        chunks.append(data)
        offset += size
    return refs, offset


def refs_to_tensors(refs, payload):
    tensors = []
    for ref in refs:
        data = payload[ref["offset"] : ref["offset"] + ref["size"]]
        shape = ref["shape"]
        if ref["datatype"] == "BYTES":
            array = pb_utils.deserialize_bytes_tensor(data).reshape(shape)
        else:
            dtype = pb_utils.triton_string_to_numpy(ref["datatype"])
            array = np.frombuffer(data, dtype=dtype).reshape(shape)
        tensors.append(pb_utils.Tensor(ref["name"], array))
    return tensors


def response_entry(response, chunks, offset):
    """The header entry of one InferenceResponse (error or outputs)."""
    if response is None:
        return {}, offset
    if response.has_error():
        error = response.error()
        return {"error": {"message": error.message(), "code": error._code_name()}}, offset
    refs, offset = tensors_to_refs(response.output_tensors(), chunks, offset)
    entry = {"outputs": refs}
    if response._parameters:
        entry["parameters"] = pb_utils._parameters_wire(response._parameters)
    return entry, offset


class Channel:
    """The stub's side of the pipes: framed writes (thread-safe) and a reader thread."""

    def __init__(self):
        self._in = os.fdopen(IN_FD, "rb", buffering=0)
        self._write_lock = threading.Lock()
        self._calls = {}
        self._calls_lock = threading.Lock()
        self._next_call = 0
        self.messages = queue.Queue()
        # Requests that may still be cancelled: batch id -> its InferenceRequest objects.
        self._live = {}
        self._live_lock = threading.Lock()

    def write(self, header, chunks=()):
        head = json.dumps(header, separators=(",", ":")).encode("utf-8")
        body = sum(len(c) for c in chunks)
        parts = [_HEAD.pack(4 + len(head) + body, len(head)), head, *chunks]
        with self._write_lock:
            for part in parts:
                view = memoryview(part).cast("B")
                while len(view) > 0:
                    written = os.write(OUT_FD, view)
                    view = view[written:]

    def read_loop(self):
        while True:
            head = _read_exact(self._in, 8)
            if head is None:
                break
            total, hlen = _HEAD.unpack(head)
            body = _read_exact(self._in, total - 4)
            if body is None:
                break
            header = json.loads(bytes(body[:hlen]).decode("utf-8"))
            payload = memoryview(body)[hlen:]
            kind = header.get("type")
            if kind == "bls_response":
                self._bls_done(header, payload)
            elif kind == "metric_response":
                self._metric_done(header)
            elif kind == "cancel":
                self._cancel(header)
            else:
                self.messages.put((header, payload))
        # The server went away (or closed our input): nothing left to serve.
        os._exit(0)

    # Cancellation ------------------------------------------------------------------------------
    def track(self, batch, requests):
        with self._live_lock:
            self._live[batch] = requests

    def untrack(self, batch):
        with self._live_lock:
            self._live.pop(batch, None)

    def closed(self, batch):
        """A sender of `batch` closed: forget the batch once every request of it has finished."""
        with self._live_lock:
            requests = self._live.get(batch)
            if requests is not None and all(r._sender._closed for r in requests):
                del self._live[batch]

    def _cancel(self, header):
        with self._live_lock:
            requests = self._live.get(header["batch"])
            index = header["request"]
            if requests is not None and 0 <= index < len(requests):
                requests[index]._cancelled = True

    # BLS ---------------------------------------------------------------------------------------
    def bls(self, request):
        future = concurrent.futures.Future()
        with self._calls_lock:
            call = self._next_call
            self._next_call += 1
            self._calls[call] = future
        chunks = []
        refs, _ = tensors_to_refs(request.inputs(), chunks, 0)
        version = request._model_version
        header = {
            "type": "bls",
            "call": call,
            "model_name": request._model_name,
            "model_version": "" if version in (None, -1, "-1", "") else str(version),
            "request_id": request.request_id() or "",
            "parameters": pb_utils._parameters_wire(request._parameters),
            "requested_outputs": request.requested_output_names(),
            "timeout": int(request.timeout() or 0),
            "inputs": refs,
        }
        trace = getattr(request.trace(), "_trace_id", None)
        if trace is not None:
            header["trace"] = trace
        self.write(header, chunks)
        return future

    def _bls_done(self, header, payload):
        with self._calls_lock:
            future = self._calls.pop(header["call"], None)
        if future is None:
            return
        if "error" in header:
            err = header["error"]
            response = pb_utils.InferenceResponse(error=pb_utils._error_from_name(err["message"], err["code"]))
        else:
            response = pb_utils.InferenceResponse(output_tensors=refs_to_tensors(header["outputs"], payload))
            response._parameters = pb_utils._parameters_from_wire(header.get("parameters"))
        future.set_result(response)

    # Custom metrics (pb_utils.MetricFamily / Metric) ------------------------------------------------
    def metric(self, header):
        """One metric call answered by the server (blocks until the answer)."""
        future = concurrent.futures.Future()
        with self._calls_lock:
            call = self._next_call
            self._next_call += 1
            self._calls[call] = future
        self.write({"type": "metric", "call": call, **header})
        return future.result()

    def metric_nowait(self, header):
        """A metric call without an answer (releasing a family or a metric)."""
        self.write({"type": "metric", **header})

    def _metric_done(self, header):
        with self._calls_lock:
            future = self._calls.pop(header["call"], None)
        if future is not None:
            future.set_result(header)

    # Responses and logs --------------------------------------------------------------------------
    def send_response(self, batch, index, response, final):
        chunks = []
        entry, _ = response_entry(response, chunks, 0)
        self.write({"type": "response", "batch": batch, "request": index, "final": bool(final), **entry}, chunks)

    def log(self, level, message):
        self.write({"type": "log", "level": level, "message": message})


def load_model_module(path):
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(1, directory)
    pb_utils._set_model_dir(directory)
    spec = importlib.util.spec_from_file_location("model", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["model"] = module
    spec.loader.exec_module(module)
    if not hasattr(module, "TritonPythonModel"):
        raise AttributeError(f"module 'model' ({path}) has no attribute 'TritonPythonModel'")
    return module.TritonPythonModel


DECOUPLED_RETURN = "Python model is using the decoupled mode and the execute function must return None."


class Stub:
    """Serves one model instance. Coroutines (`async def execute`, and `initialize` / `finalize`)
    run on the stub's event loop, a daemon thread running forever as in Triton's stub, so tasks a
    model starts (`asyncio.create_task`) keep running after `execute` returns. A non-decoupled
    model's coroutine is waited for; a decoupled one's runs in the background (its responses go
    through the senders), so the next requests are executed while it runs."""

    def __init__(self, channel, model_path):
        self.channel = channel
        self.model_path = model_path
        self.model = None
        self.decoupled = False
        self._loop = None

    def event_loop(self):
        if self._loop is None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            threading.Thread(target=loop.run_forever, name="tritonserver-ts-stub-asyncio", daemon=True).start()
            self._loop = loop
        return self._loop

    def run_coroutine(self, coroutine):
        """Runs `coroutine` on the event loop and waits for its result (or exception)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.event_loop()).result()

    def run_maybe_async(self, value):
        return self.run_coroutine(value) if inspect.isawaitable(value) else value

    def serve(self):
        while True:
            header, payload = self.channel.messages.get()
            kind = header.get("type")
            if kind == "auto_complete":
                self.auto_complete(header)
            elif kind == "initialize":
                self.initialize(header)
            elif kind == "execute":
                self.execute(header, payload)
            elif kind == "finalize":
                self.finalize()
                return

    def auto_complete(self, header):
        try:
            cls = load_model_module(self.model_path)
            config = pb_utils.ModelConfig(header["config"])
            method = getattr(cls, "auto_complete_config", None)
            if method is not None:
                config = method(config)
                if not isinstance(config, pb_utils.ModelConfig):
                    name = header["config"].get("name", "") if isinstance(header["config"], dict) else ""
                    raise pb_utils.TritonModelException(
                        f"auto_complete_config function in model '{name}' must return a valid pb.ModelConfig object."
                    )
            self.channel.write({"type": "auto_complete_done", "config": config.as_dict(), "defined": method is not None})
        except BaseException as error:  # noqa: BLE001 - reported to the server
            self.channel.write(init_error(error))

    def initialize(self, header):
        try:
            self.decoupled = bool(header.get("decoupled"))
            cls = load_model_module(self.model_path)
            self.model = cls()
            init = getattr(self.model, "initialize", None)
            if init is not None:
                self.run_maybe_async(init(header["args"]))
            self.channel.write({"type": "ready"})
        except BaseException as error:  # noqa: BLE001
            self.channel.write(init_error(error))

    def execute(self, header, payload):
        batch = header["batch"]
        requests = []
        try:
            for i, entry in enumerate(header["requests"]):
                request = pb_utils.InferenceRequest._received(
                    inputs=refs_to_tensors(entry["inputs"], payload),
                    requested_output_names=entry["requested_outputs"],
                    request_id=entry["id"],
                    correlation_id=entry["correlation_id"],
                    flags=entry["flags"],
                    parameters_json=entry["parameters"],
                    trace_id=entry.get("trace"),
                )
                request._sender = pb_utils.InferenceResponseSender(batch, i, self.decoupled, request)
                requests.append(request)
            self.channel.track(batch, requests)
            execute = getattr(self.model, "execute", None)
            if execute is None:
                raise pb_utils.TritonModelException(
                    f"Python model {self.model_path} does not implement `execute` method."
                )
            result = execute(requests)
            if asyncio.iscoroutine(result):
                if self.decoupled:
                    # As Triton: not waited for; the instance takes its next requests meanwhile.
                    self.run_in_background(result, batch, requests)
                    self._done(batch, requests, {}, keep=True)
                    return
                result = self.run_coroutine(result)
        except BaseException as error:  # noqa: BLE001
            self._done(batch, requests, {"error": format_exception(error)})
            return
        if result is None:
            # Every request is answered (or still to be answered) through its response sender.
            self._done(batch, requests, {}, keep=True)
            return
        if self.decoupled:
            self._done(batch, requests, {"error": DECOUPLED_RETURN})
            return
        problem = None
        if not isinstance(result, list):
            problem = f"Expected a list in the execute return, found type '{type(result)}'."
        elif len(result) != len(requests):
            problem = (
                f"Number of InferenceResponse objects do not match the number of InferenceRequest objects. "
                f"InferenceRequest(s) size is:{len(requests)}, and InferenceResponse(s) size is:{len(result)}\n"
            )
        else:
            for request, response in zip(requests, result):
                if response is None:
                    continue
                if not isinstance(response, pb_utils.InferenceResponse):
                    problem = (
                        "Expected an 'InferenceResponse' object in the execute function return list, "
                        f"found type '{type(response)}'."
                    )
                    break
                if request._sender._sent > 0:
                    problem = "Unable to send response. Non-decoupled model cannot send more than one response."
                    break
                if request._sender._closed:
                    problem = "Unable to send response. Response sender has been closed."
                    break
        if problem is not None:
            self._done(batch, requests, {"error": problem})
            return
        chunks = []
        offset = 0
        entries = []
        try:
            for request, response in zip(requests, result):
                if response is None:
                    entries.append(None)
                    continue
                request._sender._closed = True
                entry, offset = response_entry(response, chunks, offset)
                entries.append(entry)
        except BaseException as error:  # noqa: BLE001
            self._done(batch, requests, {"error": format_exception(error)})
            return
        self._done(batch, requests, {"responses": entries}, chunks, keep=any(e is None for e in entries))

    def run_in_background(self, coroutine, batch, requests):
        """A decoupled model's `async def execute`: runs on the event loop while the stub serves on.
        If it raises (or returns something), the error is logged as Triton logs it, and (beyond
        Triton, whose requests then wait forever) every request of the call still open gets it as
        an error final response."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.event_loop())

        def finished(done):
            if done.cancelled():
                return
            error = done.exception()
            if error is not None:
                self.channel.log(2, format_traceback(error))
                self._fail_open(batch, requests, format_exception(error))
            elif done.result() is not None:
                self.channel.log(2, DECOUPLED_RETURN)
                self._fail_open(batch, requests, DECOUPLED_RETURN)

        future.add_done_callback(finished)

    def _fail_open(self, batch, requests, message):
        """Closes the senders of `requests` and has the server fail those still open with `message`."""
        for request in requests:
            request._sender._closed = True
        self.channel.untrack(batch)
        self.channel.write({"type": "execute_error", "batch": batch, "error": message})

    def _done(self, batch, requests, fields, chunks=(), keep=False):
        """Sends `execute_done`; an error closes every sender (the server fails the whole batch)."""
        if "error" in fields or not keep:
            for request in requests:
                if request._sender is not None:
                    request._sender._closed = True
            self.channel.untrack(batch)
        else:
            self.channel.closed(batch)
        self.channel.write({"type": "execute_done", "batch": batch, **fields}, chunks)

    def finalize(self):
        error = None
        try:
            fin = getattr(self.model, "finalize", None) if self.model is not None else None
            if fin is not None:
                self.run_maybe_async(fin())
        except BaseException as e:  # noqa: BLE001
            error = format_exception(e)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        self.channel.write({"type": "finalized", **({"error": error} if error else {})})


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: tritonserver_ts_stub.py <model.py>\n")
        sys.exit(2)
    channel = Channel()
    pb_utils._set_channel(channel)
    reader = threading.Thread(target=channel.read_loop, name="tritonserver-ts-stub-reader", daemon=True)
    reader.start()
    Stub(channel, sys.argv[1]).serve()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
