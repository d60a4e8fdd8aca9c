#!/usr/bin/python3
"""ort_report.py RESULTS.jsonl — the table of kiln against ONNX Runtime (issue 15).

Benchmark support (not part of kiln); bench/model_bench.sh collects the records and calls it.
Records (one JSON object a line): "kiln" (one per round, `kiln bench --json` under "result"),
"ort" (one per round, bench/ort_bench.mjs), "check" (kiln's outputs against ORT's, per model and
thread count), "ort-vs-torch" (ORT's first output against PyTorch's, per model); others ignored.

Per model and thread count the best round of each runner counts: the one with the lowest median
(interference only slows a run down, so the least disturbed round is the best estimate of what
the code does). Ratio = ORT / kiln of those medians; beside it the ratio of the minima over all
rounds. A row PASSes when the ratio is at least 1.2 and kiln's outputs match ORT's; a row without
a kiln figure (kiln cannot compile the model, or a run failed) FAILs and its reason is listed
under the table. Exit status 0; the table carries the verdicts.
"""
import sys

import bench_models

GOAL_RATIO = 1.2


def read_records(path):
    rounds, checks, ort_vs_torch = {}, {}, {}
    for r in bench_models.read_results(path):
        key = (r["model"], int(r["threads"]))
        if r["runner"] in ("kiln", "ort"):
            rounds.setdefault((r["runner"],) + key, []).append(r)
        elif r["runner"] == "check":
            checks[key] = r
        elif r["runner"] == "ort-vs-torch":
            ort_vs_torch[r["model"]] = r
    return rounds, checks, ort_vs_torch


def best(records):
    """(best median, min over rounds, rounds measured) or (None, None, first error)."""
    good = [r for r in records or [] if "error" not in r]
    if not good:
        errors = [r["error"] for r in records or [] if "error" in r]
        return None, None, errors[0] if errors else "not run"
    return min(r["median_ms"] for r in good), min(r["min_ms"] for r in good), len(good)


def ms(value):
    return f"{value:.2f}" if value is not None else "-"


def ratio(a, b):
    return a / b if a is not None and b is not None and b > 0 else None


def main(argv):
    if len(argv) != 2:
        print("usage: ort_report.py RESULTS.jsonl", file=sys.stderr)
        return 2
    rounds, checks, ort_vs_torch = read_records(argv[1])
    keys = sorted({k[1:] for k in rounds if k[0] == "ort"},
                  key=lambda k: (bench_models.ORDER.index(k[0]) if k[0] in bench_models.ORDER else 99, k[1]))
    print("| model | threads | kiln ms (median) | kiln min ms | ORT ms (median) | ORT min ms "
          "| ORT/kiln | ORT/kiln (min) | outputs match | goal: ORT/kiln >= 1.2x |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    passed = failed = 0
    failures = {}  # (model, runner, reason) -> thread counts, so one compile error is one line
    notes = []
    for model, threads in keys:
        k_med, k_min, k_info = best(rounds.get(("kiln", model, threads)))
        o_med, o_min, o_info = best(rounds.get(("ort", model, threads)))
        r, r_min = ratio(o_med, k_med), ratio(o_min, k_min)
        check = checks.get((model, threads))
        match = "-" if check is None else ("yes" if check["match"] else "**no**")
        verdict = "PASS" if r is not None and r >= GOAL_RATIO and match == "yes" else "FAIL"
        passed, failed = passed + (verdict == "PASS"), failed + (verdict == "FAIL")
        kiln_cell = ms(k_med) if k_med is not None else ("cannot compile" if "compile" in k_info else "error")
        print(f"| {model} | {threads} | {kiln_cell} | {ms(k_min)} | {ms(o_med) if o_med is not None else 'error'} "
              f"| {ms(o_min)} | {f'{r:.2f}x' if r else 'n/a'} | {f'{r_min:.2f}x' if r_min else 'n/a'} "
              f"| {match} | {verdict} |")
        for who, value, info in (("kiln", k_med, k_info), ("ORT", o_med, o_info)):
            if value is None:
                failures.setdefault((model, who, info), []).append(str(threads))
        if check is not None and not check["match"]:
            notes.append(f"{model} at {threads} thread(s), outputs: {check['detail']}")
    print()
    notes = [f"{m} ({who}, {' and '.join(t)} thread(s)): {info}" for (m, who, info), t in failures.items()] + notes
    for model, r in ort_vs_torch.items():
        if not r["match"]:
            notes.append(f"{model}: ORT's output differs from PyTorch's beyond the tolerance: {r['detail']}")
    for note in notes:
        print(f"- {note}")
    if notes:
        print()
    delegated = sorted({f"{m}: {r['delegate_calls']}" for (runner, m, _), rs in rounds.items() if runner == "kiln"
                        for r in rs if "delegate_calls" in r})
    if delegated:
        print(f"kiln delegate calls per execution (0 = every op on the portable kernels): {', '.join(delegated)}")
        print()
    print(f"ONNX Runtime goals: {passed} PASS, {failed} FAIL")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
