#!/usr/bin/python3
"""slc_bench.py — does `kiln compile --slc` (cache-resident scratch planning) make models faster?

Benchmark (issue 4 item 7; not part of kiln). Usage:
    slc_bench.py BUILD_DIR WORK_DIR [--target T] [--runs N] [--iterations N] [--warmup N]
                 [--no-wall] [--no-cachegrind] [--ll machine,MIB...] [--configs NAME,NAME...]
                 [--cachegrind-configs NAME,NAME...]

Every configuration (a model at a batch size) is compiled twice with the same kiln for one
target (default x86-64-v3: valgrind 3.19 does not emulate AVX-512, so an x86-64-v4 record cannot
run under cachegrind; use --target x86-64-v4 --no-cachegrind for wall time on that record):
plain, and with --slc. Then, in the same run:
  identity   `kiln run` on the same input, every output file compared byte for byte;
  wall time  `kiln bench --threads 1 --json`, --runs rounds alternating which variant goes first,
             each --warmup untimed then --iterations timed executions; reported: the minimum of
             the rounds' minima and the median of the rounds' medians;
  misses     valgrind --tool=cachegrind --cache-sim=yes with D1 set to this machine's L1d and LL
             to each --ll entry: `machine` (its L3, from sysfs, the default) or a size in MiB
             (16-way, 64-byte lines; e.g. the target's assumed L3, to see a smaller LLC), for the
             --cachegrind-configs (default: all; simulation runs at roughly 1/2000 of native
             speed on AVX2 code, so a ResNet-18 batch-8 execution takes about 20 minutes). Cachegrind 3.19 cannot restrict counting to one function, so
             each variant runs twice, with 1 and with 2 timed executions (no warm-up), and the
             difference is one steady-state execution: loading, packing checks and the first,
             cold execution cancel out.
Models come from tests/models/export_models.py (random weights, fixed seeds; opset 17), exported
once into WORK_DIR/exported and reused while the exporter and torch are unchanged. Batch-8 CNNs
are compiled with --input-shape and fed a fixed random input.

Prints a Markdown table and writes WORK_DIR/results.TARGET.json. Exit status: 0 measured, 1 something
failed (the message says what), 2 usage.
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORTER = os.path.join(HERE, "..", "..", "tests", "models", "export_models.py")
PYTHON = os.environ.get("KILN_PYTHON", "/usr/bin/python3")

# name -> (exported model, batch or None for the exported shape, input name)
CONFIGS = {
    "mobilenet_v2_b1": ("mobilenet_v2", None, "input"),
    "mobilenet_v2_b8": ("mobilenet_v2", 8, "input"),
    "resnet18_b1": ("resnet18", None, "input"),
    "resnet18_b8": ("resnet18", 8, "input"),
    "bert_encoder_2x64": ("bert_encoder", None, None),
}
VARIANTS = ("plain", "slc")


def fail(message):
    print(f"slc_bench.py: {message}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-400:]}")
    return r


# ---- models and inputs -----------------------------------------------------------------------

def export(work):
    models = sorted({m for m, _, _ in CONFIGS.values()})
    out = os.path.join(work, "exported")
    torch_version = run([PYTHON, "-c", "import torch; print(torch.__version__)"]).stdout.strip()
    with open(EXPORTER, "rb") as f:
        stamp = f"{hashlib.sha256(f.read()).hexdigest()} torch={torch_version} models={','.join(models)}"
    stamp_file = os.path.join(out, ".stamp")
    if os.path.exists(stamp_file) and open(stamp_file).read() == stamp:
        return out
    os.makedirs(out, exist_ok=True)
    print(f"exporting {', '.join(models)} (torch {torch_version})", file=sys.stderr)
    run([PYTHON, "-W", "ignore", EXPORTER, out] + models)
    with open(stamp_file, "w") as f:
        f.write(stamp)
    return out


def batched_inputs(work, name, batch):
    """A directory with input_0.npy: a fixed random image batch."""
    import numpy as np
    d = os.path.join(work, "inputs", name)
    os.makedirs(d, exist_ok=True)
    x = np.random.default_rng(1234).standard_normal((batch, 3, 224, 224)).astype(np.float32)
    np.save(os.path.join(d, "input_0.npy"), x)
    return d


# ---- compile, inspect, identity --------------------------------------------------------------

def compile_variants(kiln, work, name, case_dir, batch, input_name, target):
    programs = {}
    for v in VARIANTS:
        path = os.path.join(work, f"{name}.{target}.{v}.kiln")
        cmd = [kiln, "compile", os.path.join(case_dir, "model.onnx"), "--target", target, "-o", path]
        if batch:
            cmd += ["--input-shape", f"{input_name}={batch},3,224,224"]
        if v == "slc":
            cmd.append("--slc")
        run(cmd)
        programs[v] = path
    return programs


def scratch_of(kiln, program, want_slc):
    """Largest graph scratch over the program's context binaries, and whether they say slc."""
    info = json.loads(run([kiln, "inspect", "--json", program]).stdout)
    largest, flags_ok = 0, True
    for binary in info.get("context_binaries", []):
        flags_ok = flags_ok and binary.get("slc") == want_slc
        for record in binary.get("records", []):
            for g in record.get("graphs", []):
                largest = max(largest, g.get("scratch_size", 0))
    return largest, flags_ok


