"""Runs models_staging/food_classifier exactly as it is in the repository (its config.pbtxt, its path to
food_classifier_onnx's labels.txt) on real photos, with the Triton stand-in, whose BLS requests for
food_classifier_onnx are answered by the TEST STAND-IN NodeBridgeModel: the real
models_staging/food_classifier_onnx/1/model.onnx run by onnxruntime-node. Driven by
test/real-model.test.ts.

stdin:  {"executes": [[request, ...], ...]} where a request is a list of rows and a row is
        {"path": "<image file>"} (sent as base64) or {"text": "<sent as is>"}
stdout: {"runs": [rows per BLS call, ...], "calls": [{"model", "input", "requested"}, ...],
         "onnx": "<the model.onnx that answered>",
         "executes": [[{"labels": [...], "probabilities": [...], "shape": [...],
                        "every": [[11 probabilities], ...], "ood": [...]} or {"error": "..."}, ...], ...]}
"""

import base64
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import harness as h  # noqa: E402  (puts the stand-ins first on sys.path)
from harness import pb_utils  # noqa: E402


def row_bytes(row):
    if "path" in row:
        with open(row["path"], "rb") as handle:
            return base64.b64encode(handle.read())
    return row["text"].encode()


def main():
    job = json.load(sys.stdin)
    onnx_file = os.path.join(h.REPO_ROOT, "models_staging", "food_classifier_onnx", "1", "model.onnx")
    called = h.NodeBridgeModel(onnx_file, name="food_classifier_onnx")
    pb_utils.serve_model(called.name, called)
    module = h.load_model_module()
    model = module.TritonPythonModel()
    with pb_utils.bls_disabled():
        model.initialize(
            {
                "model_config": json.dumps(h.real_config()),
                "model_instance_kind": "CPU",
                "model_instance_device_id": "0",
                "model_repository": h.MODEL_DIR,
                "model_version": "1",
                "model_name": "food_classifier",
            }
        )
    executes = []
    for requests in job["executes"]:
        batch = [h.request(*[row_bytes(row) for row in rows]) for rows in requests]
        answers = []
        for response in model.execute(batch):
            if response.has_error():
                answers.append({"error": response.error().message()})
                continue
            labels = pb_utils.get_output_tensor_by_name(response, "FOOD_LABEL").as_numpy()
            probabilities = pb_utils.get_output_tensor_by_name(response, "PROBABILITY").as_numpy()
            every = pb_utils.get_output_tensor_by_name(response, "PROBABILITIES").as_numpy()
            ood = pb_utils.get_output_tensor_by_name(response, "OOD_SCORE").as_numpy()
            answers.append(
                {
                    "labels": [x.decode() for x in labels.reshape(-1)],
                    "probabilities": [float(p) for p in probabilities.reshape(-1).astype(np.float64)],
                    "shape": list(labels.shape),
                    "every": every.astype(np.float64).tolist(),
                    "ood": [float(x) for x in ood.reshape(-1).astype(np.float64)],
                }
            )
        executes.append(answers)
    runs = [int(call["shape"][0]) for call in called.calls]
    calls = [
        {"model": call["model_name"], "input": call["input_names"], "requested": call["requested_output_names"]}
        for call in called.calls
    ]
    json.dump({"runs": runs, "calls": calls, "executes": executes, "onnx": called.path}, sys.stdout)


if __name__ == "__main__":
    main()
