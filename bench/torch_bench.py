#!/usr/bin/python3
"""torch_bench.py — PyTorch's side of kiln's model benchmark (issue 5 (b)), and its report.

Benchmark support (not part of kiln); driven by bench/model_bench.sh. Three commands:

  torch_bench.py export OUTDIR
      Exports the benchmark models with tests/models/export_models.py (imported, so the models,
      seeds and export code are the very ones the real-model tests use) at opset 17 into
      OUTDIR/<model>_op17/{model.onnx, input_<i>.npy, output_<j>.npy}. ResNet-18 and MobileNetV2
      take one 1x3x224x224 image; the BERT-like encoder is exported at batch 1 (the real-model
      test uses batch 2 to exercise padding masks; the benchmark goal is stated at batch 1).

  torch_bench.py time MODEL CASE_DIR --threads N [--warmup W] [--iterations I]
      Rebuilds MODEL exactly as it was exported (same builder, same seed, so the same weights),
      feeds CASE_DIR's input_<i>.npy, and times I calls after W untimed ones under
      torch.inference_mode with torch.set_num_threads(N). Prints one JSON object.

  torch_bench.py report RESULTS.jsonl
      Reads the kiln and PyTorch records model_bench.sh collected and prints a Markdown table with
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
MODELS = ("resnet18", "mobilenet_v2", "bert_encoder")
OPSET = 17
GOAL_SPEEDUP = 1.5


def import_exporter():
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
    import export_models
    return export_models


def bert_inputs_batch1(rng, seq=64, vocab=1000):
    """export_models.bert_inputs at batch 1: no padded second sequence, same value ranges."""
    import numpy as np
    input_ids = rng.integers(0, vocab, size=(1, seq), dtype=np.int64)
    attention_mask = np.ones((1, seq), dtype=np.int64)
    token_type_ids = np.zeros((1, seq), dtype=np.int64)
    token_type_ids[:, seq // 2:] = 1
    return [input_ids, attention_mask, token_type_ids]


def model_spec(exporter, name):
    builder, make_inputs, input_names, output_names, _ = exporter.MODELS[name]
    if name == "bert_encoder":
        make_inputs = bert_inputs_batch1
    return builder, make_inputs, input_names, output_names


def case_dir(outdir, name):
    return os.path.join(outdir, f"{name}_op{OPSET}")


def cmd_export(outdir):
    exporter = import_exporter()
    exporter.OPSETS = (OPSET,)  # export_one reads the module's list: one opset is enough here
    failed = []
    for name in MODELS:
        try:
            builder, make_inputs, input_names, output_names = model_spec(exporter, name)
            exporter.export_one(name, builder, make_inputs, input_names, output_names, outdir)
        except Exception as e:  # report and go on: the other models still get measured
            print(f"export of {name} FAILED: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
    return 1 if failed else 0


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
        exporter = import_exporter()
        builder, make_inputs, _, _ = model_spec(exporter, name)
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
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            r = {**r, **r.get("result", {})}  # kiln records carry `kiln bench --json` as "result"
            key = (r["model"], int(r["threads"]))
            if r["runner"] == "kiln":
                kiln[key] = r
            else:
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
    keys = sorted(set(kiln) | set(torch_), key=lambda k: (MODELS.index(k[0]) if k[0] in MODELS else 99, k[1]))
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
    delegated = sorted({f"{m}: {r['delegate_calls']}" for (m, _), r in kiln.items() if "delegate_calls" in r})
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
    if len(argv) >= 4 and argv[1] == "time" and argv[2] in MODELS:
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
