/**
 * Python-backend test models that use custom metrics (`pb_utils.MetricFamily` / `Metric`) as
 * Triton's Python-backend custom-metrics tests do (written for this project; nothing is copied).
 * @packageDocumentation
 */
import type { GeneratedPythonModel } from './python-models.js';

/** Buckets of {@link metricsPythonModel}'s histogram. */
export const METRICS_MODEL_BUCKETS = [0.1, 1, 2.5, 5, 10] as const;

/**
 * `name`: FP32 X [1] → COUNT (FP64 [1]). `initialize` creates three families: counter
 * `<name>_requests` ("Requests seen by <name>"), gauge `<name>_last_x` ("Last X seen by <name>"),
 * histogram `<name>_x` ("X values seen by <name>", buckets {@link METRICS_MODEL_BUCKETS}); their
 * metrics carry the label `source="<name>"`. Each request increments the counter by 1, sets the
 * gauge to X, observes X, and answers COUNT = the counter's `value()`.
 */
export function metricsPythonModel(name = 'py_metrics'): GeneratedPythonModel {
  const config = `name: "${name}"
backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "COUNT" data_type: TYPE_FP64 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;
  const source = `import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        labels = {"source": "${name}"}
        self.requests_family = pb_utils.MetricFamily(
            name="${name}_requests", description="Requests seen by ${name}", kind=pb_utils.MetricFamily.COUNTER
        )
        self.last_family = pb_utils.MetricFamily(
            name="${name}_last_x", description="Last X seen by ${name}", kind=pb_utils.MetricFamily.GAUGE
        )
        self.x_family = pb_utils.MetricFamily(
            name="${name}_x", description="X values seen by ${name}", kind=pb_utils.MetricFamily.HISTOGRAM
        )
        self.requests = self.requests_family.Metric(labels=labels)
        self.last = self.last_family.Metric(labels=labels)
        self.x = self.x_family.Metric(labels=labels, buckets=[${METRICS_MODEL_BUCKETS.join(', ')}])

    def execute(self, requests):
        responses = []
        for request in requests:
            x = float(pb_utils.get_input_tensor_by_name(request, "X").as_numpy()[0])
            self.requests.increment(1)
            self.last.set(x)
            self.x.observe(x)
            count = np.array([self.requests.value()], dtype=np.float64)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("COUNT", count)]))
        return responses
`;
  return { name, files: { 'config.pbtxt': config, '1/model.py': source } };
}

/**
 * Misuse cases of {@link metricsMisusePythonModel}: each runs one sequence of metric calls and
 * answers MESSAGE = the `TritonModelException` text, or what the calls returned when none was raised.
 */
export const METRICS_MISUSE_CASES = [
  'dup_kind',
  'dup_description',
  'dup_labels',
  'counter_negative',
  'counter_set',
  'counter_observe',
  'gauge_observe',
  'histogram_value',
  'histogram_increment',
  'histogram_set',
  'histogram_unsorted',
  'histogram_duplicate_bucket',
  'histogram_no_buckets',
  'labels_not_dict',
  'label_not_string',
  'bad_label_name',
  'bad_family_name',
  'family_deleted',
] as const;

/** One of {@link METRICS_MISUSE_CASES}. */
export type MetricsMisuseCase = (typeof METRICS_MISUSE_CASES)[number];

/**
 * `name`: BYTES CASE [1] (one of {@link METRICS_MISUSE_CASES}) → BYTES MESSAGE [1]. Families are
 * named `misuse_<case>…`, so cases do not interfere.
 */
export function metricsMisusePythonModel(name = 'py_metrics_misuse'): GeneratedPythonModel {
  const config = `name: "${name}"
