// ort_bench.mjs — ONNX Runtime's side of kiln's model benchmark (issue 15): times one model on
// the same input files kiln gets and writes its outputs so the benchmark can check kiln's.
//
// Benchmark support (not part of kiln); driven by bench/model_bench.sh. Needs the onnxruntime-node
// package bench/install_ort.sh installs (its folder is the --ort argument).
//
// Usage: node ort_bench.mjs --ort PACKAGE_DIR MODEL.onnx CASE_DIR --threads N
//            [--iterations I] [--warmup W] [--outputs DIR] [--name NAME]
//
// Inputs are CASE_DIR/input_<i>.npy (or input_<i>.pb, an ONNX TensorProto as in the ONNX backend
// tests' test_data_set folders, converted to .npy first with /usr/bin/python3's onnx), fed to the
// graph inputs in order. The session runs with graph optimisation "all", N intra-op threads, one
// inter-op thread and sequential execution, on the CPU execution provider — ORT's settings for a
// one-request-at-a-time latency run, which is how kiln executes. W untimed runs, then I timed ones;
// each is one `session.run` (so the node binding's call overhead, a few microseconds, is in every
// figure). Prints one JSON object: min, median, mean and max milliseconds, or an "error" with the
// reason. With --outputs, the outputs of the last run go to DIR/output_<j>.npy in graph-output order.
// Exit status: 0 measured, 1 failure (the JSON says why), 2 usage.
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// .npy dtype strings and the ORT tensor type and typed array each maps to.
const NPY_TYPES = {
    "<f4": ["float32", Float32Array], "<f8": ["float64", Float64Array],
    "<i8": ["int64", BigInt64Array], "<i4": ["int32", Int32Array], "<i2": ["int16", Int16Array],
    "|i1": ["int8", Int8Array], "|u1": ["uint8", Uint8Array], "<u2": ["uint16", Uint16Array],
    "<u4": ["uint32", Uint32Array], "<u8": ["uint64", BigUint64Array], "|b1": ["bool", Uint8Array],
};

function usage() {
    console.error("usage: node ort_bench.mjs --ort PACKAGE_DIR MODEL.onnx CASE_DIR --threads N " +
        "[--iterations I] [--warmup W] [--outputs DIR] [--name NAME]");
    process.exit(2);
}

function parseArgs(argv) {
    const opts = { iterations: 20, warmup: 3, threads: 0, outputs: null, ort: null, name: null };
    const positional = [];
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (!a.startsWith("--")) { positional.push(a); continue; }
        const key = a.slice(2);
        if (!(key in opts) || i + 1 >= argv.length) usage();
        opts[key] = argv[++i];
    }
    for (const key of ["iterations", "warmup", "threads"]) {
        if (!/^[0-9]+$/.test(String(opts[key]))) usage();
        opts[key] = Number(opts[key]);
    }
    if (positional.length !== 2 || !opts.ort || opts.threads < 1 || opts.iterations < 1) usage();
    [opts.model, opts.caseDir] = positional;
    opts.name ??= path.basename(path.dirname(path.resolve(opts.model)));
    return opts;
}

function readNpy(file) {
    const bytes = fs.readFileSync(file);
    if (bytes.toString("latin1", 0, 6) !== "\x93NUMPY") throw new Error(`${file}: not a .npy file`);
    const major = bytes[6];
    const headerLen = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
    const start = major === 1 ? 10 : 12;
    const header = bytes.toString("latin1", start, start + headerLen);
    const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
    const fortran = /'fortran_order':\s*True/.test(header);
    const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
    if (!descr || shapeText === undefined || !(descr in NPY_TYPES) || fortran)
        throw new Error(`${file}: unsupported .npy header ${header.trim()}`);
    const dims = shapeText.split(",").map((s) => s.trim()).filter((s) => s).map(Number);
    const [type, Array_] = NPY_TYPES[descr];
    const count = dims.reduce((a, b) => a * b, 1);
    // Copy into a fresh buffer: the data offset need not be aligned for the element type.
    const data = new Array_(count);
    const raw = bytes.subarray(start + headerLen, start + headerLen + count * Array_.BYTES_PER_ELEMENT);
    new Uint8Array(data.buffer).set(raw);
    return { type, data, dims };
}

