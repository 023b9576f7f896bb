"""An independent gRPC client for the tritonserver-ts tests: grpcio (Debian python3-grpcio) with
stubs that grpc_tools.protoc compiled from the project's own .proto files.

Usage: triton_grpc_client.py <stub dir> <host:port>
Calls ServerLive, ModelMetadata('simple') and ModelInfer('simple') and prints what came back as
JSON on stdout. A gRPC error is printed as {"error": {"code": ..., "details": ...}}.
"""

import json
import struct
import sys

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
import grpc_service_pb2 as pb  # noqa: E402
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402


def main() -> None:
    target = sys.argv[2]
    out = {}
    with grpc.insecure_channel(target) as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        out["live"] = stub.ServerLive(pb.ServerLiveRequest(), timeout=30).live

        meta = stub.ModelMetadata(pb.ModelMetadataRequest(name="simple"), timeout=30)
        out["metadata"] = {
            "name": meta.name,
            "versions": list(meta.versions),
            "platform": meta.platform,
            "inputs": [[t.name, t.datatype, list(t.shape)] for t in meta.inputs],
            "outputs": [[t.name, t.datatype, list(t.shape)] for t in meta.outputs],
        }

        a = list(range(16))
        b = [1] * 16
        request = pb.ModelInferRequest(model_name="simple", id="py-1")
        for name in ("INPUT0", "INPUT1"):
            tensor = request.inputs.add()
            tensor.name = name
            tensor.datatype = "INT32"
            tensor.shape.extend([1, 16])
        request.raw_input_contents.append(struct.pack("<16i", *a))
        request.raw_input_contents.append(struct.pack("<16i", *b))
        response = stub.ModelInfer(request, timeout=30)
        out["infer"] = {
            "model_name": response.model_name,
            "model_version": response.model_version,
            "id": response.id,
            "outputs": [[o.name, o.datatype, list(o.shape)] for o in response.outputs],
            "raw": [list(struct.unpack("<16i", r)) for r in response.raw_output_contents],
        }

        try:
            stub.ModelMetadata(pb.ModelMetadataRequest(name="nope"), timeout=30)
        except grpc.RpcError as error:  # the status and message tritonserver answers
            out["unknown"] = {"code": error.code().name, "details": error.details()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
