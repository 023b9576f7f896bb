"""Turns the course's Food-11 model into the GourmetGram ONNX contract (run by `npm run model:import`).

    import_food11.py export <food11.pth | model.onnx> <out.onnx> <out-info.json>
    import_food11.py logits <food11.pth> <in.f32> <out.f32>

`export` reads either
  * a PyTorch checkpoint of torchvision's MobileNetV2 with an 11-class head: a state dict as a
    course notebook saves it (`torch.save(model.state_dict(), "food11.pth")`), with or without the
    `module.` prefix of DataParallel (or `_orig_mod.` of torch.compile, `model.` of a wrapper), a dict
    holding it under `state_dict` / `model_state_dict` / `model`, or a whole pickled model; the head as
    torchvision builds it (`mobilenet_v2(num_classes=11)`: `classifier.1`) or replaced by one
    `nn.Linear(1280, 11)` (`classifier`); loaded strictly into `torchvision.models.mobilenet_v2`, or
  * an ONNX file, whose single input and single output are renamed `input` and `output`,
and writes ONNX with input `input` FP32 [N,3,224,224] and output `output` FP32 [N,11], dynamic N,
checked with `onnx.checker`. The info JSON says what was read. `logits` runs the checkpoint in
PyTorch over a raw little-endian float32 [n,3,224,224] file and writes the [n,11] logits (tests).

Errors go to stderr as one line `IMPORT_ERROR: <message>` with exit status 3.
"""

import json
import sys

NUM_CLASSES = 11
FEATURES = 1280
PREFIXES = ("module.", "_orig_mod.", "model.")


class ImportFailed(Exception):
    pass


def load_checkpoint(path):
    import torch

    try:
        obj = torch.load(path, map_location="cpu")
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad file
        raise ImportFailed(f"{path} is not a PyTorch checkpoint torch.load can read ({exc})") from exc
    if isinstance(obj, torch.nn.Module):
        return obj.state_dict(), "pickled nn.Module"
    if isinstance(obj, dict):
        for key in ("state_dict", "model_state_dict", "model"):
            inner = obj.get(key)
            if isinstance(inner, torch.nn.Module):
                return inner.state_dict(), f"pickled nn.Module under '{key}'"
            if isinstance(inner, dict) and any(hasattr(v, "shape") for v in inner.values()):
                return dict(inner), f"state dict under '{key}'"
        if any(hasattr(v, "shape") for v in obj.values()):
            return dict(obj), "state dict"
    raise ImportFailed(f"{path} holds a {type(obj).__name__}, not a state dict or a model")


def normalise_keys(state):
    """Strips wrapper prefixes and maps a one-Linear head to torchvision's `classifier.1`."""
    notes = []
    changed = True
    while changed:
        changed = False
        for prefix in PREFIXES:
            if state and all(k.startswith(prefix) for k in state):
                state = {k[len(prefix):]: v for k, v in state.items()}
                notes.append(f"stripped prefix '{prefix}'")
                changed = True
    head = sorted(k for k in state if k.startswith("classifier."))
    if head == ["classifier.bias", "classifier.weight"]:
        state = {("classifier.1." + k[len("classifier."):] if k in head else k): v for k, v in state.items()}
        notes.append("head nn.Linear at 'classifier' (mapped to torchvision's classifier.1)")
    elif head != ["classifier.1.bias", "classifier.1.weight"]:
        raise ImportFailed(
            "the classifier head is not one nn.Linear(1280, 11) (expected keys classifier.weight/bias "
            f"or classifier.1.weight/bias, found {head or 'none'})"
        )
    weight = state["classifier.1.weight"]
    if tuple(weight.shape) != (NUM_CLASSES, FEATURES):
        raise ImportFailed(
            f"the head's weight is {list(weight.shape)}, expected [{NUM_CLASSES}, {FEATURES}] "
            "(11 Food-11 classes over MobileNetV2's 1280 features)"
        )
    return state, notes


