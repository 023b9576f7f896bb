"""A decoupled model from an independent gRPC client: grpcio (Debian python3-grpcio) with stubs that
grpc_tools.protoc compiled from the project's own .proto files.

Usage: triton_grpc_decoupled_client.py <stub dir> <host:port> <model>
Sends three requests on one ModelStreamInfer stream to <model> (IN = n: n responses, then the final
flag): n = 3 and n = 0 with triton_enable_empty_final_response, n = -1 without; half-closes and
prints every message as JSON ({"id", "error", "out", "final"}), then ModelInfer's status on the
same model.
"""

import json
import struct
import sys

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
import grpc_service_pb2 as pb  # noqa: E402
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402


def request(model: str, n: int, request_id: str, empty_final: bool) -> pb.ModelInferRequest:
    r = pb.ModelInferRequest(model_name=model, id=request_id)
    tensor = r.inputs.add()
    tensor.name = "IN"
    tensor.datatype = "INT32"
    tensor.shape.extend([1])
    r.raw_input_contents.append(struct.pack("<i", n))
    if empty_final:
        r.parameters["triton_enable_empty_final_response"].bool_param = True
    return r


def main() -> None:
    target, model = sys.argv[2], sys.argv[3]
    out = {"stream": []}
    with grpc.insecure_channel(target) as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        requests = [
            request(model, 3, "three", True),
            request(model, 0, "zero", True),
            request(model, -1, "negative", False),
        ]
        for message in stub.ModelStreamInfer(iter(requests), timeout=30):
            response = message.infer_response
            final = response.parameters.get("triton_final_response")
            out["stream"].append(
                {
                    "id": response.id,
                    "error": message.error_message,
                    "out": [struct.unpack("<i", raw)[0] for raw in response.raw_output_contents],
                    "final": final.bool_param if final is not None else None,
                }
            )
        try:
            stub.ModelInfer(request(model, 1, "unary", False), timeout=30)
        except grpc.RpcError as error:
            out["unary"] = {"code": error.code().name, "details": error.details()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