def outputs_identical(kiln, work, name, programs, inputs):
    dirs = {}
    for v, p in programs.items():
        d = os.path.join(work, "outputs", f"{name}.{v}")
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        run([kiln, "run", p, "--inputs", inputs, "--outputs", d, "--threads", "1", "-q"])
        dirs[v] = d
    files = sorted(os.listdir(dirs["plain"]))
    if not files or files != sorted(os.listdir(dirs["slc"])):
        return False
    for f in files:
        with open(os.path.join(dirs["plain"], f), "rb") as a, open(os.path.join(dirs["slc"], f), "rb") as b:
            if a.read() != b.read():
                return False
    return True


# ---- wall time -------------------------------------------------------------------------------

def bench_once(kiln, program, inputs, args):
    r = run([kiln, "bench", program, "--inputs", inputs, "--threads", "1", "--warmup", str(args.warmup),
             "--iterations", str(args.iterations), "--json"])
    return json.loads(r.stdout)


def wall_times(kiln, programs, inputs, args):
    rounds = {v: [] for v in VARIANTS}
    for i in range(args.runs):
        order = VARIANTS if i % 2 == 0 else tuple(reversed(VARIANTS))
        for v in order:
            rounds[v].append(bench_once(kiln, programs[v], inputs, args))
    return {v: {"min_ms": min(r["min_ms"] for r in rounds[v]),
                "median_ms": statistics.median(r["median_ms"] for r in rounds[v]),
                "rounds": [[r["min_ms"], r["median_ms"]] for r in rounds[v]]} for v in VARIANTS}


# ---- cache misses ----------------------------------------------------------------------------

def sysfs_cache(index):
    base = f"/sys/devices/system/cpu/cpu0/cache/index{index}"

    def read(f):
        with open(os.path.join(base, f)) as fh:
            return fh.read().strip()
    size = read("size")
    size = int(size[:-1]) * 1024 if size.endswith("K") else int(size)
    return size, int(read("ways_of_associativity")), int(read("coherency_line_size"))


def machine_caches():
    """This machine's L1d and last-level cache as (size, ways, line), from sysfs."""
    d1, ll = (32768, 8, 64), (8 << 20, 16, 64)
    for i in range(8):
        base = f"/sys/devices/system/cpu/cpu0/cache/index{i}"
        if not os.path.isdir(base):
            break
        level = open(os.path.join(base, "level")).read().strip()
        kind = open(os.path.join(base, "type")).read().strip()
        if level == "1" and kind == "Data":
            d1 = sysfs_cache(i)
        elif kind == "Unified":
            ll = sysfs_cache(i)  # levels are listed in order: the last unified one is the LLC
    return d1, ll


def ll_configs(spec, machine_ll):
    """--ll LIST: 'machine' or a size in MiB (16-way, 64-byte lines), comma-separated."""
    out = []
    for item in spec.split(","):
        if item == "machine":
            out.append(("machine", machine_ll))
        elif item.isdigit() and int(item) > 0:
            out.append((f"{item}M", (int(item) << 20, 16, 64)))
        else:
            print(f"--ll: '{item}' is neither 'machine' nor a size in MiB", file=sys.stderr)
            sys.exit(2)
    return out


def cachegrind_totals(kiln, program, inputs, iterations, out, options):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", *options, f"--cachegrind-out-file={out}",
         kiln, "bench", program, "--inputs", inputs, "--threads", "1", "--warmup", "0",
         "--iterations", str(iterations)])
    events, summary = None, None
    with open(out) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:"):
                summary = [int(x) for x in line.split()[1:]]
    if not events or not summary:
        fail(f"no summary in {out}")
    e = dict(zip(events, summary))
    return {"d_refs": e["Dr"] + e["Dw"], "d1_misses": e["D1mr"] + e["D1mw"], "lld_misses": e["DLmr"] + e["DLmw"]}


def misses_per_execution(kiln, programs, inputs, work, tag, d1, ll):
    options = [f"--D1={d1[0]},{d1[1]},{d1[2]}", f"--LL={ll[0]},{ll[1]},{ll[2]}"]
    result = {}
    for v in VARIANTS:
        base = os.path.join(work, "cachegrind", f"{tag}.LL{ll[0] >> 20}M.{v}")
        one = cachegrind_totals(kiln, programs[v], inputs, 1, base + ".1.out", options)
        two = cachegrind_totals(kiln, programs[v], inputs, 2, base + ".2.out", options)
        result[v] = {k: two[k] - one[k] for k in one}
    return result


# ---- report ----------------------------------------------------------------------------------

def pct(new, old):
    return f"{100.0 * (new - old) / old:+.1f}%" if old else "n/a"


def mib(x):
    return f"{x / (1 << 20):.1f}"


def millions(x):
    return f"{round(x / 1e6, 3) + 0.0:.3f}"  # + 0.0: no "-0.000" for a count of -1


