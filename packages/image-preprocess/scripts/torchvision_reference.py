#!/usr/bin/env python3
"""Reference tensors for the parity test: the original GourmetGram preprocessing, done by torchvision.

    PIL.Image.open -> ImageOps.exif_transpose -> convert('RGB')
    -> Resize((H, W)) (squash; PIL bilinear, antialiased) | Resize(S) + CenterCrop((H, W))
    -> ToTensor() -> Normalize(mean, std)

Usage: torchvision_reference.py --out DIR [--mode squash|center-crop] [--size 224] [--shorter 256]
                                [--mean 0.485,0.456,0.406] [--std 0.229,0.224,0.225] IMAGE...
Writes DIR/<index>.f32 (little-endian float32, CHW) and DIR/index.json.
Runs with Debian's python3-torchvision (apt-get install -y python3-torchvision python3-pil).
"""
import argparse
import json
import os
import sys

from PIL import Image, ImageOps
import torch
import torchvision
from torchvision import transforms


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--mode', default='squash', choices=['squash', 'center-crop'])
    ap.add_argument('--size', type=int, default=224)
    ap.add_argument('--shorter', type=int, default=256)
    ap.add_argument('--mean', default='0.485,0.456,0.406')
    ap.add_argument('--std', default='0.229,0.224,0.225')
    ap.add_argument('images', nargs='+')
    args = ap.parse_args()
    mean = [float(x) for x in args.mean.split(',')]
    std = [float(x) for x in args.std.split(',')]
    if args.mode == 'squash':
        resize = [transforms.Resize((args.size, args.size))]
    else:
        resize = [transforms.Resize(args.shorter), transforms.CenterCrop((args.size, args.size))]
    pipeline = transforms.Compose(resize + [transforms.ToTensor(), transforms.Normalize(mean, std)])
    os.makedirs(args.out, exist_ok=True)
    entries = []
    torch.set_num_threads(1)
    for i, path in enumerate(args.images):
        with Image.open(path) as im:
            mode = im.mode
            rgb = ImageOps.exif_transpose(im).convert('RGB')
        t = pipeline(rgb).contiguous()
        name = f'{i}.f32'
        with open(os.path.join(args.out, name), 'wb') as f:
            f.write(t.numpy().astype('<f4').tobytes())
        entries.append({'image': path, 'file': name, 'shape': list(t.shape), 'pil_mode': mode})
    with open(os.path.join(args.out, 'index.json'), 'w') as f:
        json.dump({'torchvision': torchvision.__version__, 'torch': torch.__version__,
                   'pil': Image.__version__, 'entries': entries}, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
