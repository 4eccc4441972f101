"""llama.cpp's own C++ server (continuous batching, parallel slots, the OpenAI-compatible HTTP API)
from the prebuilt PyPI wheel `xllamacpp`, which embeds it: nothing to compile. Serves one GGUF on
loopback until SIGTERM or SIGINT.

    python xllamacpp-serve.py --model FILE.gguf --port 18001 --alias NAME \
        [--parallel 4] [--ctx 16384] [--threads 1] [--cache-type q4_0] [--draft-model FILE.gguf]
        [--metrics]

Flash attention is on (a quantized V cache needs it); --cache-type sets the K and V cache types
(f16 by default); --draft-model turns on speculative decoding with that draft (the served GGUF
itself can draft for itself); --metrics serves Prometheus metrics on /metrics.
"""

import argparse
import signal
import sys

import xllamacpp as xlc

CACHE_TYPES = {"f16": "GGML_TYPE_F16", "q8_0": "GGML_TYPE_Q8_0", "q4_0": "GGML_TYPE_Q4_0"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--ctx", type=int, default=16384)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cache-type", choices=sorted(CACHE_TYPES), default="f16")
    parser.add_argument("--draft-model", help="a GGUF to draft with (speculative decoding)")
    parser.add_argument("--metrics", action="store_true", help="serve Prometheus metrics on /metrics")
    args = parser.parse_args()

    # Block the signals before the server's threads start, so that they reach sigwait below.
    stop = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop)

    params = xlc.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_parallel = args.parallel
    params.n_ctx = args.ctx
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.flash_attn_type = xlc.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED
    cache = getattr(xlc.ggml_type, CACHE_TYPES[args.cache_type])
    params.cache_type_k = cache
    params.cache_type_v = cache
    params.endpoint_metrics = args.metrics
    if args.draft_model:
        spec = params.speculative
        spec.types = [xlc.common_speculative_type.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
        spec.draft.mparams.path = args.draft_model
        spec.draft.cpuparams.n_threads = args.threads
        spec.draft.cpuparams_batch.n_threads = args.threads
    server = xlc.Server(params)
    print(f"listening on {server.listening_address}", flush=True)
    signal.sigwait(stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
