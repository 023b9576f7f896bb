"""An independent gRPC client for the tritonserver-ts tests, on Python-backend models: grpcio (Debian
python3-grpcio) with stubs that grpc_tools.protoc compiled from the project's own .proto files.

Usage: triton_grpc_models_client.py <stub dir> <host:port>
Calls, as an NVIDIA-style client does (raw_input_contents, BYTES as 4-byte little-endian length +
bytes per element):
  - ModelInfer on py_add (a Python-backend model), with a request id and a request parameter;
  - ModelInfer on py_bls (a Python model calling identity_fp32 by BLS), then with an unknown target;
  - ModelMetadata and ModelInfer on text_pipeline (an ensemble: Python tokenizer -> ONNX classifier),
    a batch of texts, then a row that is not UTF-8;
  - ModelStreamInfer with two text_pipeline requests on one stream.
Prints what came back as JSON on stdout; gRPC errors as {"code": ..., "details": ...}.
"""

import json
import struct
import sys

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
import grpc_service_pb2 as pb  # noqa: E402
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402


def bytes_tensor(rows):
    """BYTES elements serialized as Triton's raw format: uint32 LE length, then the bytes."""
    return b"".join(struct.pack("<I", len(r)) + r for r in rows)


def add_input(request, name, datatype, shape, raw):
    tensor = request.inputs.add()
    tensor.name = name
    tensor.datatype = datatype
    tensor.shape.extend(shape)
    request.raw_input_contents.append(raw)


def outputs_of(response):
    """name -> [datatype, shape, values] decoded from raw_output_contents."""
    out = {}
    for meta, raw in zip(response.outputs, response.raw_output_contents):
        if meta.datatype == "FP32":
            values = list(struct.unpack(f"<{len(raw) // 4}f", raw))
        elif meta.datatype == "INT64":
            values = list(struct.unpack(f"<{len(raw) // 8}q", raw))
        elif meta.datatype == "BYTES":
            values, offset = [], 0
            while offset < len(raw):
                (length,) = struct.unpack_from("<I", raw, offset)
                values.append(raw[offset + 4 : offset + 4 + length].decode("utf-8"))
                offset += 4 + length
        else:
            values = None
        out[meta.name] = [meta.datatype, list(meta.shape), values]
    return out


def call(stub, request):
    try:
        response = stub.ModelInfer(request, timeout=30)
    except grpc.RpcError as error:
        return {"code": error.code().name, "details": error.details()}
    return {"model_name": response.model_name, "id": response.id, "outputs": outputs_of(response)}


def pipeline_request(texts, request_id):
    request = pb.ModelInferRequest(model_name="text_pipeline", id=request_id)
    add_input(request, "TEXT", "BYTES", [len(texts), 1], bytes_tensor(texts))
    for name in ("logits", "input_ids"):
        request.outputs.add().name = name
    return request


def main():
    target = sys.argv[2]
    out = {}
    with grpc.insecure_channel(target) as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)

        request = pb.ModelInferRequest(model_name="py_add", id="py-add-1")
        request.parameters["flavour"].string_param = "umami"
        add_input(request, "INPUT0", "FP32", [4], struct.pack("<4f", 1, 2, 3, 4))
        add_input(request, "INPUT1", "FP32", [4], struct.pack("<4f", 0.5, 0.5, 0.5, 0.5))
        out["python"] = call(stub, request)

        for key, model in (("bls", "identity_fp32"), ("bls_error", "no_such_model")):
            request = pb.ModelInferRequest(model_name="py_bls")
            add_input(request, "INPUT0", "FP32", [3], struct.pack("<3f", 1.5, -2, 7))
            add_input(request, "TARGET", "BYTES", [1], bytes_tensor([model.encode()]))
            out[key] = call(stub, request)

        meta = stub.ModelMetadata(pb.ModelMetadataRequest(name="text_pipeline"), timeout=30)
        out["ensemble_metadata"] = {
            "platform": meta.platform,
            "inputs": [[t.name, t.datatype, list(t.shape)] for t in meta.inputs],
            "outputs": [[t.name, t.datatype, list(t.shape)] for t in meta.outputs],
        }
        texts = [b"Fresh pizza with cheese", b"SUSHI, rice & a fried egg", b"the quick brown fox"]
        out["ensemble"] = call(stub, pipeline_request(texts, "pipe-1"))
        out["ensemble_error"] = call(stub, pipeline_request([b"pizza", b"p\xff\xfe"], "pipe-2"))

        stream = stub.ModelStreamInfer(
            iter([pipeline_request([b"tomato soup"], "s-1"), pipeline_request([b"egg"], "s-2")]), timeout=30
        )
        out["stream"] = [
            {"error": r.error_message, "id": r.infer_response.id, "outputs": outputs_of(r.infer_response)}
            for r in stream
        ]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