def build_model(path):
    import torch
    import torchvision

    state, layout = load_checkpoint(path)
    state, notes = normalise_keys(state)
    model = torchvision.models.mobilenet_v2(num_classes=NUM_CLASSES)
    result = model.load_state_dict(state, strict=False)
    missing = [k for k in result.missing_keys]
    unexpected = [k for k in result.unexpected_keys]
    if missing or unexpected:
        raise ImportFailed(
            "the state dict is not torchvision's MobileNetV2 "
            f"(missing {missing[:5]}{'…' if len(missing) > 5 else ''}, "
            f"unexpected {unexpected[:5]}{'…' if len(unexpected) > 5 else ''})"
        )
    model.eval()
    torch.set_num_threads(1)
    return model, {"layout": layout, "keys": notes, "parameters": len(state)}


def export_checkpoint(src, out):
    import torch

    model, info = build_model(src)
    dummy = torch.zeros(1, 3, 224, 224, dtype=torch.float32)
    with torch.no_grad():
        torch.onnx.export(
            model,
            dummy,
            out,
            input_names=["input"],
            output_names=["output"],
            dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
            opset_version=13,
            do_constant_folding=True,
        )
    info.update({"format": "pytorch-state-dict", "torch": torch.__version__})
    import torchvision

    info["torchvision"] = torchvision.__version__
    return info


def rename_value(graph, old, new):
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new
        for i, name in enumerate(node.output):
            if name == old:
                node.output[i] = new
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        if vi.name == old:
            vi.name = new


def export_onnx(src, out):
    import onnx

    try:
        model = onnx.load(src)
    except Exception as exc:  # noqa: BLE001
        raise ImportFailed(f"{src} is not an ONNX model onnx.load can read ({exc})") from exc
    graph = model.graph
    initializers = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initializers]
    if len(inputs) != 1 or len(graph.output) != 1:
        raise ImportFailed(
            f"expected one input and one output, found inputs {[i.name for i in inputs]} "
            f"and outputs {[o.name for o in graph.output]}"
        )
    renamed = []
    for value, wanted in ((inputs[0], "input"), (graph.output[0], "output")):
        if value.name != wanted:
            renamed.append(f"{value.name} -> {wanted}")
            rename_value(graph, value.name, wanted)
        dims = value.type.tensor_type.shape.dim
        if len(dims) > 0 and not dims[0].dim_param:
            dims[0].ClearField("dim_value")
            dims[0].dim_param = "N"
            renamed.append(f"{wanted}: batch dimension made dynamic")
    onnx.save(model, out)
    return {"format": "onnx", "changes": renamed, "onnx": onnx.__version__}


def check(out):
    import onnx

    model = onnx.load(out)
    onnx.checker.check_model(model)

    def shape(value):
        t = value.type.tensor_type
        return t.elem_type, [d.dim_param or d.dim_value for d in t.shape.dim]

    initializers = {t.name for t in model.graph.initializer}
    (inp,) = [i for i in model.graph.input if i.name not in initializers]
    (outp,) = model.graph.output
    fp32 = onnx.TensorProto.FLOAT
    in_type, in_dims = shape(inp)
    out_type, out_dims = shape(outp)
    if inp.name != "input" or in_type != fp32 or in_dims[1:] != [3, 224, 224] or isinstance(in_dims[0], int):
        raise ImportFailed(f"input is {inp.name} type {in_type} dims {in_dims}, expected input FP32 [N,3,224,224]")
    if outp.name != "output" or out_type != fp32 or out_dims[1:] != [NUM_CLASSES]:
        raise ImportFailed(f"output is {outp.name} type {out_type} dims {out_dims}, expected output FP32 [N,11]")
    return {"opset": max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))}


def logits(src, tensor_file, out_file):
    import numpy as np
    import torch

    model, _ = build_model(src)
    data = np.fromfile(tensor_file, dtype="<f4").reshape(-1, 3, 224, 224)
    with torch.no_grad():
        result = model(torch.from_numpy(data.copy())).numpy().astype("<f4")
    result.tofile(out_file)


def main(argv):
    if len(argv) == 5 and argv[1] == "export":
        src, out, info_file = argv[2:5]
        with open(src, "rb") as f:
            is_onnx = not f.read(2) == b"PK" and src.lower().endswith(".onnx")
        info = export_onnx(src, out) if is_onnx else export_checkpoint(src, out)
        info.update(check(out))
        with open(info_file, "w", encoding="utf-8") as f:
            json.dump(info, f)
        return 0
    if len(argv) == 5 and argv[1] == "logits":
        logits(*argv[2:5])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except ImportFailed as exc:
        print(f"IMPORT_ERROR: {exc}", file=sys.stderr)
        sys.exit(3)
