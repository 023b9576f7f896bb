"""Runs models_staging/food_classifier exactly as it is in the repository (its config.pbtxt, its paths to
food_classifier_onnx's model.onnx and labels.txt) on real photos, with the Triton stand-in and the
onnxruntime stand-in's onnxruntime-node bridge for the real ONNX file. Driven by
test/real-model.test.ts.

stdin:  {"executes": [[request, ...], ...]} where a request is a list of rows and a row is
        {"path": "<image file>"} (sent as base64) or {"text": "<sent as is>"}
stdout: {"runs": [rows per session run, ...], "executes": [[{"labels": [...], "probabilities": [...]}
        or {"error": "..."}, ...], ...]}
"""

import base64
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import harness as h  # noqa: E402  (puts the stand-ins first on sys.path)
from harness import ort_stand_in, pb_utils  # noqa: E402


def row_bytes(row):
    if "path" in row:
        with open(row["path"], "rb") as handle:
            return base64.b64encode(handle.read())
    return row["text"].encode()


def main():
    job = json.load(sys.stdin)
    module = h.load_model_module()
    model = module.TritonPythonModel()
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
            answers.append(
                {
                    "labels": [x.decode() for x in labels.reshape(-1)],
                    "probabilities": [float(p) for p in probabilities.reshape(-1).astype(np.float64)],
                    "shape": list(labels.shape),
                }
            )
        executes.append(answers)
    runs = [int(run["feed"].shape[0]) for run in ort_stand_in.RUNS]
    session = ort_stand_in.SESSIONS[0]
    json.dump({"runs": runs, "executes": executes, "onnx": session.path}, sys.stdout)


if __name__ == "__main__":
    main()