backend: "python"
max_batch_size: 0
input [ { name: "CASE" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "MESSAGE" data_type: TYPE_STRING dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;
  const source = `import numpy as np
import triton_python_backend_utils as pb_utils

MF = pb_utils.MetricFamily

# Families stay referenced: deleting a MetricFamily object clears the metrics made through it.
KEEP = []


def family(case, kind):
    made = MF(name="misuse_" + case, description="misuse " + case, kind=kind)
    KEEP.append(made)
    return made


def run(case):
    if case == "dup_kind":
        keep = family(case, MF.COUNTER)
        family(case, MF.GAUGE)
        return "no error"
    if case == "dup_description":
        first = MF(name="misuse_dup_description", description="first description", kind=MF.COUNTER)
        second = MF(name="misuse_dup_description", description="second description", kind=MF.COUNTER)
        KEEP.append(second)
        KEEP.append(second.Metric(labels={"k": "v"}))
        del first
        return "ok"
    if case == "dup_labels":
        f = family(case, MF.COUNTER)
        m1 = f.Metric(labels={"a": "1", "b": "2"})
        m2 = f.Metric(labels={"b": "2", "a": "1"})
        KEEP.append(m2)
        m1.increment(7.5)
        return "%s %s" % (m1.value(), m2.value())
    if case == "counter_negative":
        metric = family(case, MF.COUNTER).Metric()
        KEEP.append(metric)
        metric.increment(-23.5)
    if case == "counter_set":
        family(case, MF.COUNTER).Metric().set(1)
    if case == "counter_observe":
        family(case, MF.COUNTER).Metric().observe(1)
    if case == "gauge_observe":
        family(case, MF.GAUGE).Metric().observe(1)
    if case == "histogram_value":
        family(case, MF.HISTOGRAM).Metric(buckets=[1.0]).value()
    if case == "histogram_increment":
        family(case, MF.HISTOGRAM).Metric(buckets=[1.0]).increment(1)
    if case == "histogram_set":
        family(case, MF.HISTOGRAM).Metric(buckets=[1.0]).set(1)
    if case == "histogram_unsorted":
        family(case, MF.HISTOGRAM).Metric(labels={}, buckets=[2.5, 0.1, 1.0, 10.0, 5.0])
    if case == "histogram_duplicate_bucket":
        family(case, MF.HISTOGRAM).Metric(labels={}, buckets=[1, 1, 2, 5, 5])
    if case == "histogram_no_buckets":
        family(case, MF.HISTOGRAM).Metric(labels={})
    if case == "labels_not_dict":
        family(case, MF.COUNTER).Metric(labels=["a"])
    if case == "label_not_string":
        family(case, MF.COUNTER).Metric(labels={"a": 1})
    if case == "bad_label_name":
        family(case, MF.COUNTER).Metric(labels={"bad-name": "x"})
    if case == "bad_family_name":
        MF(name="bad name", description="d", kind=MF.COUNTER)
    if case == "family_deleted":
        f = MF(name="misuse_family_deleted", description="misuse family_deleted", kind=MF.GAUGE)
        m = f.Metric(labels={"k": "v"})
        del f
        m.set(10)
    return "no error"


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            case = pb_utils.get_input_tensor_by_name(request, "CASE").as_numpy()[0].decode()
            try:
                message = run(case)
            except pb_utils.TritonModelException as error:
                message = str(error)
            out = np.array([message.encode()], dtype=np.object_)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("MESSAGE", out)]))
        return responses
`;
  return { name, files: { 'config.pbtxt': config, '1/model.py': source } };
}

/**
 * `name`: FP32 X [1] (max_batch_size 1) → Y = X, after sleeping X seconds; a negative X raises
 * `ValueError("negative X")` in execute (a backend failure). One instance behind a dynamic batcher
 * whose queue holds one request (`default_queue_policy { max_queue_size: 1 }`), so a third
 * concurrent request is rejected: every failure reason of `nv_inference_request_failure` can be
 * provoked for real.
 */
export function slowFailPythonModel(name = 'py_slow_fail'): GeneratedPythonModel {
  const config = `name: "${name}"
backend: "python"
max_batch_size: 1
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
dynamic_batching { default_queue_policy { max_queue_size: 1 } }
`;
  const source = `import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy()
            if float(x[0][0]) < 0:
                raise ValueError("negative X")
            time.sleep(float(x[0][0]))
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("Y", x)]))
        return responses
`;
  return { name, files: { 'config.pbtxt': config, '1/model.py': source } };
}
