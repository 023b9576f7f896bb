"""TEST STAND-IN for the `onnxruntime` Python package.

Debian ships no python3-onnxruntime and PyPI is out of reach here, so the food_classifier tests load
this module under the name `onnxruntime`. It keeps onnxruntime's call shapes (InferenceSession(path,
providers=...), get_inputs(), get_outputs(), get_providers(), run(output_names, feed)) and computes a
real, checkable function instead of a neural network: a linear classifier over the per-channel means
of the input tensor,

    logits[n] = W @ mean_over_pixels(x[n]) + b          (W: classes x 3, b: classes)

with W and b read from the "model file", which the tests write as a numpy .npz archive. Like the real
runtime it refuses inputs of the wrong name, dtype or rank. Every run() is recorded in RUNS so tests
can assert how the model batches its calls. Never shipped in an image.
"""

import numpy as np

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


class InferenceSession:
    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None):
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
        RUNS.append({"session": self, "feed": batch.copy(), "output_names": list(output_names or [])})
        features = batch.mean(axis=(2, 3))
        logits = features @ self.weights.T + self.bias
        return [logits.astype(np.float32)]
