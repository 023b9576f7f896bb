"""GourmetGram food classifier: a Triton Python-backend model.

Contract (see ../config.pbtxt):
  INPUT_IMAGE    BYTES [N, 1]  base64 text of an encoded photo (JPEG, PNG, WebP, ...), one per row
  FOOD_LABEL     BYTES [N, 1]  the top Food-11 class of each row
  PROBABILITY    FP32  [N, 1]  the softmax probability of that class
The input and those two outputs are the original GourmetGram contract. Beyond it, when the config
declares them (the shipped one does):
  PROBABILITIES  FP32  [N, C]  the softmax probability of every class, in label order
  OOD_SCORE      FP32  [N, 1]  the called model's out-of-distribution score (its `ood_score`)

What happens to one execute() call:
  1. every row of every request is decoded and preprocessed the way the web app does it (EXIF
     orientation applied, converted to RGB with any alpha channel dropped, squashed to 224x224 (or
     resized and centre-cropped) with bilinear filtering, scaled to [0, 1], normalised with the
     ImageNet mean/std, CHW, FP32); the numbers come from this model's config parameters, never
     from constants in this file;
  2. a request with a row that cannot be decoded gets an INVALID_ARG error response (HTTP 400)
     naming the row and the reason; it takes no part in step 3 and does not disturb the other
     requests;
  3. the rows of all remaining requests are stacked and sent in ONE Business Logic Scripting (BLS)
     request to the ONNX model that the same server serves (by default food_classifier_onnx): the
     weights live in that model only, which runs them on its own instances (GPU or CPU) behind its
     own dynamic batcher;
  4. each row's logits go through a softmax and the top class and its probability are returned
     (and every class's probability, and the called model's ood_score, when declared).

The called model and its tensor names come from the config parameters `onnx_model_name`,
`onnx_input_name` and `onnx_output_name` (and `onnx_ood_name`, asked for only when OOD_SCORE is
declared); the labels from `labels_path`, relative to this model's directory (by default
food_classifier_onnx's labels.txt). PROBABILITIES may name a `label_filename` of its own (Triton's
classification extension reads it); it must hold the same labels, which initialize() checks. The called model must be loaded too (in
explicit model control mode, load both). BLS is Triton's own API, so this file runs unchanged on
NVIDIA Triton (23.04 or newer: outputs are asked for in CPU memory) and on the embedded server.
"""

import base64
import binascii
import io
import json
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

import triton_python_backend_utils as pb_utils

INPUT_NAME = "INPUT_IMAGE"
LABEL_OUTPUT = "FOOD_LABEL"
PROBABILITY_OUTPUT = "PROBABILITY"
# Beyond the original contract, produced only when the config declares them.
PROBABILITIES_OUTPUT = "PROBABILITIES"
OOD_OUTPUT = "OOD_SCORE"

# Used only when a parameter is missing from the config; the shipped config sets all of them.
DEFAULT_PARAMETERS = {
    "onnx_model_name": "food_classifier_onnx",
    "onnx_input_name": "input",
    "onnx_output_name": "output",
    "onnx_ood_name": "ood_score",
    "labels_path": "../food_classifier_onnx/labels.txt",
    "max_image_pixels": "40000000",
    "decode_threads": "1",
    "preprocess_resize": "squash",
    "preprocess_size": "224",
    "preprocess_mean": "0.485,0.456,0.406",
    "preprocess_std": "0.229,0.224,0.225",
    "preprocess_layout": "CHW",
    "preprocess_color": "RGB",
    "preprocess_kernel": "linear",
}

RESIZE_MODES = {
    "squash": "squash",
    "stretch": "squash",
    "fill": "squash",
    "resize": "squash",
    "center_crop": "center-crop",
    "center-crop": "center-crop",
    "centercrop": "center-crop",
    "crop": "center-crop",
}

