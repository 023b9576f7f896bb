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
