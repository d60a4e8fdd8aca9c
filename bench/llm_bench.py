#!/usr/bin/python3
"""llm_bench.py — the LLM section of `make bench` (issue 16): kiln against llama.cpp's own
`llama-bench` on the same GGUF files, same thread counts, in the same run.

Benchmark support (not part of kiln). Usage:

  llm_bench.py BUILD_DIR WORK_DIR [--threads 1,2] [--rounds R] [--shapes 15m,110m]
               [--types f32,q8_0,q4_0,q4_k_m] [--quick] [--output FILE]

  BUILD_DIR  holds kiln (BUILD_DIR/kiln) and bench/kiln_gemm_bench (for the read bandwidth)
  WORK_DIR   scratch: GGUF files (about 1.1 GB for both shapes), compiled programs, the
             llama.cpp build (KILN_LLAMA_CACHE overrides WORK_DIR/llama.cpp), results.jsonl
  --rounds   interleaved rounds per model and thread count (default 2): kiln, llama-bench, ...
  --quick    one round, the 15m shape, llama-bench -r 1 (a smoke run, not figures of record)
  --output   the Markdown report (default: printed on stdout)

The models are random-weight llamas written by tests/llm/gguf_write.py (32000-token LLaMA
vocabulary, classifier tied to the embedding): "15m" has the stories15M shape (dim 288, 6
layers, 6 heads, ffn 768, context 256), "110m" the 110M one (dim 768, 12 layers, 12 heads,
ffn 2048, context 1024). F32, Q8_0 and Q4_0 are written directly; Q4_K_M by llama-quantize
from the F32 file (gguf_write.py does not write k-quants).

The peer: llama-bench built from ../shared/peers/llama.cpp.tar.xz (a 2025 snapshot) into the
cache with -DGGML_NATIVE=ON, as that folder's README says, on first use (about 5 minutes at
two jobs; progress on stderr). `llama-bench -m M.gguf -t T -p 128 -n 64 -r 3 -o jsonl` gives
prefill (pp128) and decode (tg64) tok/s. kiln: `kiln generate M.kiln -p TEXT -n 64 --temp 0
--threads T --json`, whose prompt is a fixed text of exactly 128 tokens under this vocabulary
(BOS included), gives prompt_tok_s and gen_tok_s. The best round of each counts (interference
only slows a run down). Decode streams every weight once per token (the tied classifier reads
the whole embedding), so its weight GB/s is the tensors' bytes times tok/s, set against the read
bandwidth kiln_gemm_bench --peaks measures at the start and at the end of the section.

Goals (issue 16): kiln's prefill and decode tok/s at least 1.25x llama-bench's on every row.
Exit status: 0 measured (goals may FAIL; the report says so), 1 nothing could be measured,
2 usage.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PYTHON = "/usr/bin/python3"
GOAL = 1.25
SHAPES = {
    "15m": ["--dim", "288", "--layers", "6", "--heads", "6", "--kv-heads", "6", "--ffn", "768", "--context", "256"],
    "110m": ["--dim", "768", "--layers", "12", "--heads", "12", "--kv-heads", "12", "--ffn", "2048", "--context", "1024"],
}
TYPES = ("f32", "q8_0", "q4_0", "q4_k_m")
PROMPT_TOKENS = 128
WORDS = ("Once upon a time there was a little girl named Lily who loved to play in the park with her "
         "friends and her dog Max every sunny day after school").split()


def log(message):
    print(f"llm_bench: {message}", file=sys.stderr, flush=True)


def fail_usage(message):
    print(f"llm_bench: {message}", file=sys.stderr)
    print("usage: llm_bench.py BUILD_DIR WORK_DIR [--threads 1,2] [--rounds R] [--shapes 15m,110m] "
          "[--types f32,q8_0,q4_0,q4_k_m] [--quick] [--output FILE]", file=sys.stderr)
    sys.exit(2)


def parse(argv):
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    pos, opts = [], {"threads": [1, 2], "rounds": 2, "shapes": ["15m", "110m"], "types": list(TYPES),
                     "quick": False, "output": None}
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--quick":
            opts["quick"] = True
        elif a in ("--threads", "--rounds", "--shapes", "--types", "--output"):
            if i + 1 >= len(argv):
                fail_usage(f"{a} wants a value")
            v = argv[i + 1]
            i += 1
            if a == "--threads":
                try:
                    opts["threads"] = [int(t) for t in v.split(",")]
                except ValueError:
                    fail_usage(f"--threads wants counts like 1,2, got '{v}'")
                if not all(1 <= t <= 64 for t in opts["threads"]):
                    fail_usage(f"--threads wants counts 1..64, got '{v}'")
            elif a == "--rounds":
                if not v.isdigit() or int(v) < 1:
                    fail_usage(f"--rounds wants a positive count, got '{v}'")
                opts["rounds"] = int(v)
            elif a == "--shapes":
                opts["shapes"] = v.split(",")
                bad = [s for s in opts["shapes"] if s not in SHAPES]
                if bad:
                    fail_usage(f"unknown shape {bad[0]}; known: {', '.join(SHAPES)}")
            elif a == "--types":
                opts["types"] = v.split(",")
                bad = [t for t in opts["types"] if t not in TYPES]
                if bad:
                    fail_usage(f"unknown type {bad[0]}; known: {', '.join(TYPES)}")
            else:
                opts["output"] = v
        elif a.startswith("-"):
            fail_usage(f"unknown option {a}")
        else:
            pos.append(a)
        i += 1
    if len(pos) != 2:
        fail_usage("wants BUILD_DIR and WORK_DIR")
    if opts["quick"]:
        opts["rounds"] = 1
        if "--shapes" not in argv:
            opts["shapes"] = ["15m"]
    return pos[0], pos[1], opts


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


# ---- the peer ---------------------------------------------------------------------------------

def ensure_llama(cache):
    """Paths of llama-bench and llama-quantize, built into cache on first use."""
    build = os.path.join(cache, "lcpp", "build")
    tools = [os.path.join(build, "bin", n) for n in ("llama-bench", "llama-quantize")]
    if all(os.access(t, os.X_OK) for t in tools):
        return tools
    source = os.path.join(REPO, "..", "shared", "peers", "llama.cpp.tar.xz")
    if not os.path.exists(source):
        raise RuntimeError(f"no llama.cpp source at {os.path.normpath(source)}")
    os.makedirs(cache, exist_ok=True)
    logfile = os.path.join(cache, "build.log")
    log(f"building llama-bench from {os.path.normpath(source)} into {cache} (about 5 minutes; log {logfile})")
    with open(logfile, "w") as out:
        steps = [["tar", "-xJf", source, "-C", cache],
                 ["cmake", "-S", os.path.join(cache, "lcpp"), "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                  "-DGGML_NATIVE=ON", "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_SERVER=OFF"],
                 ["cmake", "--build", build, "-j2", "--target", "llama-bench", "llama-quantize"]]
        for step in steps:
            if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                raise RuntimeError(f"building llama.cpp failed at '{' '.join(step[:2])} ...' (see {logfile})")
    return tools


def llama_bench(tool, gguf, threads, reps):
    r = run([tool, "-m", gguf, "-t", str(threads), "-p", str(PROMPT_TOKENS), "-n", "64", "-r", str(reps),
             "-o", "jsonl"])
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["llama-bench failed"])[-1]}
    out = {}
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        if row.get("n_prompt") == PROMPT_TOKENS and row.get("n_gen") == 0:
            out["prefill_tok_s"] = row["avg_ts"]
        elif row.get("n_gen") == 64 and row.get("n_prompt") == 0:
            out["decode_tok_s"] = row["avg_ts"]
    return out if len(out) == 2 else {"error": "llama-bench printed no pp128/tg64 rows"}


# ---- kiln -------------------------------------------------------------------------------------

def prompt_text(kiln, model):
    """A text of exactly PROMPT_TOKENS tokens (BOS included) under the model's vocabulary: words of
    a fixed sentence, repeated, added one at a time; the count must land on PROMPT_TOKENS."""
    words = []
    while True:
        words.append(WORDS[len(words) % len(WORDS)])
        text = " ".join(words)
        r = run([kiln, "tokenize", model, "--text", text])
        if r.returncode != 0:
            raise RuntimeError(f"kiln tokenize failed: {r.stderr.strip()}")
        n = len(r.stdout.split())
        if n == PROMPT_TOKENS:
            return text
        if n > PROMPT_TOKENS:
            # The last word added several tokens at once: use a one-token filler instead.
            words[-1] = "a"
            text = " ".join(words)
            r = run([kiln, "tokenize", model, "--text", text])
            if len(r.stdout.split()) == PROMPT_TOKENS:
                return text
            raise RuntimeError(f"no prompt of exactly {PROMPT_TOKENS} tokens from the fixed words")


def kiln_generate(kiln, program, prompt, threads):
    r = run([kiln, "generate", program, "-p", prompt, "-n", "64", "--temp", "0", "--threads", str(threads), "--json"])
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["kiln generate failed"])[-1]}
    j = json.loads(r.stdout)
    return {"prefill_tok_s": j["prompt_tok_s"], "decode_tok_s": j["gen_tok_s"], "prompt_tokens": j["prompt_tokens"],
            "generated_tokens": j["generated_tokens"], "tokens": j["tokens"]}


# ---- models -----------------------------------------------------------------------------------

def tensor_bytes(gguf):
    sys.path.insert(0, os.path.join(REPO, "tests", "llm"))
    import gguf_read
    _meta, infos, data, base = gguf_read.read_header(gguf)
    return len(data) - base


def make_model(work, shape, ty, quantize):
    """The GGUF file of (shape, type), written once."""
    path = os.path.join(work, f"{shape}-{ty}.gguf")
    if os.path.exists(path):
        return path
    tmp = path + ".tmp"
    if ty == "q4_k_m":
        src = make_model(work, shape, "f32", quantize)
        r = run([quantize, src, tmp, "Q4_K_M"])
    else:
        r = run([PYTHON, os.path.join(REPO, "tests", "llm", "gguf_write.py"), "random", tmp, "--type", ty, "--seed",
                 "1", "--vocab", "32000"] + SHAPES[shape])
    if r.returncode != 0:
        raise RuntimeError(f"writing {os.path.basename(path)} failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
    os.replace(tmp, path)
    return path


def peaks(gemm_bench, threads):
    if not os.access(gemm_bench, os.X_OK):
        return {}
    r = run([gemm_bench, "--peaks", "--threads", ",".join(str(t) for t in threads)])
    out = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            j = json.loads(line)
            out[j["threads"]] = j["read_gbs"]
    return out


# ---- report -----------------------------------------------------------------------------------

def best(rows, key):
    vals = [r[key] for r in rows if key in r]
    return max(vals) if vals else None


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def report(results, read_bw, opts, started, errors):
    lines = ["# LLM: kiln against llama.cpp (llama-bench)", "",
             f"Run {started}; threads {','.join(map(str, opts['threads']))}; {opts['rounds']} interleaved round(s); "
             f"prompt {PROMPT_TOKENS} tokens, 64 generated (greedy). Read bandwidth (kiln_gemm_bench --peaks, best of "
             f"the start and the end): " + ", ".join(f"{t}T {bw:.1f} GB/s" for t, bw in sorted(read_bw.items())), "",
             "| model | threads | weights MB | kiln prefill tok/s | llama pp128 | ratio | kiln decode tok/s | llama tg64 "
             "| ratio | kiln decode GB/s | of read BW | goal: both >= 1.25x |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    passed = failed = 0
    for (name, threads), r in results.items():
        kp, kd = best(r["kiln"], "prefill_tok_s"), best(r["kiln"], "decode_tok_s")
        lp, ld = best(r["llama"], "prefill_tok_s"), best(r["llama"], "decode_tok_s")
        rp = kp / lp if kp and lp else None
        rd = kd / ld if kd and ld else None
        gbs = kd * r["bytes"] / 1e9 if kd else None
        bw = read_bw.get(threads)
        ok = rp is not None and rd is not None and rp >= GOAL and rd >= GOAL
        passed, failed = passed + ok, failed + (not ok)
        lines.append(f"| {name} | {threads} | {r['bytes'] / 1e6:.1f} | {fmt(kp)} | {fmt(lp)} | {fmt(rp, 2)}x | {fmt(kd)} "
                     f"| {fmt(ld)} | {fmt(rd, 2)}x | {fmt(gbs)} | {fmt(100 * gbs / bw if gbs and bw else None, 0)}% "
                     f"| {'PASS' if ok else 'FAIL'} |")
    lines += ["", f"LLM goals: {passed} PASS, {failed} FAIL"]
    if errors:
        lines += ["", "Errors:"] + [f"- {e}" for e in errors]
    return "\n".join(lines) + "\n", passed, failed


def main(argv):
    build, work, opts = parse(argv)
    kiln = os.path.join(os.path.abspath(build), "kiln")
    gemm_bench = os.path.join(os.path.abspath(build), "bench", "kiln_gemm_bench")
    if not os.access(kiln, os.X_OK):
        print(f"llm_bench: no kiln at {kiln}; build the project first", file=sys.stderr)
        return 1
    work = os.path.abspath(work)
    models_dir = os.path.join(work, "llm")
    os.makedirs(models_dir, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    try:
        bench_tool, quantize = ensure_llama(os.environ.get("KILN_LLAMA_CACHE", os.path.join(work, "llama.cpp")))
    except RuntimeError as e:
        print(f"llm_bench: {e}", file=sys.stderr)
        return 1
    read_bw = peaks(gemm_bench, opts["threads"])
    reps = 1 if opts["quick"] else 3
    results, errors, prompt = {}, [], None
    jsonl = open(os.path.join(work, "llm-results.jsonl"), "w")
    for shape in opts["shapes"]:
        for ty in opts["types"]:
            name = f"{shape} {ty.upper()}"
            try:
                gguf = make_model(models_dir, shape, ty, quantize)
                program = gguf[:-len(".gguf")] + ".kiln"
                r = run([kiln, "compile", gguf, "-o", program])
                if r.returncode != 0:
                    raise RuntimeError(f"kiln compile: {(r.stderr.strip().splitlines() or ['failed'])[-1]}")
                if prompt is None:
                    prompt = prompt_text(kiln, program)
            except RuntimeError as e:
                errors.append(f"{name}: {e}")
                continue
            size = tensor_bytes(gguf)
            for threads in opts["threads"]:
                log(f"{name} at {threads} thread(s)")
                row = results.setdefault((name, threads), {"kiln": [], "llama": [], "bytes": size})
                for _ in range(opts["rounds"]):
                    for runner, fn in (("kiln", lambda: kiln_generate(kiln, program, prompt, threads)),
                                       ("llama", lambda: llama_bench(bench_tool, gguf, threads, reps))):
                        rec = fn()
                        jsonl.write(json.dumps({"model": name, "threads": threads, "runner": runner, **rec}) + "\n")
                        if "error" in rec:
                            errors.append(f"{name} {threads}T {runner}: {rec['error']}")
                        else:
                            row[runner].append(rec)
    jsonl.close()
    after = peaks(gemm_bench, opts["threads"])
    read_bw = {t: max(read_bw.get(t, 0.0), after.get(t, 0.0)) for t in set(read_bw) | set(after)}
    text, passed, failed = report(results, read_bw, opts, started, errors)
    if opts["output"]:
        with open(opts["output"], "w") as f:
            f.write(text)
        log(f"wrote {opts['output']} — LLM goals: {passed} PASS, {failed} FAIL")
    else:
        sys.stdout.write(text)
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
