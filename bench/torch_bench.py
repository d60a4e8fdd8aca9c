#!/usr/bin/python3
"""torch_bench.py — PyTorch's side of kiln's model benchmark (issue 5 (b)), and its report.

Benchmark support (not part of kiln); driven by bench/model_bench.sh. Three commands:

  torch_bench.py export OUTDIR
      Exports the issue-5 models (ResNet-18, MobileNetV2, the BERT-like encoder at batch 1) with
      bench/bench_models.py, which model_bench.sh uses for all of its models, into
      OUTDIR/<model>_op17/{model.onnx, input_<i>.npy, output_<j>.npy}.

  torch_bench.py time MODEL CASE_DIR --threads N [--warmup W] [--iterations I]
      MODEL is any name of `bench_models.py list`. Rebuilds MODEL exactly as bench_models.py
      exported it (same builder, same seed, so the same weights),
      feeds CASE_DIR's input_<i>.npy, and times I calls after W untimed ones under
      torch.inference_mode with torch.set_num_threads(N). Prints one JSON object.

  torch_bench.py report RESULTS.jsonl
      Reads the kiln and PyTorch records model_bench.sh collected (kiln's best round of each model
      and thread count: the lowest median; other runners' records are ignored) and prints a
      Markdown table, one row per model PyTorch was timed on, with
      the speed-up (PyTorch median / kiln median; the ratio of the minima beside it, the figure
      least disturbed by other work on a shared machine) and PASS/FAIL against the 1.5x goal.
      Exit status 0; the table carries the verdicts.
"""
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_models  # noqa: E402 (the models and their export, shared with model_bench.sh)

MODELS = ("resnet18", "mobilenet_v2", "bert_encoder")  # issue 5's models, exported by `export`
GOAL_SPEEDUP = 1.5


def cmd_export(outdir):
    return bench_models.cmd_export(outdir, list(MODELS))


def time_calls(fn, warmup, iterations):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - t0))
    return times


def matches_export(outputs, case):
    """True when the rebuilt model reproduces the outputs saved at export: the timed model is the
    exported one (same weights), not merely the same architecture."""
    import numpy as np
    import torch
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    for j, y in enumerate(outputs):
        expected = np.load(os.path.join(case, f"output_{j}.npy"))
        if y.shape != expected.shape or not np.allclose(y.numpy(), expected, rtol=1e-4, atol=1e-5):
            return False
    return True


def cmd_time(name, case, threads, warmup, iterations):
    import numpy as np
    import torch
    record = {"runner": "pytorch", "model": name, "threads": threads, "torch": torch.__version__}
    try:
        torch.set_num_threads(threads)
        torch.set_num_interop_threads(1)  # one op at a time, as kiln executes
        builder = bench_models.model_spec(name)[0]
        torch.manual_seed(sum(map(ord, name)))  # export_one's seed: the exported weights
        model = builder().eval()
        n_inputs = len([f for f in os.listdir(case) if f.startswith("input_") and f.endswith(".npy")])
        inputs = tuple(torch.from_numpy(np.load(os.path.join(case, f"input_{i}.npy"))) for i in range(n_inputs))
        with torch.inference_mode():
            times = time_calls(lambda: model(*inputs), warmup, iterations)
            record["same_model"] = matches_export(model(*inputs), case)
        record.update(warmup=warmup, iterations=iterations, min_ms=min(times), median_ms=statistics.median(times),
                      mean_ms=statistics.fmean(times), max_ms=max(times))
    except Exception as e:  # a record with the reason, so the report shows it instead of a gap
        record["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(record))
    return 0 if "error" not in record else 1


def read_records(path):
    kiln, torch_ = {}, {}
    for r in bench_models.read_results(path):
        key = (r["model"], int(r["threads"]))
        if r["runner"] == "kiln":
            best = kiln.get(key)
            if best is None or "error" in best or ("error" not in r and r["median_ms"] < best["median_ms"]):
                kiln[key] = r
        elif r["runner"] == "pytorch":
            torch_[key] = r
    return kiln, torch_


def fmt_ms(r, field):
    if r is None:
        return "-"
    if "error" in r:
        return "error"
    return f"{r[field]:.2f}"


def cmd_report(path):
    kiln, torch_ = read_records(path)
    order = bench_models.ORDER
    keys = sorted(torch_, key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1]))
    print("| model | threads | kiln min ms | kiln median ms | PyTorch min ms | PyTorch median ms "
          "| speed-up (median) | speed-up (min) | goal: median speed-up >= 1.5x |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    passed = failed = 0
    errors = []
    for key in keys:
        k, t = kiln.get(key), torch_.get(key)
        ok = k is not None and t is not None and "error" not in k and "error" not in t
        speedup = t["median_ms"] / k["median_ms"] if ok and k["median_ms"] > 0 else None
        speedup_min = t["min_ms"] / k["min_ms"] if ok and k["min_ms"] > 0 else None
        verdict = "PASS" if speedup is not None and speedup >= GOAL_SPEEDUP else "FAIL"
        passed, failed = passed + (verdict == "PASS"), failed + (verdict == "FAIL")
        shown = f"{speedup:.2f}x" if speedup is not None else "n/a"
        shown_min = f"{speedup_min:.2f}x" if speedup_min is not None else "n/a"
        print(f"| {key[0]} | {key[1]} | {fmt_ms(k, 'min_ms')} | {fmt_ms(k, 'median_ms')} | {fmt_ms(t, 'min_ms')} "
              f"| {fmt_ms(t, 'median_ms')} | {shown} | {shown_min} | {verdict} |")
        if t is not None and t.get("same_model") is False:
            errors.append(f"{key[0]}: the rebuilt PyTorch model does not reproduce the exported outputs")
        for who, r in (("kiln", k), ("PyTorch", t)):
            if r is not None and "error" in r:
                errors.append(f"{key[0]} at {key[1]} thread(s), {who}: {r['error']}")
    print()
    for e in errors:
        print(f"- error: {e}")
    if errors:
        print()
    delegated = sorted({f"{m}: {r['delegate_calls']}" for (m, t), r in kiln.items() if (m, t) in torch_ and "delegate_calls" in r})
    if delegated:
        print(f"kiln delegate calls per execution (0 = every op on the portable kernels): {', '.join(delegated)}")
        print()
    print(f"Model goals: {passed} PASS, {failed} FAIL")
    return 0


def main(argv):
    usage = ("usage: torch_bench.py export OUTDIR | time MODEL CASE_DIR --threads N [--warmup W] "
             "[--iterations I] | report RESULTS.jsonl")
    if len(argv) >= 3 and argv[1] == "export":
        return cmd_export(argv[2])
    if len(argv) >= 3 and argv[1] == "report":
        return cmd_report(argv[2])
    if len(argv) >= 4 and argv[1] == "time" and argv[2] in bench_models.ORDER:
        opts = {"--threads": 1, "--warmup": 3, "--iterations": 20}
        rest = argv[4:]
        if len(rest) % 2 == 0 and all(rest[i] in opts and rest[i + 1].isdigit() for i in range(0, len(rest), 2)):
            for i in range(0, len(rest), 2):
                opts[rest[i]] = int(rest[i + 1])
            if opts["--threads"] >= 1 and opts["--iterations"] >= 1:
                return cmd_time(argv[2], argv[3], opts["--threads"], opts["--warmup"], opts["--iterations"])
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
