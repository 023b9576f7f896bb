"""TEST STAND-IN for the `onnxruntime` Python package.

Debian ships no python3-onnxruntime and PyPI is out of reach here, so the food_classifier tests load
this module under the name `onnxruntime`. It keeps onnxruntime's call shapes (InferenceSession(path,
providers=...), get_inputs(), get_outputs(), get_providers(), run(output_names, feed)) and computes a
real, checkable function instead of a neural network: a linear classifier over the per-channel means
of the input tensor,

    logits[n] = W @ mean_over_pixels(x[n]) + b          (W: classes x 3, b: classes)

with W and b read from the "model file", which the tests write as a numpy .npz archive. Like the real
runtime it refuses inputs of the wrong name, dtype or rank.

When the model file is a real ONNX file instead (not an .npz archive), the session runs it with
onnxruntime-node through ort_node_bridge.mjs: the tests of the real food model use that.

Every run() is recorded in RUNS so tests can assert how the model batches its calls. Never shipped
in an image.
"""

import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

BRIDGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_node_bridge.mjs")
NODE = os.environ.get("DEPLOY_NODE") or shutil.which("node") or "node"

RUNS = []  # one dict per InferenceSession.run call: {"session", "feed", "output_names"}
SESSIONS = []  # every InferenceSession created, in order
FAIL_NEXT_RUN = []  # push a message to make the next run() raise RuntimeError(message)


class NodeArg:
    def __init__(self, name, shape, type_):
        self.name = name
        self.shape = shape
        self.type = type_


def get_available_providers():
    return ["CPUExecutionProvider"]


def InferenceSession(path_or_bytes, sess_options=None, providers=None, provider_options=None):
    with open(path_or_bytes, "rb") as handle:
        is_npz = handle.read(2) == b"PK"
    cls = LinearSession if is_npz else NodeBridgeSession
    return cls(path_or_bytes, sess_options=sess_options, providers=providers)


def _record(session, batch, output_names):
    RUNS.append({"session": session, "feed": batch.copy(), "output_names": list(output_names or [])})


class NodeBridgeSession:
    """A real ONNX model, run by onnxruntime-node in a child process."""

    def __init__(self, path, sess_options=None, providers=None):
        self.path = path
        self.requested_providers = list(providers or [])
        described = json.loads(self._node("describe", path))
        self._inputs = described["inputs"]
        self._outputs = described["outputs"]
        SESSIONS.append(self)

    @staticmethod
    def _node(*args):
        done = subprocess.run([NODE, BRIDGE, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"onnxruntime-node bridge failed: {done.stderr.strip()}")
        return done.stdout

    def get_inputs(self):
        return [NodeArg(name, [], "tensor(float)") for name in self._inputs]

    def get_outputs(self):
        return [NodeArg(name, [], "tensor(float)") for name in self._outputs]

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def run(self, output_names, input_feed, run_options=None):
        if FAIL_NEXT_RUN:
            raise RuntimeError(FAIL_NEXT_RUN.pop(0))
        ((name, batch),) = input_feed.items()
        if batch.dtype != np.float32:
            raise ValueError("input must be a float32 numpy array")
        output_name = (output_names or self._outputs)[0]
        _record(self, batch, output_names)
        with tempfile.TemporaryDirectory(prefix="ort-bridge-") as tmp:
            inp, out = os.path.join(tmp, "in.f32"), os.path.join(tmp, "out.f32")
            np.ascontiguousarray(batch, dtype="<f4").tofile(inp)
            dims = ",".join(str(d) for d in batch.shape)
            result = json.loads(self._node("run", self.path, name, inp, dims, output_name, out))
            values = np.fromfile(out, dtype="<f4").reshape(result["dims"])
        return [values]


class LinearSession:
    def __init__(self, path_or_bytes, sess_options=None, providers=None):
        with np.load(path_or_bytes, allow_pickle=False) as archive:
            self.weights = np.asarray(archive["weights"], dtype=np.float32)
            self.bias = np.asarray(archive["bias"], dtype=np.float32)
        self.path = path_or_bytes
        self.requested_providers = list(providers or [])
        self._classes = self.weights.shape[0]
        SESSIONS.append(self)

    def get_inputs(self):
        return [NodeArg("input", ["N", 3, "H", "W"], "tensor(float)")]

    def get_outputs(self):
        return [NodeArg("output", ["N", self._classes], "tensor(float)")]

    def get_providers(self):
        # A CPU-only build falls back to the CPU provider, as onnxruntime does.
        return ["CPUExecutionProvider"]

    def run(self, output_names, input_feed, run_options=None):
        if FAIL_NEXT_RUN:
            raise RuntimeError(FAIL_NEXT_RUN.pop(0))
        if set(input_feed) != {"input"}:
            raise ValueError(f"invalid input names {sorted(input_feed)}; the model has 'input'")
        batch = input_feed["input"]
        if not isinstance(batch, np.ndarray) or batch.dtype != np.float32:
            raise ValueError("input must be a float32 numpy array")
        if batch.ndim != 4 or batch.shape[1] != 3:
            raise ValueError(f"input must be [N, 3, H, W], got {list(batch.shape)}")
        for name in output_names or ["output"]:
            if name != "output":
                raise ValueError(f"invalid output name {name!r}")
        _record(self, batch, output_names)
        features = batch.mean(axis=(2, 3))
        logits = features @ self.weights.T + self.bias
        return [logits.astype(np.float32)]