function writeNpy(file, tensor) {
    const descr = Object.keys(NPY_TYPES).find((d) => NPY_TYPES[d][0] === tensor.type);
    if (!descr) throw new Error(`output of type ${tensor.type} cannot be written as .npy`);
    const shape = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(", ");
    let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape}), }`;
    header += " ".repeat(63 - ((10 + header.length) % 64)) + "\n"; // data starts at a multiple of 64
    const prefix = Buffer.alloc(10);
    prefix.write("\x93NUMPY", 0, "latin1");
    prefix[6] = 1;
    prefix.writeUInt16LE(header.length, 8);
    const data = tensor.data;
    fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, "latin1"),
        Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

// TensorProto .pb inputs become .npy through onnx's own reader, in a temporary folder.
function pbToNpy(pbFiles) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ort-bench-"));
    const script = "import sys, numpy as np, onnx\nfrom onnx import numpy_helper\n" +
        "for src, dst in zip(sys.argv[1::2], sys.argv[2::2]):\n" +
        "    t = onnx.TensorProto(); t.ParseFromString(open(src, 'rb').read())\n" +
        "    np.save(dst, numpy_helper.to_array(t))\n";
    const args = pbFiles.flatMap((f, i) => [f, path.join(dir, `input_${i}.npy`)]);
    execFileSync(process.env.KILN_PYTHON || "/usr/bin/python3", ["-c", script, ...args], { stdio: "inherit" });
    return dir;
}

function readInputs(caseDir, count) {
    const npy = (i) => path.join(caseDir, `input_${i}.npy`);
    const pb = (i) => path.join(caseDir, `input_${i}.pb`);
    const indices = [...Array(count).keys()];
    if (indices.every((i) => fs.existsSync(npy(i)))) return indices.map((i) => readNpy(npy(i)));
    if (indices.every((i) => fs.existsSync(pb(i)))) {
        const dir = pbToNpy(indices.map(pb));
        try { return indices.map((i) => readNpy(path.join(dir, `input_${i}.npy`))); }
        finally { fs.rmSync(dir, { recursive: true, force: true }); }
    }
    throw new Error(`${caseDir} lacks input_<i>.npy or input_<i>.pb for the model's ${count} input(s)`);
}

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    const record = { runner: "ort", model: opts.name, threads: opts.threads };
    try {
        const ort = createRequire(import.meta.url)(path.resolve(opts.ort));
        record.ort = ort.env.versions.node;
        const session = await ort.InferenceSession.create(opts.model, {
            executionProviders: ["cpu"], graphOptimizationLevel: "all", executionMode: "sequential",
            intraOpNumThreads: opts.threads, interOpNumThreads: 1,
        });
        const inputs = readInputs(opts.caseDir, session.inputNames.length);
        const feeds = {};
        session.inputNames.forEach((name, i) => {
            feeds[name] = new ort.Tensor(inputs[i].type, inputs[i].data, inputs[i].dims);
        });
        let outputs;
        for (let i = 0; i < opts.warmup; i++) outputs = await session.run(feeds);
        const times = [];
        for (let i = 0; i < opts.iterations; i++) {
            const t0 = performance.now();
            outputs = await session.run(feeds);
            times.push(performance.now() - t0);
        }
        if (opts.outputs) {
            fs.mkdirSync(opts.outputs, { recursive: true });
            session.outputNames.forEach((name, j) => writeNpy(path.join(opts.outputs, `output_${j}.npy`), outputs[name]));
        }
        const sorted = [...times].sort((a, b) => a - b);
        const mid = sorted.length >> 1;
        Object.assign(record, {
            warmup: opts.warmup, iterations: opts.iterations, min_ms: sorted[0],
            median_ms: sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2,
            mean_ms: times.reduce((a, b) => a + b, 0) / times.length, max_ms: sorted[sorted.length - 1],
        });
        await session.release();
    } catch (e) {
        record.error = String(e?.message ?? e).split("\n")[0];
    }
    console.log(JSON.stringify(record));
    process.exitCode = "error" in record ? 1 : 0;
}

main();
