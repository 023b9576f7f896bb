"""GourmetGram preprocessing step: a Triton Python-backend model (the first step of
food_classifier_ensemble).

Contract (see ../config.pbtxt):
  IMAGE         BYTES [N, 1]            the raw bytes of an encoded photo (JPEG, PNG, WebP, ...), one
                                        per row; NOT base64 (that is food_classifier's contract)
  PREPROCESSED  FP32  [N, 3, 224, 224]  the normalised model input of each row, as the web app
                                        computes it for food_classifier_onnx

Every row of every request is decoded and preprocessed the way the web app does it (EXIF orientation
applied, converted to RGB with any alpha channel dropped, squashed to 224x224 (or resized and
centre-cropped) with bilinear filtering, scaled to [0, 1], normalised with the ImageNet mean/std,
CHW, FP32); the numbers come from this model's config parameters `preprocess_*`, which must equal
food_classifier_onnx's (packages/deploy tests check it). A request with a row that cannot be decoded
gets an error response naming the row and the reason; the other requests of the batch are answered.

Duplicated code: Triton loads each model.py as its own module from its own directory, so this model
cannot import food_classifier/1/model.py. The block from RESIZE_MODES to the end of Preprocessor is a
copy of that file's; packages/deploy/test/model-repository.test.ts checks the two copies are
identical, so change both together.
"""

import io
import json
import math
import re
import string

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

import triton_python_backend_utils as pb_utils

INPUT_NAME = "IMAGE"
OUTPUT_NAME = "PREPROCESSED"

# Used only when a parameter is missing from the config; the shipped config sets all of them.
DEFAULT_PARAMETERS = {
    "max_image_pixels": "40000000",
    "preprocess_resize": "squash",
    "preprocess_size": "224",
    "preprocess_mean": "0.485,0.456,0.406",
    "preprocess_std": "0.229,0.224,0.225",
    "preprocess_layout": "CHW",
    "preprocess_color": "RGB",
    "preprocess_kernel": "linear",
}

# --- shared with food_classifier/1/model.py (identical; checked by the deploy tests) ---
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


# --- end of the code shared with food_classifier/1/model.py ---

BASE64_CHARACTERS = frozenset((string.ascii_letters + string.digits + "+/=\r\n").encode("ascii"))


def raw_bytes(element):
    """The encoded image of one IMAGE element (np.object_ arrays hold bytes)."""
    if isinstance(element, np.bytes_):
        element = bytes(element)
    if isinstance(element, str):
        element = element.encode("utf-8")
    if not isinstance(element, (bytes, bytearray)):
        raise RowError(f"has an unexpected element type {type(element).__name__}")
    if not element:
        raise RowError("is empty")
    return bytes(element)


class TritonPythonModel:
    def initialize(self, args):
        self.model_config = json.loads(args["model_config"])
        parameters = read_parameters(self.model_config)
        try:
            self.preprocess = Preprocessor(parameters)
        except ValueError as exc:
            raise pb_utils.TritonModelException(f"food_preprocess: {exc}") from None
        output_config = pb_utils.get_output_config_by_name(self.model_config, OUTPUT_NAME)
        if output_config is None:
            raise pb_utils.TritonModelException(f"food_preprocess: the config must declare output {OUTPUT_NAME}")
        channels_first = self.preprocess.layout == "CHW"
        p = self.preprocess
        self.row_shape = [3, p.height, p.width] if channels_first else [p.height, p.width, 3]
        if [int(d) for d in output_config["dims"]] != self.row_shape:
            raise pb_utils.TritonModelException(
                f"food_preprocess: output {OUTPUT_NAME} dims {output_config['dims']} do not match the "
                f"preprocess_* parameters ({self.row_shape})"
            )

    def _prepare(self, element):
        """One IMAGE element -> its tensor row, or the RowError that explains why not."""
        try:
            data = raw_bytes(element)
            try:
                return self.preprocess(data)
            except RowError as exc:
                if "not an image format" in str(exc) and set(data) <= BASE64_CHARACTERS:
                    raise RowError(f"{exc}; it looks like base64 text: send the raw bytes of the image") from None
                raise
        except RowError as exc:
            return exc
        except Exception as exc:  # a decoder bug on a hostile file must not fail the other requests
            return RowError(f"could not be decoded ({type(exc).__name__}: {exc})")

    def execute(self, requests):
        responses = []
        for request in requests:
            tensor = pb_utils.get_input_tensor_by_name(request, INPUT_NAME)
            if tensor is None:
                responses.append(_error_response(f"food_preprocess: request has no input tensor named {INPUT_NAME}"))
                continue
            array = tensor.as_numpy()
            rows = [self._prepare(element) for element in array.reshape(-1)]
            bad = next(((i, r) for i, r in enumerate(rows) if isinstance(r, RowError)), None)
            if bad is not None:
                responses.append(_error_response(f"food_preprocess: {INPUT_NAME} row {bad[0]} {bad[1]}"))
                continue
            # [N, 1] in -> [N, 3, H, W] out (the element dimension is replaced by the image's).
            shape = list(array.shape[:-1]) + self.row_shape
            batch = np.stack(rows) if rows else np.empty([0] + self.row_shape, dtype=np.float32)
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[pb_utils.Tensor(OUTPUT_NAME, np.ascontiguousarray(batch.reshape(shape), dtype=np.float32))]
                )
            )
        return responses


def _error_response(message):
    """An error for one request: INVALID_ARG (HTTP 400) where pb_utils.TritonError has codes (newer Tritons)."""
    code = getattr(pb_utils.TritonError, "INVALID_ARG", None)
    error = pb_utils.TritonError(message) if code is None else pb_utils.TritonError(message, code)
    return pb_utils.InferenceResponse(output_tensors=[], error=error)