# preprocess_kernel names (sharp's) -> the PIL filter that computes the same resampling.
RESAMPLING = {
    "nearest": Image.NEAREST,
    "linear": Image.BILINEAR,
    "bilinear": Image.BILINEAR,
    "cubic": Image.BICUBIC,
    "bicubic": Image.BICUBIC,
    "lanczos3": Image.LANCZOS,
}


class RowError(Exception):
    """One input row cannot be turned into a model input; the message is shown to the client."""


def read_parameters(model_config):
    """The string parameters of a model config (Triton's JSON form), over the defaults."""
    values = dict(DEFAULT_PARAMETERS)
    for key, value in (model_config.get("parameters") or {}).items():
        if isinstance(value, dict) and "string_value" in value:
            values[key] = value["string_value"]
    return values


def _float_triple(text, what):
    try:
        numbers = [float(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"parameter {what} must be three comma-separated numbers, got {text!r}") from None
    if len(numbers) != 3:
        raise ValueError(f"parameter {what} must be three comma-separated numbers, got {text!r}")
    return np.array(numbers, dtype=np.float32)


class Preprocessor:
    """Encoded image bytes -> the float32 tensor of one row, as the web app computes it."""

    def __init__(self, parameters):
        resize = parameters["preprocess_resize"].lower()
        if resize not in RESIZE_MODES:
            raise ValueError(f"preprocess_resize {resize!r} is not supported (squash or center_crop)")
        self.resize_mode = RESIZE_MODES[resize]
        size = [part for part in re.split(r"[\s,x\u00d7]+", parameters["preprocess_size"]) if part]
        if len(size) not in (1, 2):
            raise ValueError(f"preprocess_size must be N or H,W, got {parameters['preprocess_size']!r}")
        self.height = int(size[0])
        self.width = int(size[-1])
        if self.height <= 0 or self.width <= 0:
            raise ValueError(f"preprocess_size must be positive, got {parameters['preprocess_size']!r}")
        shorter = parameters.get("preprocess_resize_shorter", "").strip()
        # As torchvision's classic Resize(256) + CenterCrop(224): the crop is 87.5% of the resized image.
        self.resize_shorter = int(shorter) if shorter else math.floor(min(self.width, self.height) / 0.875 + 0.5)
        if self.resize_shorter < min(self.width, self.height):
            raise ValueError(f"preprocess_resize_shorter {self.resize_shorter} is smaller than the crop")
        self.mean = _float_triple(parameters["preprocess_mean"], "preprocess_mean")
        self.std = _float_triple(parameters["preprocess_std"], "preprocess_std")
        if np.any(self.std <= 0):
            raise ValueError("preprocess_std must be positive")
        layout = parameters["preprocess_layout"].upper()
        if layout not in ("CHW", "HWC", "NCHW", "NHWC"):
            raise ValueError(f"preprocess_layout must be CHW or HWC, got {layout!r}")
        self.layout = layout[-3:]
        self.color = parameters["preprocess_color"].upper()
        if self.color not in ("RGB", "BGR"):
            raise ValueError(f"preprocess_color must be RGB or BGR, got {self.color!r}")
        kernel = parameters["preprocess_kernel"].lower()
        if kernel not in RESAMPLING:
            raise ValueError(f"preprocess_kernel must be one of {sorted(RESAMPLING)}, got {kernel!r}")
        self.resample = RESAMPLING[kernel]
        self.max_pixels = int(parameters["max_image_pixels"])

    def _resize(self, image):
        if self.resize_mode == "squash":
            return image.resize((self.width, self.height), self.resample)
        # center-crop: shorter side to resize_shorter, longer side int(n * long / short), then the
        # centre height x width (offsets rounded half up, as the app does).
        n = self.resize_shorter
        if image.width <= image.height:
            size = (n, (n * image.height) // image.width)
        else:
            size = ((n * image.width) // image.height, n)
        if size[0] < self.width or size[1] < self.height:
            raise RowError(
                f"is {image.width}x{image.height}: resized to {size[0]}x{size[1]} it is smaller than the "
                f"{self.width}x{self.height} crop (preprocess_resize_shorter {n})"
            )
        image = image.resize(size, self.resample)
        top = math.floor((size[1] - self.height) / 2 + 0.5)
        left = math.floor((size[0] - self.width) / 2 + 0.5)
        return image.crop((left, top, left + self.width, top + self.height))

    def __call__(self, encoded):
        try:
            image = Image.open(io.BytesIO(encoded))
        except Image.DecompressionBombError as exc:
            raise RowError(f"declares too many pixels ({exc})") from None
        except UnidentifiedImageError:
            raise RowError("is not an image format the model can decode (JPEG, PNG, WebP, GIF, BMP, TIFF)") from None
        except (OSError, ValueError) as exc:
            raise RowError(f"could not be opened as an image ({exc})") from None
        width, height = image.size
        # Checked before any pixel is decoded: a small file can declare a huge canvas.
        if width * height > self.max_pixels:
            raise RowError(
                f"is {width}x{height} = {width * height} pixels, more than the limit of {self.max_pixels}"
            )
        try:
            image.load()
            image = ImageOps.exif_transpose(image)
            # Palette, greyscale and CMYK become RGB; an alpha channel is dropped, not composited.
            image = image.convert("RGB")
            image = self._resize(image)
        except RowError:
            raise
        except (OSError, ValueError, SyntaxError) as exc:
            raise RowError(f"is a corrupt or truncated image ({exc})") from None
        pixels = np.asarray(image, dtype=np.float32) / np.float32(255.0)
        if self.color == "BGR":
            pixels = pixels[:, :, ::-1]
        pixels = (pixels - self.mean) / self.std
        if self.layout == "CHW":
            pixels = pixels.transpose(2, 0, 1)
        return np.ascontiguousarray(pixels, dtype=np.float32)


def decode_base64(element):
    """The bytes behind one INPUT_IMAGE element (base64 text, optionally a data: URL)."""
    if isinstance(element, (bytes, bytearray, np.bytes_)):
        try:
            text = bytes(element).decode("ascii")
        except UnicodeDecodeError:
            raise RowError("is not base64 text (it holds non-ASCII bytes; send the base64 of the image)") from None
    elif isinstance(element, str):
        text = element
    else:
        raise RowError(f"has an unexpected element type {type(element).__name__}")
    text = text.strip()
    if text.startswith("data:"):
        comma = text.find(",")
        if comma < 0 or ";base64" not in text[:comma]:
            raise RowError("is a data: URL without ';base64,'")
        text = text[comma + 1 :]
    # MIME-style base64 wraps lines; whitespace carries no data.
    text = "".join(text.split())
    if not text:
        raise RowError("is empty")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise RowError(f"is not valid base64 ({exc})") from None


def softmax(logits):
    shifted = logits - logits.max(axis=1, keepdims=True)
    exps = np.exp(shifted)
    return exps / exps.sum(axis=1, keepdims=True)


def _log(level, message):
    logger = getattr(pb_utils, "Logger", None)
    if logger is not None:
        getattr(logger, level)(message)


class InferenceFailed(Exception):
    """The BLS call for a batch failed; every request that took part gets this message."""


class TritonPythonModel:
    def initialize(self, args):
        self.model_config = json.loads(args["model_config"])
        parameters = read_parameters(self.model_config)
        self.preprocess = Preprocessor(parameters)
        threads = int(parameters["decode_threads"])
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="decode") if threads > 1 else None

        # The model that holds the weights, called through BLS in execute() (BLS is not available
        # in initialize(), so the labels are checked against its output there).
        self.onnx_model_name = parameters["onnx_model_name"].strip()
        self.onnx_input_name = parameters["onnx_input_name"].strip()
        self.onnx_output_name = parameters["onnx_output_name"].strip()
        for key in ("onnx_model_name", "onnx_input_name", "onnx_output_name"):
            if not getattr(self, key):
                raise pb_utils.TritonModelException(f"food_classifier: parameter {key} must not be empty")

        # args["model_repository"] is this model's directory (…/food_classifier).
        model_dir = args.get("model_repository") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.labels_parameter = parameters["labels_path"]
        self.labels_path = os.path.normpath(os.path.join(model_dir, self.labels_parameter))
        if not os.path.isfile(self.labels_path):
            raise pb_utils.TritonModelException(
                f"food_classifier: labels not found at {self.labels_path} (parameter labels_path)"
            )
        with open(self.labels_path, encoding="utf-8") as handle:
            self.labels = [line.strip() for line in handle if line.strip()]
        if not self.labels:
            raise pb_utils.TritonModelException(f"food_classifier: {self.labels_path} has no labels")
        self.label_bytes = [label.encode("utf-8") for label in self.labels]

        label_config = pb_utils.get_output_config_by_name(self.model_config, LABEL_OUTPUT)
        probability_config = pb_utils.get_output_config_by_name(self.model_config, PROBABILITY_OUTPUT)
        if label_config is None or probability_config is None:
            raise pb_utils.TritonModelException(
                f"food_classifier: the config must declare outputs {LABEL_OUTPUT} and {PROBABILITY_OUTPUT}"
            )
        self.probability_dtype = pb_utils.triton_string_to_numpy(probability_config["data_type"])

        # The optional outputs beyond the original contract.
        self.probabilities_config = pb_utils.get_output_config_by_name(self.model_config, PROBABILITIES_OUTPUT)
        self.ood_config = pb_utils.get_output_config_by_name(self.model_config, OOD_OUTPUT)
        if self.probabilities_config is not None:
            dims = [int(d) for d in self.probabilities_config.get("dims", [])]
            if dims != [len(self.labels)]:
                raise pb_utils.TritonModelException(
                    f"food_classifier: output {PROBABILITIES_OUTPUT} has dims {dims}; "
                    f"{self.labels_path} has {len(self.labels)} labels"
                )
            label_file = self.probabilities_config.get("label_filename") or ""
            label_path = os.path.normpath(os.path.join(model_dir, label_file)) if label_file else ""
            if label_path and os.path.isfile(label_path):
                with open(label_path, encoding="utf-8") as handle:
                    own = [line.strip() for line in handle if line.strip()]
                if own != self.labels:
                    raise pb_utils.TritonModelException(
                        f"food_classifier: {label_file} (label_filename of {PROBABILITIES_OUTPUT}) differs from "
                        f"{self.labels_path} (parameter labels_path)"
                    )
        self.onnx_ood_name = parameters["onnx_ood_name"].strip()
        if self.ood_config is not None and not self.onnx_ood_name:
            raise pb_utils.TritonModelException(
                f"food_classifier: output {OOD_OUTPUT} is declared but parameter onnx_ood_name is empty"
            )

        # The logits are read with as_numpy(), so ask for them in CPU memory: a GPU instance of the
        # called model may otherwise hand back GPU memory. PreferredMemory exists in Triton 23.04+.
        self.bls_options = {}
        if hasattr(pb_utils, "PreferredMemory") and hasattr(pb_utils, "TRITONSERVER_MEMORY_CPU"):
            self.bls_options["preferred_memory"] = pb_utils.PreferredMemory(pb_utils.TRITONSERVER_MEMORY_CPU, 0)

        _log(
            "log_info",
            f"food_classifier: {args.get('model_instance_kind', 'CPU')} instance decodes images; inference by "
            f"BLS to {self.onnx_model_name} ({self.onnx_input_name} -> {self.onnx_output_name}), "
            f"{len(self.labels)} labels from {self.labels_path}",
        )

    def _prepare(self, element):
        """One INPUT_IMAGE element -> its model input row, or the RowError that explains why not."""
        try:
            return self.preprocess(decode_base64(element))
        except RowError as exc:
            return exc
        except Exception as exc:  # a decoder bug on a hostile file must not fail the other requests
            return RowError(f"could not be decoded ({type(exc).__name__}: {exc})")

    def _infer(self, batch):
        """The logits of a stacked batch (and its ood scores when OOD_SCORE is declared, else None),
        from ONE BLS request to the ONNX model.

        Every failure raises InferenceFailed: the call cannot be made, the called model answers an
        error (its message is kept as it is), or its output is missing or has the wrong shape.
        """
        wanted = [self.onnx_output_name] + ([self.onnx_ood_name] if self.ood_config is not None else [])
        try:
            request = pb_utils.InferenceRequest(
                model_name=self.onnx_model_name,
                requested_output_names=wanted,
                inputs=[pb_utils.Tensor(self.onnx_input_name, batch)],
                **self.bls_options,
            )
            response = request.exec()
        except Exception as exc:  # the call could not be made at all (pb_utils raises)
            raise InferenceFailed(str(exc)) from None
        if response.has_error():
            raise InferenceFailed(response.error().message())
        tensor = pb_utils.get_output_tensor_by_name(response, self.onnx_output_name)
        if tensor is None:
            raise InferenceFailed(f"{self.onnx_model_name} returned no output tensor named {self.onnx_output_name}")
        try:
            logits = np.asarray(tensor.as_numpy(), dtype=np.float32)
        except Exception as exc:
            raise InferenceFailed(f"{self.onnx_model_name} output {self.onnx_output_name}: {exc}") from None
        if logits.ndim != 2 or logits.shape[0] != batch.shape[0]:
            raise InferenceFailed(
                f"{self.onnx_model_name} output {self.onnx_output_name} has shape {list(logits.shape)}; "
                f"expected [{batch.shape[0]}, classes] for a batch of {batch.shape[0]}"
            )
        if self.ood_config is None:
            return logits, None
        tensor = pb_utils.get_output_tensor_by_name(response, self.onnx_ood_name)
        if tensor is None:
            raise InferenceFailed(f"{self.onnx_model_name} returned no output tensor named {self.onnx_ood_name}")
        try:
            ood = np.asarray(tensor.as_numpy(), dtype=np.float32)
        except Exception as exc:
            raise InferenceFailed(f"{self.onnx_model_name} output {self.onnx_ood_name}: {exc}") from None
        if ood.size != batch.shape[0]:
            raise InferenceFailed(
                f"{self.onnx_model_name} output {self.onnx_ood_name} has shape {list(ood.shape)}; "
                f"expected [{batch.shape[0]}, 1] for a batch of {batch.shape[0]}"
            )
        return logits, ood.reshape(-1)

    def execute(self, requests):
        responses = [None] * len(requests)
        # Collect every row of every request, so decoding can run on all of them at once.
        elements = []
        spans = []  # per request: (first element, element count, output shape) or a RowError
        for request in requests:
            tensor = pb_utils.get_input_tensor_by_name(request, INPUT_NAME)
            if tensor is None:
                spans.append(RowError(f"request has no input tensor named {INPUT_NAME}"))
                continue
            array = tensor.as_numpy()
            spans.append((len(elements), array.size, array.shape))
            elements.extend(array.reshape(-1))
        # Pillow releases the GIL while it decodes and resizes, so threads decode rows in parallel.
        if self.pool is not None and len(elements) > 1:
            prepared = list(self.pool.map(self._prepare, elements))
        else:
            prepared = [self._prepare(element) for element in elements]

        accepted = []  # (request index, first row in the batch, row count, output shape)
        batch = []
        for position, span in enumerate(spans):
            if isinstance(span, RowError):
                error = str(span)
            else:
                first, count, out_shape = span
                rows = prepared[first : first + count]
                bad = next(((i, r) for i, r in enumerate(rows) if isinstance(r, RowError)), None)
                error = f"{INPUT_NAME} row {bad[0]} {bad[1]}" if bad is not None else None
            if error is not None:
                responses[position] = _invalid_input_response(f"food_classifier: {error}")
                continue
            accepted.append((position, len(batch), count, out_shape))
            batch.extend(rows)

        if not batch:  # nothing to infer: requests with zero rows get empty outputs of their shape
            empty_probabilities = np.empty((0, len(self.labels)))
            for position, _, _, out_shape in accepted:
                responses[position] = pb_utils.InferenceResponse(
                    output_tensors=self._outputs(
                        np.empty(out_shape, dtype=np.object_),
                        np.empty(out_shape),
                        empty_probabilities,
                        np.empty(out_shape),
                        out_shape,
                    )
                )
            return responses

        # The whole call fails together: every request that took part gets the reason.
        try:
            logits, ood = self._infer(np.ascontiguousarray(np.stack(batch), dtype=np.float32))
        except InferenceFailed as exc:
            message = f"food_classifier: inference failed: {exc}"
            for position, _, _, _ in accepted:
                responses[position] = _error_response(message)
            return responses
        if logits.shape[1] != len(self.labels):
            message = (
                f"food_classifier: {self.labels_parameter} (parameter labels_path) has {len(self.labels)} labels "
                f"but {self.onnx_model_name} output {self.onnx_output_name} has {logits.shape[1]} classes"
            )
            for position, _, _, _ in accepted:
                responses[position] = _error_response(message)
            return responses

        probabilities = softmax(logits.astype(np.float64))
        top = probabilities.argmax(axis=1)
        top_probability = probabilities[np.arange(len(batch)), top]
        for position, start, count, out_shape in accepted:
            rows = slice(start, start + count)
            labels = np.array([self.label_bytes[k] for k in top[rows]], dtype=np.object_)
            responses[position] = pb_utils.InferenceResponse(
                output_tensors=self._outputs(
                    labels,
                    top_probability[rows],
                    probabilities[rows],
                    ood[rows] if ood is not None else None,
                    out_shape,
                )
            )
        return responses

    def _outputs(self, labels, top_probability, probabilities, ood, out_shape):
        """The output tensors of one request: the original two, then those the config adds."""
        tensors = [
            pb_utils.Tensor(LABEL_OUTPUT, labels.reshape(out_shape)),
            pb_utils.Tensor(PROBABILITY_OUTPUT, top_probability.astype(self.probability_dtype).reshape(out_shape)),
        ]
        if self.probabilities_config is not None:
            dtype = pb_utils.triton_string_to_numpy(self.probabilities_config["data_type"])
            shape = tuple(out_shape[:-1]) + (len(self.labels),)
            tensors.append(pb_utils.Tensor(PROBABILITIES_OUTPUT, probabilities.astype(dtype).reshape(shape)))
        if self.ood_config is not None and ood is not None:
            dtype = pb_utils.triton_string_to_numpy(self.ood_config["data_type"])
            tensors.append(pb_utils.Tensor(OOD_OUTPUT, ood.astype(dtype).reshape(out_shape)))
        return tensors

    def finalize(self):
        if self.pool is not None:
            self.pool.shutdown(wait=True)


def _error_response(message):
    """A failure of the server side (the BLS call, the labels): no code, so INTERNAL (HTTP 500)."""
    return pb_utils.InferenceResponse(output_tensors=[], error=pb_utils.TritonError(message))


def _invalid_input_response(message):
    """A request the model refuses (its input cannot be decoded): INVALID_ARG (HTTP 400), as
    food_preprocess answers, where pb_utils.TritonError has codes (Triton 23.x and newer)."""
    code = getattr(pb_utils.TritonError, "INVALID_ARG", None)
    error = pb_utils.TritonError(message) if code is None else pb_utils.TritonError(message, code)
    return pb_utils.InferenceResponse(output_tensors=[], error=error)
