"""Independent protobuf oracle for the gRPC golden tests (run with /usr/bin/python3).

argv[1]: a directory holding the Python modules protoc generated from the package's .proto files.
stdin: a JSON list of cases {"type": "<full message name>", "json": <proto3 JSON>, "ts_hex": "<bytes
the TypeScript encoder produced>"}. stdout: a JSON list with, per case, the bytes Google's protobuf
produces for the JSON message ("expected_hex", deterministic map order), whether the TypeScript
bytes parse to an equal message ("equal"), and the TypeScript bytes as Python re-encodes them
("ts_reencoded_hex"). With argv[2] == "services": the RPCs of the services instead.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])

from google.protobuf import json_format, symbol_database  # noqa: E402

import grpc_service_pb2  # noqa: E402,F401
import health_pb2  # noqa: E402,F401
import model_config_pb2  # noqa: E402,F401

if len(sys.argv) > 2 and sys.argv[2] == "services":
    # Every RPC of every service: full method path and streaming flags.
    methods = []
    for module in (grpc_service_pb2, health_pb2):
        for service in module.DESCRIPTOR.services_by_name.values():
            for m in service.methods:
                methods.append(
                    {
                        "path": "/%s/%s" % (service.full_name, m.name),
                        "input": m.input_type.full_name,
                        "output": m.output_type.full_name,
                        "client_streaming": m.client_streaming,
                        "server_streaming": m.server_streaming,
                    }
                )
    json.dump(methods, sys.stdout)
    sys.exit(0)

db = symbol_database.Default()
out = []
for case in json.load(sys.stdin):
    cls = db.GetSymbol(case["type"])
    expected = json_format.ParseDict(case["json"], cls())
    got = cls()
    got.ParseFromString(bytes.fromhex(case["ts_hex"]))
    out.append(
        {
            "expected_hex": expected.SerializeToString(deterministic=True).hex(),
            "equal": got == expected,
            "ts_reencoded_hex": got.SerializeToString(deterministic=True).hex(),
            "ts_as_json": json_format.MessageToDict(got, preserving_proto_field_name=True),
        }
    )
json.dump(out, sys.stdout)
