"""TEST STAND-INs for food_classifier_onnx, the model that food_classifier's model.py calls by BLS.

Real Triton (or the embedded server) would run models_staging/food_classifier_onnx behind its dynamic
batcher. These stand-ins answer the same BLS requests under plain Debian python3, through the
triton_python_backend_utils stand-in's `serve_model`:

  LinearClassifierModel  a real, checkable function instead of a neural network: a linear classifier
                         over the per-channel means of its input,
                             output[n] = W @ mean_over_pixels(input[n]) + b     (W: classes x 3)
                         plus an `ood_score` output, as food_classifier_onnx has one;
  NodeBridgeModel        the real model.onnx, run by onnxruntime-node through ort_node_bridge.mjs.

Both check a request the way Triton checks one for a batching ONNX model (input name, FP32, rank,
batch size <= max_batch_size, known requested outputs; messages modelled on Triton's), answer only
the requested outputs, and record every call in `calls` so tests can assert how model.py batches:
{"model_name", "input_names", "shape", "feed", "requested_output_names", "preferred_memory"}.
Push a message onto `fail_next` to make the next call answer an error response with it. Never
shipped in an image.
"""

import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

import triton_python_backend_utils as pb_utils

BRIDGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_node_bridge.mjs")
NODE = os.environ.get("DEPLOY_NODE") or shutil.which("node") or "node"


class CalledModel:
    """What every stand-in model shares: request checks, the call record and injected failures."""

    def __init__(self, name, input_name, output_names, max_batch_size=16):
        self.name = name
        self.input_name = input_name
        self.output_names = list(output_names)
        self.max_batch_size = max_batch_size
        self.calls = []
        self.fail_next = []

    def _error(self, message):
        return pb_utils.InferenceResponse(output_tensors=[], error=pb_utils.TritonError(message))

    def __call__(self, request):
        inputs = request.inputs()
        feed = inputs[0].as_numpy() if len(inputs) == 1 else None
        preferred = request.preferred_memory
        self.calls.append(
            {
                "model_name": request.model_name(),
                "input_names": [tensor.name() for tensor in inputs],
                "shape": tuple(feed.shape) if feed is not None else None,
                "feed": feed.copy() if feed is not None else None,
                "requested_output_names": request.requested_output_names(),
                "preferred_memory": (preferred.preferred_memory_type, preferred.preferred_device_id)
                if preferred is not None
                else None,
            }
        )
        if self.fail_next:
            return self._error(self.fail_next.pop(0))
        if [tensor.name() for tensor in inputs] != [self.input_name]:
            names = ", ".join(tensor.name() for tensor in inputs)
            return self._error(
                f"[request id: <id_unknown>] expected 1 inputs but got {len(inputs)} inputs for model "
                f"'{self.name}'. Got input(s) [{names}], but missing required input(s) ['{self.input_name}']"
            )
        if feed.dtype != np.float32:
            return self._error(
                f"[request id: <id_unknown>] inference input '{self.input_name}' data-type is "
                f"'{feed.dtype}', but model '{self.name}' expects 'FP32'"
            )
        if feed.ndim != 4 or feed.shape[1] != 3:
            return self._error(
                f"[request id: <id_unknown>] unexpected shape for input '{self.input_name}' for model "
                f"'{self.name}'. Expected [-1,3,-1,-1], got {list(feed.shape)}"
            )
        if feed.shape[0] > self.max_batch_size:
            return self._error(
                f"[request id: <id_unknown>] inference request batch-size must be <= {self.max_batch_size} "
                f"for '{self.name}'"
            )
        requested = request.requested_output_names() or self.output_names
        for name in requested:
            if name not in self.output_names:
                return self._error(
                    f"[request id: <id_unknown>] unexpected inference output '{name}' for model '{self.name}'"
                )
        outputs = self.run(feed, requested)
        return pb_utils.InferenceResponse(
            output_tensors=[pb_utils.Tensor(name, outputs[name]) for name in requested]
        )

    def run(self, feed, requested):
        raise NotImplementedError


class LinearClassifierModel(CalledModel):
    def __init__(self, weights, bias, name="food_classifier_onnx", input_name="input", output_name="output"):
        super().__init__(name, input_name, [output_name, "ood_score"])
        self.output_name = output_name
        self.weights = np.asarray(weights, dtype=np.float32)
        self.bias = np.asarray(bias, dtype=np.float32)

    def run(self, feed, requested):
        features = feed.mean(axis=(2, 3))
        logits = (features @ self.weights.T + self.bias).astype(np.float32)
        # A per-row stand-in score (the spread of the row's channel means), so tests can tell rows apart.
        ood = features.std(axis=1, keepdims=True).astype(np.float32)
        return {self.output_name: logits, "ood_score": ood}


class NodeBridgeModel(CalledModel):
    """A real ONNX file, run by onnxruntime-node in a child process per call."""

    def __init__(self, path, name="food_classifier_onnx"):
        described = json.loads(self._node("describe", path))
        super().__init__(name, described["inputs"][0], described["outputs"])
        self.path = path

    @staticmethod
    def _node(*args):
        done = subprocess.run([NODE, BRIDGE, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"onnxruntime-node bridge failed: {done.stderr.strip()}")
        return done.stdout

    def run(self, feed, requested):
        outputs = {}
        with tempfile.TemporaryDirectory(prefix="ort-bridge-") as tmp:
            inp = os.path.join(tmp, "in.f32")
            np.ascontiguousarray(feed, dtype="<f4").tofile(inp)
            dims = ",".join(str(d) for d in feed.shape)
            for name in requested:
                out = os.path.join(tmp, f"{len(outputs)}.f32")
                result = json.loads(self._node("run", self.path, self.input_name, inp, dims, name, out))
                outputs[name] = np.fromfile(out, dtype="<f4").reshape(result["dims"])
        return outputs
