"""Behaviour of models_staging/food_classifier/1/model.py under Debian python3 + numpy + PIL, with the
TEST STAND-INs for triton_python_backend_utils (BLS included) and for food_classifier_onnx, the model
it calls by BLS (see stand_ins/)."""

import io
import os
import unittest

import numpy as np
from PIL import Image

import harness as h
from harness import pb_utils


def outputs(response):
    label = pb_utils.get_output_tensor_by_name(response, "FOOD_LABEL").as_numpy()
    probability = pb_utils.get_output_tensor_by_name(response, "PROBABILITY").as_numpy()
    return label, probability


def added_outputs(response):
    """PROBABILITIES and OOD_SCORE (beyond the original contract), None when absent."""
    found = [pb_utils.get_output_tensor_by_name(response, name) for name in ("PROBABILITIES", "OOD_SCORE")]
    return [tensor.as_numpy() if tensor is not None else None for tensor in found]


class ModelTestCase(unittest.TestCase):
    def setUp(self):
        pb_utils.clear_models()
        pb_utils.Logger.lines.clear()
        self.onnx = h.serve_linear_onnx_model()
        self.calls = self.onnx.calls  # one entry per BLS request that reached food_classifier_onnx
        self.repo = h.TempRepository()
        self.module = h.load_model_module()

    def tearDown(self):
        self.repo.close()
        pb_utils.clear_models()

    def start(self, config=None, kind="CPU", device_id="0"):
        model = self.module.TritonPythonModel()
        with pb_utils.bls_disabled():  # as in Triton, BLS works only inside execute()
            model.initialize(self.repo.args(config=config, kind=kind, device_id=device_id))
        return model


