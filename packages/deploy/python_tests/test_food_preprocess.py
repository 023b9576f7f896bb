"""models_staging/food_preprocess/1/model.py (the first step of food_classifier_ensemble) under the
Triton stand-in: raw image bytes in, the web app's tensor out, bad rows failing only their request.
(On the real embedded server and against the gateway's sharp preprocessing:
packages/deploy/test/ensemble.test.ts.)"""

import copy
import importlib.util
import json
import os
import unittest

import numpy as np
from PIL import Image

import harness as h
import triton_python_backend_utils as pb_utils  # the stand-in (harness put it first on sys.path)

MODEL_DIR = os.path.join(h.REPO_ROOT, "models_staging", "food_preprocess")


def load_module():
    spec = importlib.util.spec_from_file_location("food_preprocess_model", os.path.join(MODEL_DIR, "1", "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shipped_config():
    with open(os.path.join(MODEL_DIR, "config.pbtxt"), encoding="utf-8") as handle:
        return h.parse_pbtxt(handle.read())


def start(config=None):
    model = load_module().TritonPythonModel()
    model.initialize(
        {
            "model_config": json.dumps(config if config is not None else shipped_config()),
            "model_instance_kind": "CPU",
            "model_instance_device_id": "0",
            "model_repository": MODEL_DIR,
            "model_version": "1",
            "model_name": "food_preprocess",
        }
    )
    return model


def request(*elements, name="IMAGE"):
    array = np.array(list(elements), dtype=np.object_).reshape(len(elements), 1)
    return pb_utils.InferenceRequest(inputs=[pb_utils.Tensor(name, array)], model_name="food_preprocess")


def answer(response):
    if response.has_error():
        return response.error().message()
    return pb_utils.get_output_tensor_by_name(response, "PREPROCESSED").as_numpy()


class FoodPreprocessTest(unittest.TestCase):
    def setUp(self):
        self.model = start()
        self.photos = [h.read_bytes(p) for p in h.photo_paths(3)]

    def test_each_row_becomes_the_web_apps_tensor(self):
        [response] = self.model.execute([request(*self.photos)])
        tensor = answer(response)
        self.assertEqual(tensor.shape, (3, 3, 224, 224))
        self.assertEqual(tensor.dtype, np.float32)
        for row, photo in enumerate(self.photos):
            np.testing.assert_allclose(tensor[row], h.reference_tensor(photo), atol=1e-5, err_msg=f"row {row}")

    def test_a_bad_request_fails_alone_naming_the_row_and_the_reason(self):
        text = h.b64(self.photos[0])
        truncated = self.photos[1][: len(self.photos[1]) // 2]
        responses = self.model.execute(
            [request(self.photos[0]), request(self.photos[1], text), request(b""), request(truncated)]
        )
        self.assertEqual(answer(responses[0]).shape, (1, 3, 224, 224))
        self.assertRegex(
            answer(responses[1]),
            r"^food_preprocess: IMAGE row 1 is not an image format .*it looks like base64 text: send the raw bytes",
        )
        self.assertEqual(answer(responses[2]), "food_preprocess: IMAGE row 0 is empty")
        self.assertRegex(answer(responses[3]), r"^food_preprocess: IMAGE row 0 is a corrupt or truncated image")

    def test_a_request_without_the_input_is_refused_by_name(self):
        bad = pb_utils.InferenceRequest(
            inputs=[pb_utils.Tensor("INPUT_IMAGE", np.array([[self.photos[0]]], dtype=np.object_))],
            model_name="food_preprocess",
        )
        [response] = self.model.execute([bad])
        self.assertEqual(answer(response), "food_preprocess: request has no input tensor named IMAGE")

    def test_preprocessing_follows_the_config_parameters(self):
        config = copy.deepcopy(shipped_config())
        config["parameters"]["preprocess_kernel"] = {"string_value": "nearest"}
        [response] = start(config).execute([request(self.photos[0])])
        np.testing.assert_allclose(answer(response)[0], h.reference_tensor(self.photos[0], resample=Image.NEAREST), atol=1e-5)

    def test_output_dims_that_disagree_with_the_parameters_are_refused_at_load(self):
        config = copy.deepcopy(shipped_config())
        config["parameters"]["preprocess_size"] = {"string_value": "96"}
        with self.assertRaisesRegex(pb_utils.TritonModelException, r"dims .* do not match the preprocess_\* parameters"):
            start(config)


if __name__ == "__main__":
    unittest.main()
