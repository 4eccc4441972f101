"""Turn a GGUF file into a Hugging Face folder that `transformers serve` loads.

`transformers serve DIR:FILE.gguf` fails at start (a GGUF-loaded config names no architecture) and
`save_pretrained` refuses a GGUF-loaded model, so the weights are dequantized to fp32, copied into a
model built from the same config, and saved with the tokenizer (and its chat template).

    python3 scripts/gpu/prepare_model.py MODEL.gguf OUT_DIR
"""

import argparse
import os
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gguf", help="the GGUF file")
    parser.add_argument("out", help="the folder to write (kept when it already holds a model)")
    args = parser.parse_args()
    if os.path.exists(os.path.join(args.out, "config.json")):
        print(f"[gpu] {args.out} already holds a model", file=sys.stderr)
        return 0
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = os.path.split(os.path.abspath(args.gguf))
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    model.config.architectures = [type(model).__name__]
    tmp = args.out.rstrip("/") + ".part"
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    os.replace(tmp, args.out)
    print(f"[gpu] wrote {args.out} ({type(model).__name__}, fp32)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