def pair(plain, slc, fmt):
    return f"{fmt(plain)} / {fmt(slc)} ({pct(slc, plain)})"


def report(results, args, d1, lls):
    print(f"Target {args.target}; programs from `kiln compile MODEL.onnx --target {args.target} [--slc]`.")
    print(f"Wall time: `kiln bench --threads 1 --warmup {args.warmup} --iterations {args.iterations}`, "
          f"{args.runs} rounds alternating the variants; min = least of the rounds' minima, "
          "median = median of the rounds' medians. Δ = slc against plain.")
    print()
    print("| model | scratch MiB plain / slc | outputs identical | min ms plain / slc (Δ) | median ms plain / slc (Δ) |")
    print("|---|---|---|---|---|")
    for name, r in results.items():
        w = r.get("wall")
        ms = (lambda x: f"{x:.2f}")
        times = [pair(w["plain"][k], w["slc"][k], ms) for k in ("min_ms", "median_ms")] if w else ["—", "—"]
        print(f"| {name} | {mib(r['scratch']['plain'])} / {mib(r['scratch']['slc'])} | "
              f"{'yes' if r['identical'] else '**NO**'} | {times[0]} | {times[1]} |")
    for label, ll in lls:
        if not any(label in r.get("misses", {}) for r in results.values()):
            continue
        print()
        print(f"Cachegrind, D1 {d1[0] // 1024} KiB {d1[1]}-way, LL {ll[0] >> 20} MiB {ll[1]}-way"
              f"{' (this machine)' if label == 'machine' else ''}; per steady-state execution "
              "(a run of 2 executions minus a run of 1), millions:")
        print()
        print("| model | D refs plain / slc | D1 misses plain / slc (Δ) | LLd misses plain / slc (Δ) |")
        print("|---|---|---|---|")
        for name, r in results.items():
            if label not in r["misses"]:
                continue
            m = r["misses"][label]
            print(f"| {name} | {millions(m['plain']['d_refs'])} / {millions(m['slc']['d_refs'])} | "
                  f"{pair(m['plain']['d1_misses'], m['slc']['d1_misses'], millions)} | "
                  f"{pair(m['plain']['lld_misses'], m['slc']['lld_misses'], millions)} |")


def main():
    p = argparse.ArgumentParser(usage=__doc__.split("Usage:")[1].split("\n\n")[0])
    p.add_argument("build")
    p.add_argument("work")
    p.add_argument("--target", default="x86-64-v3")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--no-cachegrind", action="store_true")
    p.add_argument("--no-wall", action="store_true")
    p.add_argument("--ll", default="machine")
    p.add_argument("--cachegrind-configs", default=None)
    p.add_argument("--configs", default=",".join(CONFIGS))
    args = p.parse_args()
    kiln = os.path.join(os.path.abspath(args.build), "kiln")
    names = [n for n in args.configs.split(",") if n]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown or args.runs < 1 or args.iterations < 1 or args.warmup < 0:
        print(f"unknown configuration(s) {unknown}; known: {', '.join(CONFIGS)}" if unknown else "bad counts",
              file=sys.stderr)
        sys.exit(2)
    if not os.access(kiln, os.X_OK):
        fail(f"{kiln} is missing; build the project first")
    os.makedirs(args.work, exist_ok=True)
    exported = export(args.work)
    d1, machine_ll = machine_caches()
    lls = [] if args.no_cachegrind else ll_configs(args.ll, machine_ll)
    results = {}
    for name in names:
        model, batch, input_name = CONFIGS[name]
        case = os.path.join(exported, f"{model}_op17")
        inputs = batched_inputs(args.work, name, batch) if batch else case
        print(f"{name}: compiling", file=sys.stderr)
        programs = compile_variants(kiln, args.work, name, case, batch, input_name, args.target)
        r = {"scratch": {}, "flags_ok": True}
        for v in VARIANTS:
            r["scratch"][v], ok = scratch_of(kiln, programs[v], v == "slc")
            r["flags_ok"] = r["flags_ok"] and ok
        r["identical"] = outputs_identical(kiln, args.work, name, programs, inputs)
        if not args.no_wall:
            print(f"{name}: wall time", file=sys.stderr)
            r["wall"] = wall_times(kiln, programs, inputs, args)
        r["misses"] = {}
        simulate = args.cachegrind_configs is None or name in args.cachegrind_configs.split(",")
        for label, ll in lls if simulate else []:
            print(f"{name}: cachegrind, LL {label}", file=sys.stderr)
            r["misses"][label] = misses_per_execution(kiln, programs, inputs, args.work, f"{name}.{args.target}", d1, ll)
        results[name] = r
        with open(os.path.join(args.work, f"results.{args.target}.json"), "w") as f:
            json.dump({"target": args.target, "d1": d1, "ll": dict(lls), "results": results}, f, indent=1)
    report(results, args, d1, lls)
    bad = [n for n, r in results.items() if not r["identical"] or not r["flags_ok"]]
    if bad:
        fail(f"outputs differ or spec flags wrong for: {', '.join(bad)}")


if __name__ == "__main__":
    main()
