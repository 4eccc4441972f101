"""A stand-in for the `transformers` command of scripts/gpu/run.sh, for CI's smoke test of that
script without PyTorch: `serve MODEL_DIR --host H --port P [--dtype D] [--device D]
[--continuous-batching] [--cb-max-memory-percent F]` takes the flags transformers 5.17's `serve`
takes (run.sh reads them from `serve --help`) and serves the GGUF in MODEL_DIR (`model.gguf`)
with llama.cpp's server from the xllamacpp wheel (scripts/xllamacpp-serve.py), under the model
id MODEL_DIR as `transformers serve` names it. It is a real server of the same model, not the
same numerics: `--dtype bfloat16` gets a q8_0 KV cache (other numbers than float32's f16, as
bf16 computes other numbers than fp32), `--continuous-batching` 4 parallel slots (else 1);
`--device` and `--cb-max-memory-percent` are accepted and ignored.

    PYTHON=VENV/bin/python TRANSFORMERS="VENV/bin/python scripts/gpu/standin-transformers.py" \
        scripts/gpu/run.sh MODEL_DIR --device cpu --quick ...

The whole CPU smoke with PyTorch and `transformers serve` itself is scripts/gpu/cpu-smoke.sh.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SERVE = os.path.join(HERE, "..", "xllamacpp-serve.py")


def main() -> int:
    parser = argparse.ArgumentParser(prog="transformers", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve MODEL_DIR/model.gguf on loopback")
    serve.add_argument("model", help="a folder holding model.gguf")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, required=True)
    serve.add_argument("--dtype", choices=["float32", "bfloat16", "float16", "auto"], default="auto")
    serve.add_argument("--device", default="cpu")
    serve.add_argument("--continuous-batching", action="store_true")
    serve.add_argument("--cb-max-memory-percent", type=float)
    args = parser.parse_args()

    gguf = os.path.join(args.model, "model.gguf")
    if not os.path.exists(gguf):
        print(f"standin-transformers: no model.gguf in {args.model}", file=sys.stderr)
        return 2
    if args.host != "127.0.0.1":
        print(f"standin-transformers: serves on 127.0.0.1 only, not {args.host}", file=sys.stderr)
        return 2
    cache = "q8_0" if args.dtype in ("bfloat16", "float16") else "f16"
    parallel = "4" if args.continuous_batching else "1"
    argv = [sys.executable, SERVE, "--model", gguf, "--alias", args.model, "--port", str(args.port),
            "--parallel", parallel, "--ctx", "16384", "--threads", "1", "--cache-type", cache]
    print(f"standin-transformers: {' '.join(argv)}", flush=True)
    os.execv(sys.executable, argv)


if __name__ == "__main__":
    sys.exit(main())
