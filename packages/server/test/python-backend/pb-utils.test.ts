import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { expect, it } from 'vitest';

import { PYTHON } from './helpers.js';

const PYTHON_DIR = fileURLToPath(new URL('../../python/', import.meta.url));

/** Checks of our triton_python_backend_utils in real Python (asserts; prints "ok" at the end). */
const SCRIPT = String.raw`
import json
import numpy as np
import triton_python_backend_utils as pb

# datatypes
assert pb.triton_string_to_numpy("TYPE_FP32") is np.float32
assert pb.triton_string_to_numpy("TYPE_STRING") is np.object_
assert pb.triton_string_to_numpy("INT64") is np.int64
assert pb.numpy_to_triton_type(np.float16) == 10
assert pb.numpy_to_triton_type(np.object_) == 13
assert pb.triton_to_numpy_type(11) is np.float32
assert pb.triton_to_numpy_type(99) is None

# BYTES layout: 4-byte little-endian length + bytes
raw = pb.serialize_byte_tensor(np.array([b"ab", "\u00e9", b""], dtype=np.object_))
assert raw == b"\x02\x00\x00\x00ab\x02\x00\x00\x00\xc3\xa9\x00\x00\x00\x00", raw
assert list(pb.deserialize_bytes_tensor(raw)) == [b"ab", "\u00e9".encode(), b""]

# TritonError codes and messages
assert [pb.TritonError.UNKNOWN, pb.TritonError.INTERNAL, pb.TritonError.NOT_FOUND, pb.TritonError.INVALID_ARG,
        pb.TritonError.UNAVAILABLE, pb.TritonError.UNSUPPORTED, pb.TritonError.ALREADY_EXISTS,
        pb.TritonError.CANCELLED] == list(range(8))
e = pb.TritonError("boom", pb.TritonError.NOT_FOUND)
assert e.message() == "boom" and e.code() == pb.TritonError.NOT_FOUND
assert pb.TritonError("x").code() == pb.TritonError.INTERNAL
assert issubclass(pb.TritonModelException, Exception)

# Tensor, responses, requests
t = pb.Tensor("A", np.array(["x", "y"]))
assert t.as_numpy().dtype == np.object_ and t.name() == "A"
try:
    pb.Tensor("B", [1, 2])
    raise SystemExit("a list was accepted as a Tensor")
except pb.TritonModelException:
    pass
r = pb.InferenceResponse(output_tensors=[t])
assert not r.has_error() and pb.get_output_tensor_by_name(r, "A") is t and r.error() is None
r = pb.InferenceResponse(error=pb.TritonError("bad"))
assert r.has_error() and r.error().message() == "bad"
q = pb.InferenceRequest(model_name="m", inputs=[t], requested_output_names=["O"], parameters={"k": 1})
assert json.loads(q.parameters()) == {"k": 1} and q.requested_output_names() == ["O"]
assert pb.get_input_tensor_by_name(q, "A") is t and pb.get_input_tensor_by_name(q, "Z") is None
try:
    q.get_response_sender()
    raise SystemExit("a non-decoupled request had a response sender")
except pb.TritonModelException:
    pass

# config helpers
cfg = {"input": [{"name": "I", "data_type": "TYPE_FP32", "dims": [2]}], "output": [{"name": "O", "data_type": "TYPE_INT32"}]}
assert pb.get_input_config_by_name(cfg, "I")["dims"] == [2]
assert pb.get_output_config_by_name(cfg, "O")["data_type"] == "TYPE_INT32"
assert pb.get_output_config_by_name(cfg, "X") is None

# ModelConfig for auto_complete_config
mc = pb.ModelConfig(json.dumps({"name": "m", "max_batch_size": 0, "input": [{"name": "I", "data_type": "TYPE_FP32", "dims": [2]}]}))
mc.add_input({"name": "I", "data_type": "TYPE_FP32", "dims": [2]})
try:
    mc.add_input({"name": "I", "data_type": "TYPE_INT32", "dims": [2]})
    raise SystemExit("a conflicting input was accepted")
except ValueError:
    pass
mc.add_output({"name": "O", "data_type": "TYPE_FP32", "dims": [-1]})
mc.set_max_batch_size(8)
try:
    mc.set_max_batch_size(4)
    raise SystemExit("a second max_batch_size was accepted")
except ValueError:
    pass
mc.set_dynamic_batching()
mc.set_model_transaction_policy({"decoupled": True})
d = mc.as_dict()
assert d["max_batch_size"] == 8 and len(d["input"]) == 1 and d["output"][0]["name"] == "O"
assert d["dynamic_batching"] == {} and d["model_transaction_policy"] == {"decoupled": True}
assert pb.TRITONSERVER_RESPONSE_COMPLETE_FINAL == 1
assert (pb.TRITONSERVER_REQUEST_FLAG_SEQUENCE_START, pb.TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) == (1, 2)


def raises(kind, text, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except kind as e:
        assert text in str(e), (text, str(e))
        return
    raise SystemExit(f"{fn} did not raise {kind.__name__}: {text}")


# constants and tables Triton's module has
assert (pb.TRITONSERVER_REQUEST_RELEASE_ALL, pb.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE) == (1, 2)
assert (pb.TRITONSERVER_MEMORY_GPU, pb.TRITONSERVER_MEMORY_CPU) == (0, 1)
assert pb.TRITON_STRING_TO_NUMPY["TYPE_BOOL"] is bool and pb.TRITON_STRING_TO_NUMPY["TYPE_STRING"] is np.object_
assert len(pb.TRITON_STRING_TO_NUMPY) == 13
assert (pb.Logger.LogLevel.INFO, pb.Logger.WARNING, pb.Logger.ERROR, pb.Logger.VERBOSE) == (0, 1, 2, 3)
assert pb.get_model_dir() is None
pb.PreferredMemory(pb.TRITONSERVER_MEMORY_CPU, 0)

# using_decoupled_model_transaction_policy
assert pb.using_decoupled_model_transaction_policy({"model_transaction_policy": {"decoupled": True}}) is True
assert pb.using_decoupled_model_transaction_policy({"model_transaction_policy": {"decoupled": False}}) is False
assert pb.using_decoupled_model_transaction_policy({"name": "m"}) is False

# Tensor: names, DLPack on CPU
raises(pb.TritonModelException, "Tensor name cannot be an empty string.", pb.Tensor, "", np.zeros(1))
f = pb.Tensor("F", np.arange(6, dtype=np.float32).reshape(2, 3))
assert f.shape() == [2, 3] and f.is_cpu() and f.triton_dtype() == 11 and f.__dlpack_device__() == (1, 0)
g = pb.Tensor.from_dlpack("G", f.to_dlpack())
assert g.name() == "G" and g.shape() == [2, 3] and g.as_numpy().dtype == np.float32
assert (g.as_numpy() == f.as_numpy()).all() and np.shares_memory(g.as_numpy(), f.as_numpy())
h = pb.Tensor.from_dlpack("H", np.arange(4, dtype=np.int64))
assert h.as_numpy().tolist() == [0, 1, 2, 3] and h.triton_dtype() == 9
assert np.from_dlpack(f).tolist() == [[0, 1, 2], [3, 4, 5]]
raises(pb.TritonModelException, "DLPack does not have support for string tensors.", t.to_dlpack)
raises(pb.TritonModelException, "Tensor name cannot be an empty string.", pb.Tensor.from_dlpack, "", f.to_dlpack())

# TritonError and responses: types and parameters as Triton checks them
raises(TypeError, "code", pb.TritonError, "m", 99)
raises(TypeError, "TritonError", pb.InferenceResponse, error="a string")
raises(TypeError, "Tensor", pb.InferenceResponse, output_tensors=[1])
ok = pb.InferenceResponse(output_tensors=[f], parameters={"b": True, "i": 2**62, "s": ""})
assert json.loads(ok.parameters()) == {"b": True, "i": 2**62, "s": ""}
assert pb.InferenceResponse([f]).parameters() == "{}"
raises(pb.TritonModelException, "Expect dict, got <class 'list'>", pb.InferenceResponse, [], None, [])
raises(pb.TritonModelException, "Expect parameters keys to have type str, found type <class 'int'>",
       pb.InferenceResponse, [], None, {1: "x"})
raises(pb.TritonModelException, "Expect parameters values to have type bool/int/str, found type <class 'float'>",
       pb.InferenceResponse, [], None, {"f": 0.5})
raises(pb.TritonModelException, "Expect parameters values to have type bool/int/str, found type <class 'NoneType'>",
       pb.InferenceResponse, [], None, {"n": None})

# requests
raises(pb.TritonModelException, "Correlation ID must be integer or string", pb.InferenceRequest,
       correlation_id=1.5, inputs=[], requested_output_names=[], model_name="m")
r = pb.InferenceRequest(correlation_id="seq-1", inputs=[t], requested_output_names=["O"], model_name="m", parameters={"a": 1})
assert r.correlation_id() == "seq-1" and r.trace().get_context() is None and json.loads(r.parameters()) == {"a": 1}
r.set_flags(pb.TRITONSERVER_REQUEST_FLAG_SEQUENCE_END)
assert r.flags() == 2
r.set_release_flags(pb.TRITONSERVER_REQUEST_RELEASE_ALL)
raises(pb.TritonModelException, "not supported", r.set_release_flags, pb.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
raises(pb.TritonModelException, "Expect parameters values", pb.InferenceRequest,
       inputs=[], requested_output_names=[], model_name="m", parameters={"x": [1]})

# the response sender's argument checks (before anything is sent)
s = pb.InferenceResponseSender(0, 0, True)
raises(pb.TritonModelException, "Unable to send response. Unsupported flag provided.", s.send, None, 2)
raises(pb.TritonModelException, "Inference Response object must be provided when the response flags is set to zero.", s.send)

# ModelConfig setters: Triton's rules and messages
mc = pb.ModelConfig(json.dumps({"name": "m", "max_batch_size": 4, "input": [], "output": [], "sequence_batching": {}}))
mc.set_max_batch_size(8)
raises(ValueError, "configuration specified max_batch_size 8, but in auto-complete-config function for model 'm' specified max_batch_size 2",
       mc.set_max_batch_size, 2)
raises(ValueError, "Configuration specified scheduling_choice as 'sequence_batching'", mc.set_dynamic_batching)
raises(ValueError, "input 'I' in auto-complete-config function for model 'm' contains property other than 'name', 'data_type', 'dims' and 'optional'.",
       mc.add_input, {"name": "I", "data_type": "TYPE_FP32", "dims": [1], "format": "x"})
mc.add_input({"name": "I", "data_type": "TYPE_FP32", "dims": [1], "optional": True})
raises(ValueError, "output 'O' in auto-complete-config function for model 'm' contains property other than 'name', 'data_type' and 'dims'.",
       mc.add_output, {"name": "O", "data_type": "TYPE_FP32", "dims": [1], "optional": True})
raises(ValueError, "output 'O' in auto-complete-config function for model 'm' is missing 'dims' property.",
       mc.add_output, {"name": "O", "data_type": "TYPE_FP32"})
raises(ValueError, "contains property other than 'decoupled'.", mc.set_model_transaction_policy, {"x": 1})
mc.set_model_transaction_policy({"decoupled": False})
raises(ValueError, "trying to change decoupled property in auto-complete-config for model 'm', which is already set to 'False'.",
       mc.set_model_transaction_policy, {"decoupled": True})
assert mc.as_dict()["input"] == [{"name": "I", "data_type": "TYPE_FP32", "dims": [1], "optional": True}]

# what tritonserver-ts does not offer says so
raises(pb.TritonModelException, "is not supported by tritonserver-ts", pb.is_model_ready, "m")
# custom metrics live in the server: outside a model's stub there is none to ask
raises(pb.TritonModelException, "Error when creating MetricFamily: custom metrics are only available inside a model",
       pb.MetricFamily, "requests", "requests seen", pb.MetricFamily.COUNTER)
print("ok")
`;

it("our triton_python_backend_utils follows Triton's documented API (checked in Python)", () => {
  const r = spawnSync(PYTHON, ['-c', SCRIPT], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: PYTHON_DIR, PYTHONDONTWRITEBYTECODE: '1' },
  });
  expect(r.stderr).toBe('');
  expect(r.stdout).toBe('ok\n');
  expect(r.status).toBe(0);
});