class InitializeTest(ModelTestCase):
    def test_initialize_needs_no_onnx_file_and_makes_no_bls_call(self):
        self.assertFalse(os.path.exists(os.path.join(self.repo.root, "food_classifier_onnx", "1")))
        self.start()
        self.assertEqual(self.calls, [])

    def test_the_called_model_and_its_tensor_names_come_from_the_config(self):
        other = h.serve_linear_onnx_model(name="my_onnx", input_name="pixels", output_name="logits")
        config = h.real_config()
        config["parameters"]["onnx_model_name"] = {"string_value": "my_onnx"}
        config["parameters"]["onnx_input_name"] = {"string_value": "pixels"}
        config["parameters"]["onnx_output_name"] = {"string_value": "logits"}
        model = self.start(config=config)
        photo = h.read_bytes(h.photo_paths(1)[0])
        (response,) = model.execute([h.request(h.b64(photo))])
        self.assertFalse(response.has_error(), response.error() and response.error().message())
        self.assertEqual(self.calls, [], "nothing reaches food_classifier_onnx")
        self.assertEqual(len(other.calls), 1)
        call = other.calls[0]
        self.assertEqual(call["model_name"], "my_onnx")
        self.assertEqual(call["input_names"], ["pixels"])
        self.assertEqual(call["requested_output_names"], ["logits", "ood_score"])
        labels, _, _ = h.expected_outputs([h.reference_tensor(photo)])
        self.assertEqual(outputs(response)[0][0, 0].decode(), labels[0])

    def test_the_logits_are_asked_for_in_cpu_memory(self):
        model = self.start(kind="GPU", device_id="1")
        model.execute([h.request(h.b64(h.read_bytes(h.photo_paths(1)[0])))])
        self.assertEqual(self.calls[0]["preferred_memory"], (pb_utils.TRITONSERVER_MEMORY_CPU, 0))

    def test_a_triton_without_preferred_memory_is_called_without_it(self):
        saved = pb_utils.PreferredMemory
        del pb_utils.PreferredMemory  # Triton before 23.04
        try:
            model = self.start()
            (response,) = model.execute([h.request(h.b64(h.read_bytes(h.photo_paths(1)[0])))])
        finally:
            pb_utils.PreferredMemory = saved
        self.assertFalse(response.has_error())
        self.assertIsNone(self.calls[0]["preferred_memory"])

    def test_a_gpu_instance_kind_changes_nothing_but_the_log_line(self):
        photo = h.b64(h.read_bytes(h.photo_paths(1)[0]))
        answers = []
        for kind, config in (("CPU", None), ("GPU", h.real_config("configs/gpu.pbtxt"))):
            model = self.start(config=config, kind=kind)
            answers.append(outputs(model.execute([h.request(photo)])[0])[1][0, 0])
        self.assertEqual(answers[0], answers[1])
        np.testing.assert_array_equal(self.calls[0]["feed"], self.calls[1]["feed"])
        lines = [line for _, line in pb_utils.Logger.lines]
        self.assertTrue(any(line.startswith("food_classifier: GPU instance") for line in lines))
        self.assertTrue(any("BLS to food_classifier_onnx (input -> output)" in line for line in lines))

    def test_labels_come_from_the_labels_file_in_class_order(self):
        model = self.start()
        self.assertEqual(model.labels, h.LABELS)

    def test_a_missing_labels_file_fails_with_a_message_that_names_the_path(self):
        config = h.real_config()
        config["parameters"]["labels_path"] = {"string_value": "../nowhere/labels.txt"}
        with self.assertRaises(pb_utils.TritonModelException) as caught:
            self.start(config=config)
        self.assertIn("nowhere/labels.txt (parameter labels_path)", str(caught.exception))

    def test_an_empty_called_model_name_is_refused(self):
        config = h.real_config()
        config["parameters"]["onnx_model_name"] = {"string_value": " "}
        with self.assertRaises(pb_utils.TritonModelException) as caught:
            self.start(config=config)
        self.assertIn("parameter onnx_model_name must not be empty", str(caught.exception))

    def test_a_labels_file_that_disagrees_with_probabilities_fails_at_load(self):
        self.repo.close()
        self.repo = h.TempRepository(labels=h.LABELS[:10])
        with self.assertRaises(pb_utils.TritonModelException) as caught:
            self.start()
        self.assertIn("output PROBABILITIES has dims [11]", str(caught.exception))
        self.assertIn("has 10 labels", str(caught.exception))

    def test_a_label_filename_that_differs_from_labels_path_fails_at_load(self):
        with open(os.path.join(self.repo.model_dir, "labels.txt"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(reversed(h.LABELS)) + "\n")
        with self.assertRaises(pb_utils.TritonModelException) as caught:
            self.start()
        self.assertIn("labels.txt (label_filename of PROBABILITIES) differs from", str(caught.exception))

    def test_ood_score_declared_without_a_called_output_name_is_refused(self):
        config = h.real_config()
        config["parameters"]["onnx_ood_name"] = {"string_value": ""}
        with self.assertRaises(pb_utils.TritonModelException) as caught:
            self.start(config=config)
        self.assertIn("OOD_SCORE is declared but parameter onnx_ood_name is empty", str(caught.exception))

    def test_a_labels_file_that_disagrees_with_the_model_fails_each_request_clearly(self):
        self.repo.close()
        self.repo = h.TempRepository(labels=h.LABELS[:10])
        # The original contract (no PROBABILITIES, whose dims would catch it at load): BLS is not
        # available in initialize(), so this is found at execute time.
        model = self.start(config=h.original_outputs_only(h.real_config()))
        photos = [h.read_bytes(path) for path in h.photo_paths(2)]
        responses = model.execute([h.request(h.b64(photos[0])), h.request(b"%%"), h.request(h.b64(photos[1]))])
        expected = (
            "food_classifier: ../food_classifier_onnx/labels.txt (parameter labels_path) has 10 labels "
            "but food_classifier_onnx output output has 11 classes"
        )
        self.assertEqual(responses[0].error().message(), expected)
        self.assertEqual(responses[2].error().message(), expected)
        self.assertIn("is not valid base64", responses[1].error().message())
        self.assertEqual(len(self.calls), 1)

    def test_an_unsupported_resize_mode_is_refused_rather_than_silently_ignored(self):
        config = h.real_config()
        config["parameters"]["preprocess_resize"] = {"string_value": "letterbox"}
        with self.assertRaises(ValueError) as caught:
            self.start(config=config)
        self.assertIn("letterbox", str(caught.exception))


# Probabilities are compared within 1e-4: the stand-in and the reference average 50,176 float32 pixels
# per channel in different orders, which moves the logits by about 1e-5.
class BatchingTest(ModelTestCase):
    def test_every_row_of_every_request_goes_through_one_bls_call(self):
        model = self.start()
        paths = h.photo_paths(6)
        photos = [h.read_bytes(path) for path in paths]
        requests = [
            h.request(h.b64(photos[0])),
            h.request(h.b64(photos[1]), h.b64(photos[2])),
            h.request(h.b64(photos[3]), h.b64(photos[4]), h.b64(photos[5])),
        ]
        responses = model.execute(requests)

        self.assertEqual(len(self.calls), 1, "all rows of all requests in one BLS call")
        call = self.calls[0]
        self.assertEqual(call["model_name"], "food_classifier_onnx")
        self.assertEqual(call["input_names"], ["input"])
        self.assertEqual(call["requested_output_names"], ["output", "ood_score"], "OOD_SCORE is declared")
        feed = call["feed"]
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
            every, ood = added_outputs(response)
            self.assertEqual(every.shape, (count, len(h.LABELS)))
            self.assertEqual(ood.shape, (count, 1))
            fed = list(feed[start : start + count])  # the rows the stand-in received
            np.testing.assert_allclose(ood.reshape(-1), h.expected_ood(fed), atol=1e-6)
            start += count

    def test_probabilities_are_every_classs_softmax_in_label_order(self):
        model = self.start()
        photos = [h.read_bytes(path) for path in h.photo_paths(3)]
        responses = model.execute([h.request(h.b64(photo)) for photo in photos])
        # The stand-in's logits of the rows model.py sent (one BLS call of three).
        _, _, logits = h.expected_outputs(list(self.calls[0]["feed"]))
        for response, row in zip(responses, logits):
            label, probability = outputs(response)
            every, _ = added_outputs(response)
            self.assertEqual(every.dtype, np.float32)
            softmax = np.exp(row - row.max())
            softmax /= softmax.sum()
            np.testing.assert_allclose(every[0], softmax, atol=1e-6)
            self.assertAlmostEqual(float(every[0].sum()), 1.0, delta=1e-5)
            # The original outputs are the top entry of the new one.
            self.assertEqual(label[0, 0].decode(), h.LABELS[int(every[0].argmax())])
            self.assertAlmostEqual(float(probability[0, 0]), float(every[0].max()), delta=1e-7)

    def test_the_original_contract_alone_asks_only_for_the_logits_and_answers_two_outputs(self):
        model = self.start(config=h.original_outputs_only(h.real_config()))
        photo = h.read_bytes(h.photo_paths(1)[0])
        (response,) = model.execute([h.request(h.b64(photo))])
        self.assertFalse(response.has_error())
        self.assertEqual(self.calls[0]["requested_output_names"], ["output"])
        self.assertEqual([t.name() for t in response.output_tensors()], ["FOOD_LABEL", "PROBABILITY"])
        self.assertEqual(added_outputs(response), [None, None])

    def test_a_batch_of_sixteen_single_row_requests_is_one_bls_call_of_sixteen(self):
        model = self.start()
        photos = [h.read_bytes(path) for path in h.photo_paths(16, step=29)]
        responses = model.execute([h.request(h.b64(photo)) for photo in photos])
        self.assertEqual([call["shape"] for call in self.calls], [(16, 3, 224, 224)])
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

    def test_an_empty_batch_answers_nothing_and_calls_nothing(self):
        model = self.start()
        self.assertEqual(model.execute([]), [])
        self.assertEqual(self.calls, [])

    def test_a_request_with_zero_rows_gets_empty_outputs_of_its_shape(self):
        model = self.start()
        empty = pb_utils.InferenceRequest(
            inputs=[pb_utils.Tensor("INPUT_IMAGE", np.empty((0, 1), dtype=np.object_))]
        )
        (alone,) = model.execute([empty])
        self.assertFalse(alone.has_error())
        self.assertEqual(outputs(alone)[0].shape, (0, 1))
        self.assertEqual(outputs(alone)[1].dtype, np.float32)
        self.assertEqual([a.shape for a in added_outputs(alone)], [(0, len(h.LABELS)), (0, 1)])
        self.assertEqual(self.calls, [], "zero rows alone: no BLS call")

        photo = h.read_bytes(h.photo_paths(1)[0])
        responses = model.execute([empty, h.request(h.b64(photo))])
        self.assertFalse(responses[0].has_error())
        self.assertEqual(outputs(responses[0])[0].shape, (0, 1))
        self.assertEqual(outputs(responses[1])[0].shape, (1, 1))
        self.assertEqual(self.calls[0]["feed"].shape[0], 1)

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
            feeds[threads] = (self.calls[-1]["feed"], labels)
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
        feed = self.calls[0]["feed"]
        self.assertEqual(feed.shape, (1, 3, 96, 96))
        np.testing.assert_allclose(feed[0], h.reference_tensor(photo, size=96), atol=1e-5)

    def test_the_resampling_kernel_is_read_from_the_config(self):
        config = h.real_config()
        config["parameters"]["preprocess_kernel"] = {"string_value": "nearest"}
        model = self.start(config=config)
        photo = h.read_bytes(h.photo_paths(1)[0])
        model.execute([h.request(h.b64(photo))])
        feed = self.calls[0]["feed"][0]
        np.testing.assert_allclose(feed, h.reference_tensor(photo, resample=Image.NEAREST), atol=1e-5)
        self.assertGreater(np.abs(feed - h.reference_tensor(photo)).max(), 0.1)

    def test_center_crop_and_a_rectangular_size_follow_the_config(self):
        config = h.real_config()
        config["parameters"]["preprocess_resize"] = {"string_value": "center_crop"}
        config["parameters"]["preprocess_size"] = {"string_value": "120,160"}
        model = self.start(config=config)
        photo = h.read_bytes(h.photo_paths(1)[0])
        model.execute([h.request(h.b64(photo))])
        feed = self.calls[0]["feed"][0]
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

        self.assertEqual(len(self.calls), 1)
        self.assertEqual(self.calls[0]["feed"].shape[0], 2, "only the good rows are run")
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
            # The client's fault: INVALID_ARG (HTTP 400 / gRPC INVALID_ARGUMENT), as food_preprocess.
            self.assertEqual(response.error().code(), pb_utils.TritonError.INVALID_ARG, f"request {index}")

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
        self.assertEqual(self.calls[0]["feed"].shape[0], 1)

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
        self.assertEqual(self.calls[0]["feed"].shape[0], 2)

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
        self.assertEqual(self.calls, [])
        self.assertIn("INPUT_IMAGE row 0 is empty", responses[0].error().message())
        self.assertIn("is not valid base64", responses[1].error().message())
        self.assertEqual([r.error().code() for r in responses], [pb_utils.TritonError.INVALID_ARG] * 2)

    def test_a_request_without_the_input_tensor_is_refused_by_name(self):
        model = self.start()
        wrong = h.request(h.b64(h.read_bytes(h.photo_paths(1)[0])), name="IMAGE")
        (response,) = model.execute([wrong])
        self.assertIn("no input tensor named INPUT_IMAGE", response.error().message())
        self.assertEqual(response.error().code(), pb_utils.TritonError.INVALID_ARG)

    def test_too_many_pixels_is_refused_before_decoding(self):
        config = h.real_config()
        config["parameters"]["max_image_pixels"] = {"string_value": "1000000"}
        model = self.start(config=config)
        big = h.encode(Image.new("RGB", (1200, 1000), (200, 10, 10)))
        (response,) = model.execute([h.request(h.b64(big))])
        self.assertIn("1200x1000 = 1200000 pixels, more than the limit of 1000000", response.error().message())
        self.assertEqual(response.error().code(), pb_utils.TritonError.INVALID_ARG)

    def test_a_failed_bls_call_fails_the_requests_in_it_with_the_called_models_message(self):
        model = self.start()
        self.onnx.fail_next.append("onnx runtime error 6: CUDA out of memory")
        photos = [h.read_bytes(path) for path in h.photo_paths(2)]
        responses = model.execute([h.request(h.b64(photos[0])), h.request(b"%%"), h.request(h.b64(photos[1]))])
        expected = "food_classifier: inference failed: onnx runtime error 6: CUDA out of memory"
        self.assertEqual(responses[0].error().message(), expected)
        self.assertEqual(responses[2].error().message(), expected)
        self.assertEqual(responses[0].output_tensors(), [])
        # A failure of the server side stays INTERNAL; only the bad request is INVALID_ARG.
        self.assertEqual(responses[0].error().code(), pb_utils.TritonError.INTERNAL)
        self.assertIn("is not valid base64", responses[1].error().message())
        self.assertEqual(responses[1].error().code(), pb_utils.TritonError.INVALID_ARG)
        self.assertEqual(len(self.calls), 1)
        # The next call works again: nothing is left broken.
        (again,) = model.execute([h.request(h.b64(photos[0]))])
        self.assertFalse(again.has_error())

    def test_a_called_model_that_is_not_loaded_is_named_in_the_error(self):
        pb_utils.clear_models()  # e.g. explicit model control mode with only food_classifier loaded
        model = self.start()
        (response,) = model.execute([h.request(h.b64(h.read_bytes(h.photo_paths(1)[0])))])
        self.assertEqual(
            response.error().message(),
            "food_classifier: inference failed: Request for unknown model: 'food_classifier_onnx' is not found",
        )

    def test_the_called_models_own_checks_reach_the_client(self):
        # A batch the called model refuses (here: more rows than its max_batch_size) fails with its message.
        self.onnx.max_batch_size = 2
        model = self.start()
        photos = [h.read_bytes(path) for path in h.photo_paths(3)]
        responses = model.execute([h.request(h.b64(photo)) for photo in photos])
        for response in responses:
            self.assertEqual(
                response.error().message(),
                "food_classifier: inference failed: [request id: <id_unknown>] inference request "
                "batch-size must be <= 2 for 'food_classifier_onnx'",
            )

    def test_exec_raising_fails_the_requests_instead_of_raising(self):
        def broken(request):
            raise pb_utils.TritonModelException("Failed to open the cudaIpcHandle")

        pb_utils.serve_model("food_classifier_onnx", broken)
        model = self.start()
        photos = [h.read_bytes(path) for path in h.photo_paths(2)]
        responses = model.execute([h.request(h.b64(photo)) for photo in photos])
        for response in responses:
            self.assertEqual(
                response.error().message(), "food_classifier: inference failed: Failed to open the cudaIpcHandle"
            )

    def test_an_answer_without_the_logits_or_of_the_wrong_shape_fails_clearly(self):
        answers = {
            "no output": pb_utils.InferenceResponse(output_tensors=[]),
            "wrong rows": pb_utils.InferenceResponse(
                output_tensors=[pb_utils.Tensor("output", np.zeros((1, 11), dtype=np.float32))]
            ),
        }
        expected = {
            "no output": "food_classifier: inference failed: "
            "food_classifier_onnx returned no output tensor named output",
            "wrong rows": "food_classifier: inference failed: food_classifier_onnx output output has shape [1, 11]; "
            "expected [2, classes] for a batch of 2",
        }
        photos = [h.read_bytes(path) for path in h.photo_paths(2)]
        for case, answer in answers.items():
            pb_utils.serve_model("food_classifier_onnx", lambda request, answer=answer: answer)
            model = self.start()
            responses = model.execute([h.request(h.b64(photo)) for photo in photos])
            self.assertEqual([r.error().message() for r in responses], [expected[case]] * 2, case)

    def test_bls_is_not_used_outside_execute(self):
        # The stand-in refuses BLS in initialize() as Triton does; model.py's initialize() passed above,
        # and this checks the stand-in really enforces it (so that pass means something).
        with pb_utils.bls_disabled():
            with self.assertRaises(pb_utils.TritonModelException):
                request = pb_utils.InferenceRequest(
                    model_name="food_classifier_onnx", requested_output_names=["output"], inputs=[]
                )
                request.exec()


class PreprocessingTest(ModelTestCase):
    def run_one(self, data):
        model = self.start()
        (response,) = model.execute([h.request(h.b64(data))])
        self.assertFalse(response.has_error(), response.error() and response.error().message())
        return self.calls[-1]["feed"][0]

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
        feed = self.calls[0]["feed"]
        self.assertEqual(feed.shape[0], 2)
        np.testing.assert_array_equal(feed[0], feed[1])
        np.testing.assert_allclose(feed[0], h.reference_tensor(photo), atol=1e-5)


class ConfigTest(unittest.TestCase):
    def test_the_shipped_config_keeps_the_seed_contract(self):
        config = h.real_config()
        self.assertEqual(config["backend"], "python")
        self.assertGreater(config["max_batch_size"], 0)
        self.assertEqual(config["input"], [{"name": "INPUT_IMAGE", "data_type": "TYPE_STRING", "dims": [1]}])
        # The original two outputs first, unchanged; then the two this model adds.
        self.assertEqual(
            [(o["name"], o["data_type"], o["dims"]) for o in config["output"]],
            [
                ("FOOD_LABEL", "TYPE_STRING", [1]),
                ("PROBABILITY", "TYPE_FP32", [1]),
                ("PROBABILITIES", "TYPE_FP32", [len(h.LABELS)]),
                ("OOD_SCORE", "TYPE_FP32", [1]),
            ],
        )

    def test_the_label_file_of_probabilities_is_food_classifier_onnxs(self):
        config = h.real_config()
        (probabilities,) = [o for o in config["output"] if o["name"] == "PROBABILITIES"]
        own = os.path.join(h.MODEL_DIR, probabilities["label_filename"])
        onnx = os.path.join(h.REPO_ROOT, "models_staging", "food_classifier_onnx", "labels.txt")
        with open(own, encoding="utf-8") as a, open(onnx, encoding="utf-8") as b:
            self.assertEqual(a.read(), b.read())

    def test_both_variants_run_cpu_instances_and_differ_only_in_their_count(self):
        # The Python model only decodes images; the GPU work is food_classifier_onnx's (its configs/gpu.pbtxt).
        default, gpu = h.real_config(), h.real_config("configs/gpu.pbtxt")
        self.assertEqual(default["instance_group"], [{"count": 1, "kind": "KIND_CPU"}])
        self.assertEqual(gpu["instance_group"], [{"count": 2, "kind": "KIND_CPU"}])
        del default["instance_group"], gpu["instance_group"]
        self.assertEqual(gpu, default)

    def test_the_shipped_config_calls_food_classifier_onnx_by_its_real_tensor_names(self):
        params = {k: v["string_value"] for k, v in h.real_config()["parameters"].items()}
        self.assertEqual(params["onnx_model_name"], "food_classifier_onnx")
        self.assertNotIn("onnx_model_path", params)
        onnx_config = os.path.join(h.REPO_ROOT, "models_staging", "food_classifier_onnx", "config.pbtxt")
        with open(onnx_config, encoding="utf-8") as handle:
            onnx = h.parse_pbtxt(handle.read())
        self.assertIn(params["onnx_input_name"], [entry["name"] for entry in onnx["input"]])
        self.assertIn(params["onnx_output_name"], [entry["name"] for entry in onnx["output"]])

    def test_model_py_does_not_use_onnxruntime(self):
        with open(os.path.join(h.MODEL_DIR, "1", "model.py"), encoding="utf-8") as handle:
            source = handle.read()
        self.assertNotRegex(source, r"(?m)^\s*(import|from)\s+onnxruntime")
        self.assertNotIn("InferenceSession", source)

    def test_the_shipped_parameters_match_the_defaults_in_model_py(self):
        module = h.load_model_module()
        shipped = {k: v["string_value"] for k, v in h.real_config()["parameters"].items()}
        self.assertEqual(shipped, module.DEFAULT_PARAMETERS)


if __name__ == "__main__":
    unittest.main()
