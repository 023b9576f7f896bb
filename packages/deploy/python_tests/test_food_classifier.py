"""Behaviour of models_staging/food_classifier/1/model.py under Debian python3 + numpy + PIL, with the
stand-ins for triton_python_backend_utils and onnxruntime (see stand_ins/)."""

import copy
import io
import unittest

import numpy as np
from PIL import Image

import harness as h
from harness import ort_stand_in, pb_utils


def outputs(response):
    label = pb_utils.get_output_tensor_by_name(response, "FOOD_LABEL").as_numpy()
    probability = pb_utils.get_output_tensor_by_name(response, "PROBABILITY").as_numpy()
    return label, probability


class ModelTestCase(unittest.TestCase):
    def setUp(self):
        ort_stand_in.RUNS.clear()
        ort_stand_in.SESSIONS.clear()
        ort_stand_in.FAIL_NEXT_RUN.clear()
        pb_utils.Logger.lines.clear()
        self.repo = h.TempRepository()
        self.module = h.load_model_module()

    def tearDown(self):
        self.repo.close()

    def start(self, config=None, kind="CPU", device_id="0"):
        model = self.module.TritonPythonModel()
        model.initialize(self.repo.args(config=config, kind=kind, device_id=device_id))
        return model


class InitializeTest(ModelTestCase):
    def test_loads_the_onnx_file_named_by_the_config_relative_to_the_model_directory(self):
        self.start()
        self.assertEqual(len(ort_stand_in.SESSIONS), 1)
        self.assertEqual(
            ort_stand_in.SESSIONS[0].path, f"{self.repo.root}/food_classifier_onnx/1/model.onnx"
        )

    def test_cpu_instances_use_only_the_cpu_provider(self):
        self.start(kind="CPU")
        self.assertEqual(ort_stand_in.SESSIONS[0].requested_providers, ["CPUExecutionProvider"])

    def test_gpu_instances_ask_for_cuda_on_their_device_then_cpu(self):
        self.start(kind="GPU", device_id="1")
        self.assertEqual(
            ort_stand_in.SESSIONS[0].requested_providers,
            [("CUDAExecutionProvider", {"device_id": 1}), "CPUExecutionProvider"],
        )
        self.assertTrue(any("GPU 1" in line for _, line in pb_utils.Logger.lines))

    def test_the_gpu_config_loads_with_cuda_first(self):
        self.start(config=h.real_config("configs/gpu.pbtxt"), kind="GPU", device_id="0")
        self.assertEqual(
            ort_stand_in.SESSIONS[0].requested_providers,
            [("CUDAExecutionProvider", {"device_id": 0}), "CPUExecutionProvider"],
        )

    def test_labels_come_from_the_labels_file_in_class_order(self):
        model = self.start()
        self.assertEqual(model.labels, h.LABELS)

    def test_a_missing_onnx_file_fails_with_a_message_that_names_the_path_and_the_fix(self):
        config = h.real_config()
        config["parameters"]["onnx_model_path"] = {"string_value": "../nowhere/model.onnx"}
        with self.assertRaises(pb_utils.TritonModelException) as caught:
            self.start(config=config)
        self.assertIn("nowhere/model.onnx", str(caught.exception))
        self.assertIn("model:build", str(caught.exception))

    def test_a_labels_file_that_disagrees_with_the_model_is_refused(self):
        self.repo.close()
        self.repo = h.TempRepository(labels=h.LABELS[:10])
        with self.assertRaises(pb_utils.TritonModelException) as caught:
            self.start()
        self.assertIn("10 labels but the model outputs 11 classes", str(caught.exception))

    def test_an_unsupported_resize_mode_is_refused_rather_than_silently_ignored(self):
        config = h.real_config()
        config["parameters"]["preprocess_resize"] = {"string_value": "letterbox"}
        with self.assertRaises(ValueError) as caught:
            self.start(config=config)
        self.assertIn("letterbox", str(caught.exception))


# Probabilities are compared within 1e-4: the stand-in and the reference average 50,176 float32 pixels
# per channel in different orders, which moves the logits by about 1e-5.
class BatchingTest(ModelTestCase):
    def test_every_row_of_every_request_goes_through_one_session_run(self):
        model = self.start()
        paths = h.photo_paths(6)
        photos = [h.read_bytes(path) for path in paths]
        requests = [
            h.request(h.b64(photos[0])),
            h.request(h.b64(photos[1]), h.b64(photos[2])),
            h.request(h.b64(photos[3]), h.b64(photos[4]), h.b64(photos[5])),
        ]
        responses = model.execute(requests)

        self.assertEqual(len(ort_stand_in.RUNS), 1, "all rows of all requests in one session run")
        feed = ort_stand_in.RUNS[0]["feed"]
        self.assertEqual(feed.shape, (6, 3, 224, 224))
        self.assertEqual(feed.dtype, np.float32)
        references = [h.reference_tensor(photo) for photo in photos]
        for row, reference in enumerate(references):
            np.testing.assert_allclose(feed[row], reference, atol=1e-5, err_msg=f"row {row}")

        labels, probabilities, _ = h.expected_outputs(references)
        self.assertGreater(len(set(labels)), 1, "the photos must not all get the same label")
        self.assertEqual(len(responses), 3)
        start = 0
        for response, count in zip(responses, (1, 2, 3)):
            self.assertFalse(response.has_error())
            label, probability = outputs(response)
            self.assertEqual(label.shape, (count, 1))
            self.assertEqual(probability.shape, (count, 1))
            self.assertEqual(label.dtype, np.object_)
            self.assertEqual(probability.dtype, np.float32)
            self.assertEqual([x.decode() for x in label.reshape(-1)], labels[start : start + count])
            np.testing.assert_allclose(probability.reshape(-1), probabilities[start : start + count], atol=1e-4)
            start += count

    def test_a_batch_of_sixteen_single_row_requests_is_one_run_of_sixteen(self):
        model = self.start()
        photos = [h.read_bytes(path) for path in h.photo_paths(16, step=29)]
        responses = model.execute([h.request(h.b64(photo)) for photo in photos])
        self.assertEqual([run["feed"].shape[0] for run in ort_stand_in.RUNS], [16])
        labels, _, _ = h.expected_outputs([h.reference_tensor(photo) for photo in photos])
        self.assertEqual([outputs(r)[0][0, 0].decode() for r in responses], labels)

    def test_the_probability_is_the_softmax_of_the_top_class_not_a_sigmoid(self):
        model = self.start()
        photo = h.read_bytes(h.photo_paths(1)[0])
        (response,) = model.execute([h.request(h.b64(photo))])
        _, probability = outputs(response)
        _, _, logits = h.expected_outputs([h.reference_tensor(photo)])
        softmax = np.exp(logits[0] - logits[0].max())
        softmax /= softmax.sum()
        sigmoid_of_top_logit = 1.0 / (1.0 + np.exp(-logits[0].max()))
        self.assertAlmostEqual(float(probability[0, 0]), float(softmax.max()), delta=1e-4)
        self.assertGreater(abs(float(probability[0, 0]) - sigmoid_of_top_logit), 0.05)

    def test_an_empty_batch_answers_nothing_and_runs_nothing(self):
        model = self.start()
        self.assertEqual(model.execute([]), [])
        self.assertEqual(ort_stand_in.RUNS, [])

    def test_a_request_with_zero_rows_gets_empty_outputs_of_its_shape(self):
        model = self.start()
        empty = pb_utils.InferenceRequest(
            inputs=[pb_utils.Tensor("INPUT_IMAGE", np.empty((0, 1), dtype=np.object_))]
        )
        photo = h.read_bytes(h.photo_paths(1)[0])
        responses = model.execute([empty, h.request(h.b64(photo))])
        self.assertFalse(responses[0].has_error())
        self.assertEqual(outputs(responses[0])[0].shape, (0, 1))
        self.assertEqual(outputs(responses[1])[0].shape, (1, 1))
        self.assertEqual(ort_stand_in.RUNS[0]["feed"].shape[0], 1)

    def test_threaded_decoding_gives_the_same_batch_as_serial_decoding(self):
        photos = [h.read_bytes(path) for path in h.photo_paths(8, step=53)]
        requests = [h.request(h.b64(photos[0]), h.b64(photos[1]))] + [h.request(h.b64(p)) for p in photos[2:]]
        feeds = {}
        for threads in ("1", "4"):
            config = h.real_config()
            config["parameters"]["decode_threads"] = {"string_value": threads}
            model = self.start(config=config)
            self.assertEqual(model.pool is None, threads == "1")
            labels = [outputs(r)[0].reshape(-1).tolist() for r in model.execute(requests)]
            feeds[threads] = (ort_stand_in.RUNS[-1]["feed"], labels)
            model.finalize()
        np.testing.assert_array_equal(feeds["1"][0], feeds["4"][0])
        self.assertEqual(feeds["1"][1], feeds["4"][1])
        self.assertEqual(feeds["4"][0].shape[0], 8)

    def test_preprocessing_parameters_are_read_from_the_config(self):
        config = h.real_config()
        config["parameters"]["preprocess_size"] = {"string_value": "96"}
        model = self.start(config=config)
        photo = h.read_bytes(h.photo_paths(1)[0])
        model.execute([h.request(h.b64(photo))])
        feed = ort_stand_in.RUNS[0]["feed"]
        self.assertEqual(feed.shape, (1, 3, 96, 96))
        np.testing.assert_allclose(feed[0], h.reference_tensor(photo, size=96), atol=1e-5)

    def test_the_resampling_kernel_is_read_from_the_config(self):
        config = h.real_config()
        config["parameters"]["preprocess_kernel"] = {"string_value": "nearest"}
        model = self.start(config=config)
        photo = h.read_bytes(h.photo_paths(1)[0])
        model.execute([h.request(h.b64(photo))])
        feed = ort_stand_in.RUNS[0]["feed"][0]
        np.testing.assert_allclose(feed, h.reference_tensor(photo, resample=Image.NEAREST), atol=1e-5)
        self.assertGreater(np.abs(feed - h.reference_tensor(photo)).max(), 0.1)

    def test_center_crop_and_a_rectangular_size_follow_the_config(self):
        config = h.real_config()
        config["parameters"]["preprocess_resize"] = {"string_value": "center_crop"}
        config["parameters"]["preprocess_size"] = {"string_value": "120,160"}
        model = self.start(config=config)
        photo = h.read_bytes(h.photo_paths(1)[0])
        model.execute([h.request(h.b64(photo))])
        feed = ort_stand_in.RUNS[0]["feed"][0]
        self.assertEqual(feed.shape, (3, 120, 160))
        # shorter side to round(120 / 0.875) = 137, then the centre 120 x 160
        image = Image.open(io.BytesIO(photo)).convert("RGB")
        w, hgt = image.size
        size = (137, 137 * hgt // w) if w <= hgt else (137 * w // hgt, 137)
        resized = image.resize(size, Image.BILINEAR)
        top, left = int((size[1] - 120) / 2 + 0.5), int((size[0] - 160) / 2 + 0.5)
        expected = h.normalise(resized.crop((left, top, left + 160, top + 120)))
        np.testing.assert_allclose(feed, expected, atol=1e-5)


class BadInputTest(ModelTestCase):
    def test_bad_requests_fail_alone_with_clear_messages_and_the_rest_succeed(self):
        config = h.real_config()
        config["parameters"]["decode_threads"] = {"string_value": "3"}  # the threaded path
        model = self.start(config=config)
        good = [h.read_bytes(path) for path in h.photo_paths(2)]
        truncated = good[0][: len(good[0]) // 3]
        requests = [
            h.request(h.b64(good[0])),
            h.request(b"this is %% not base64!"),
            h.request(h.b64(b"plain text, base64 encoded, but not an image")),
            h.request(h.b64(truncated)),
            h.request(h.b64(good[1])),
        ]
        responses = model.execute(requests)

        self.assertEqual(len(ort_stand_in.RUNS), 1)
        self.assertEqual(ort_stand_in.RUNS[0]["feed"].shape[0], 2, "only the good rows are run")
        labels, probabilities, _ = h.expected_outputs([h.reference_tensor(photo) for photo in good])
        for response, label, probability in ((responses[0], labels[0], probabilities[0]),
                                             (responses[4], labels[1], probabilities[1])):
            self.assertFalse(response.has_error())
            got_label, got_probability = outputs(response)
            self.assertEqual(got_label[0, 0].decode(), label)
            self.assertAlmostEqual(float(got_probability[0, 0]), float(probability), delta=1e-4)

        for index, expected in ((1, "is not valid base64"), (2, "is not an image format"), (3, "corrupt or truncated")):
            response = responses[index]
            self.assertTrue(response.has_error(), f"request {index}")
            self.assertEqual(response.output_tensors(), [])
            self.assertIn("INPUT_IMAGE row 0", response.error().message())
            self.assertIn(expected, response.error().message())

    def test_one_bad_row_fails_its_whole_request_and_names_the_row(self):
        model = self.start()
        photos = [h.read_bytes(path) for path in h.photo_paths(3)]
        responses = model.execute([
            h.request(h.b64(photos[0]), b"!!!", h.b64(photos[1])),
            h.request(h.b64(photos[2])),
        ])
        self.assertTrue(responses[0].has_error())
        self.assertIn("INPUT_IMAGE row 1 is not valid base64", responses[0].error().message())
        self.assertFalse(responses[1].has_error())
        self.assertEqual(ort_stand_in.RUNS[0]["feed"].shape[0], 1)

    def test_an_unexpected_decoder_exception_fails_only_its_request(self):
        model = self.start()
        photos = [h.read_bytes(path) for path in h.photo_paths(2)]
        hostile = h.b64(b"hostile")
        real_preprocess = model.preprocess

        def preprocess(data):
            if data == b"hostile":
                raise ZeroDivisionError("division by zero in a decoder")
            return real_preprocess(data)

        model.preprocess = preprocess
        responses = model.execute([h.request(h.b64(photos[0])), h.request(hostile), h.request(h.b64(photos[1]))])
        self.assertFalse(responses[0].has_error())
        self.assertFalse(responses[2].has_error())
        self.assertIn(
            "INPUT_IMAGE row 0 could not be decoded (ZeroDivisionError: division by zero in a decoder)",
            responses[1].error().message(),
        )
        self.assertEqual(ort_stand_in.RUNS[0]["feed"].shape[0], 2)

    def test_damaged_files_never_break_the_batch(self):
        # 40 deterministic corruptions of a real JPEG and PNG (flipped bytes, cut tails, spliced
        # headers) between two good photos: every request gets an answer, good ones the right one.
        rng = np.random.default_rng(11)
        good = [h.read_bytes(path) for path in h.photo_paths(2)]
        png = h.encode(Image.open(io.BytesIO(good[0])).convert("RGB"))
        damaged = []
        for k in range(40):
            data = bytearray(good[k % 2] if k % 3 else png)
            if k % 4 == 0:
                data = data[: rng.integers(10, len(data))]
            else:
                for at in rng.integers(0, min(len(data), 2000), size=8):
                    data[at] ^= int(rng.integers(1, 256))
            damaged.append(bytes(data))
        model = self.start()
        requests = [h.request(h.b64(good[0]))] + [h.request(h.b64(d)) for d in damaged] + [h.request(h.b64(good[1]))]
        responses = model.execute(requests)
        self.assertEqual(len(responses), len(requests))
        labels, _, _ = h.expected_outputs([h.reference_tensor(photo) for photo in good])
        self.assertEqual(outputs(responses[0])[0][0, 0].decode(), labels[0])
        self.assertEqual(outputs(responses[-1])[0][0, 0].decode(), labels[1])
        for response in responses[1:-1]:
            if response.has_error():
                self.assertRegex(response.error().message(), r"^food_classifier: INPUT_IMAGE row 0 ")
            else:
                self.assertEqual(outputs(response)[0].shape, (1, 1))
        self.assertGreater(sum(r.has_error() for r in responses), 0)

    def test_when_every_request_is_bad_nothing_is_run(self):
        model = self.start()
        responses = model.execute([h.request(b""), h.request(b"@@@")])
        self.assertEqual(ort_stand_in.RUNS, [])
        self.assertIn("INPUT_IMAGE row 0 is empty", responses[0].error().message())
        self.assertIn("is not valid base64", responses[1].error().message())

    def test_a_request_without_the_input_tensor_is_refused_by_name(self):
        model = self.start()
        wrong = h.request(h.b64(h.read_bytes(h.photo_paths(1)[0])), name="IMAGE")
        (response,) = model.execute([wrong])
        self.assertIn("no input tensor named INPUT_IMAGE", response.error().message())

    def test_too_many_pixels_is_refused_before_decoding(self):
        config = h.real_config()
        config["parameters"]["max_image_pixels"] = {"string_value": "1000000"}
        model = self.start(config=config)
        big = h.encode(Image.new("RGB", (1200, 1000), (200, 10, 10)))
        (response,) = model.execute([h.request(h.b64(big))])
        self.assertIn("1200x1000 = 1200000 pixels, more than the limit of 1000000", response.error().message())

    def test_a_failed_session_run_fails_the_requests_in_it_instead_of_raising(self):
        model = self.start()
        ort_stand_in.FAIL_NEXT_RUN.append("CUDA out of memory")
        photos = [h.read_bytes(path) for path in h.photo_paths(2)]
        responses = model.execute([h.request(h.b64(photos[0])), h.request(b"%%"), h.request(h.b64(photos[1]))])
        self.assertIn("inference failed: CUDA out of memory", responses[0].error().message())
        self.assertIn("inference failed: CUDA out of memory", responses[2].error().message())
        self.assertIn("is not valid base64", responses[1].error().message())


class PreprocessingTest(ModelTestCase):
    def run_one(self, data):
        model = self.start()
        (response,) = model.execute([h.request(h.b64(data))])
        self.assertFalse(response.has_error(), response.error() and response.error().message())
        return ort_stand_in.RUNS[-1]["feed"][0]

    def test_exif_orientation_is_applied(self):
        photo = Image.open(io.BytesIO(h.read_bytes(h.photo_paths(1)[0]))).convert("RGB")
        photo = photo.resize((160, 120))  # not square, so a missed rotation changes the squash
        exif = Image.Exif()
        exif[0x0112] = 6  # stored sideways: display after rotating 90 degrees clockwise
        tagged = h.encode(photo, "PNG", exif=exif)
        upright = h.encode(photo.transpose(Image.ROTATE_270), "PNG")
        feed = self.run_one(tagged)
        np.testing.assert_allclose(feed, h.reference_tensor(upright), atol=1e-6)
        self.assertGreater(np.abs(feed - h.reference_tensor(h.encode(photo, "PNG"))).max(), 0.1)

    def test_alpha_is_dropped_and_greyscale_and_palette_become_rgb(self):
        photo = Image.open(io.BytesIO(h.read_bytes(h.photo_paths(1)[0]))).convert("RGB")
        rgba = photo.copy()
        rgba.putalpha(Image.new("L", photo.size, 30))
        np.testing.assert_allclose(self.run_one(h.encode(rgba)), h.reference_tensor(h.encode(photo)), atol=1e-6)

        grey = photo.convert("L")
        feed = self.run_one(h.encode(grey))
        self.assertEqual(feed.shape, (3, 224, 224))
        # one grey value per pixel: the channels differ only by the per-channel normalisation
        np.testing.assert_allclose(feed[0] * h.STD[0] + h.MEAN[0], feed[1] * h.STD[1] + h.MEAN[1], atol=1e-5)

        palette = photo.convert("P", palette=Image.ADAPTIVE, colors=32)
        np.testing.assert_allclose(
            self.run_one(h.encode(palette)), h.reference_tensor(h.encode(palette.convert("RGB"))), atol=1e-6
        )

    def test_data_urls_and_wrapped_base64_lines_are_accepted(self):
        photo = h.read_bytes(h.photo_paths(1)[0])
        text = h.b64(photo).decode()
        wrapped = "\n".join(text[i : i + 76] for i in range(0, len(text), 76))
        model = self.start()
        responses = model.execute([
            h.request(("data:image/jpeg;base64," + text).encode()),
            h.request(wrapped.encode()),
        ])
        self.assertTrue(all(not r.has_error() for r in responses))
        feed = ort_stand_in.RUNS[0]["feed"]
        self.assertEqual(feed.shape[0], 2)
        np.testing.assert_array_equal(feed[0], feed[1])
        np.testing.assert_allclose(feed[0], h.reference_tensor(photo), atol=1e-5)


class ConfigTest(unittest.TestCase):
    def test_the_shipped_config_keeps_the_seed_contract(self):
        config = h.real_config()
        self.assertEqual(config["backend"], "python")
        self.assertGreater(config["max_batch_size"], 0)
        self.assertEqual(config["input"], [{"name": "INPUT_IMAGE", "data_type": "TYPE_STRING", "dims": [1]}])
        self.assertEqual(
            {o["name"]: (o["data_type"], o["dims"]) for o in config["output"]},
            {"FOOD_LABEL": ("TYPE_STRING", [1]), "PROBABILITY": ("TYPE_FP32", [1])},
        )

    def test_the_gpu_variant_differs_only_in_running_one_instance_per_gpu(self):
        default, gpu = h.real_config(), h.real_config("configs/gpu.pbtxt")
        self.assertEqual(default["instance_group"], [{"count": 1, "kind": "KIND_AUTO"}])
        self.assertEqual(gpu["instance_group"], [{"count": 1, "kind": "KIND_GPU"}])
        del default["instance_group"], gpu["instance_group"]
        self.assertEqual(gpu, default)

    def test_the_shipped_parameters_match_the_defaults_in_model_py(self):
        module = h.load_model_module()
        shipped = {k: v["string_value"] for k, v in h.real_config()["parameters"].items()}
        self.assertEqual(shipped, module.DEFAULT_PARAMETERS)


if __name__ == "__main__":
    unittest.main()
