// The llama.cpp oracle: loads a GGUF with node-llama-cpp (installed by
// tests/llm/install_oracle.sh; its prebuilt CPU llama.cpp, nothing built or downloaded) and
// prints JSON on stdout, one object per run:
//
//   node tests/llm/oracle.mjs tokenize FILE TEXT          {"ids": [...], "ids_special": [...]}
//        ids: tokenize(text, false) (no BOS, special-token text not parsed)
//        ids_special: tokenize(text, true) (special-token text parsed), with BOS first when
//        the model adds it (node-llama-cpp's tokenize never adds BOS itself)
//   node tests/llm/oracle.mjs tokenize FILE --file TEXTFILE       the same for a file's text
//   node tests/llm/oracle.mjs logits FILE --tokens 1,2,3 [--out OUT.json]
//   node tests/llm/oracle.mjs logits FILE --tokens-file IDS.json [--out OUT.json]
//        {"n_vocab": V, "logits": [[...V floats], ...]}: row i the logits after tokens 0..i
//        (teacher-forced, the tokens taken as given: no BOS added)
//   node tests/llm/oracle.mjs greedy FILE --prompt TEXT [-n 64]
//        {"prompt_ids": [...], "tokens": [...], "text": "..."}: the prompt tokenized as
//        ids_special above (BOS first), then n argmax tokens (lowest id on a tie), stopping at EOS
//   node tests/llm/oracle.mjs perplexity FILE --file TEXTFILE [--context N]
//        {"tokens": T, "chunks": C, "scored": S, "nll": ..., "perplexity": ...}: the text
//        tokenized as ids_special (BOS first), cut into consecutive chunks of N tokens (default:
//        the model's context length), each evaluated from an empty cache; token j > 0 of a
//        chunk is scored with the logits after tokens 0..j-1 of that chunk
//
// The cache folder is $KILN_LLM_ORACLE_DIR, default build/llm-oracle beside this repo's tests.
// Evaluation runs on 1 thread, so that logits do not depend on the machine's core count.
import {dirname, join, resolve} from "node:path";
import {readFileSync, writeFileSync, existsSync} from "node:fs";
import {fileURLToPath, pathToFileURL} from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const cacheDir = resolve(process.env.KILN_LLM_ORACLE_DIR ?? join(here, "..", "..", "build", "llm-oracle"));
const entry = join(cacheDir, "node_modules", "node-llama-cpp", "dist", "index.js");

function fail(message) {
    process.stderr.write(`oracle: ${message}\n`);
    process.exit(1);
}

function usage() {
    fail("usage: oracle.mjs tokenize FILE (TEXT | --file F) | logits FILE (--tokens a,b,c | --tokens-file F.json) [--out F] | greedy FILE --prompt TEXT [-n N] | perplexity FILE --file F [--context N]");
}

function option(args, name, fallback) {
    const i = args.indexOf(name);
    if (i < 0) return fallback;
    if (i + 1 >= args.length) usage();
    return args[i + 1];
}

async function loadLlama() {
    if (!existsSync(entry))
        fail(`node-llama-cpp is not installed in ${cacheDir} (run tests/llm/install_oracle.sh ${cacheDir})`);
    const {getLlama, LlamaLogLevel} = await import(pathToFileURL(entry).href);
    const llama = await getLlama({
        build: "never",
        gpu: false,
        progressLogs: false,
        logLevel: LlamaLogLevel.error,
        logger: (level, message) => process.stderr.write(`llama.cpp ${level}: ${message}\n`),
    });
    return llama;
}

// llama.cpp's logits as an array indexed by token id; the map holds the whole vocabulary.
function logitsRow(map) {
    const row = new Array(map.size).fill(null);
    for (const [token, value] of map) row[token] = value;
    if (row.some((v) => v === null)) fail("llama.cpp returned logits for part of the vocabulary only");
    return row;
}

async function newSequence(model, length) {
    const contextSize = Math.max(32, length);
    const context = await model.createContext({
        contextSize, batchSize: contextSize, sequences: 1, threads: {ideal: 1, min: 1},
    });
    return {context, sequence: context.getSequence()};
}

async function teacherForcedLogits(model, tokens) {
    const {context, sequence} = await newSequence(model, tokens.length);
    const input = tokens.map((t) => [t, {generateNext: {logits: true}}]);
    const out = await sequence.controlledEvaluate(input);
    const rows = out.map((o, i) => {
        if (!o?.next?.logits) fail(`no logits for position ${i}`);
        return logitsRow(o.next.logits);
    });
    await context.dispose();
    return {n_vocab: rows[0].length, logits: rows};
}

function tokenizeWithSpecials(model, text) {
    const ids = Array.from(model.tokenize(text, true));
    const bos = model.tokens.bos;
    return model.tokens.shouldPrependBosToken && bos !== null ? [bos, ...ids] : ids;
}

function argmax(row) {
    let best = 0;
    for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
    return best;
}

async function greedy(model, prompt, n) {
    const promptIds = tokenizeWithSpecials(model, prompt);
    const {context, sequence} = await newSequence(model, promptIds.length + n);
    const eos = model.tokens.eos;
    const generated = [];
    let input = promptIds.map((t, i) => (i === promptIds.length - 1 ? [t, {generateNext: {logits: true}}] : t));
    for (let step = 0; step < n; step++) {
        const out = await sequence.controlledEvaluate(input);
        const last = out[input.length - 1];
        if (!last?.next?.logits) fail(`no logits at generation step ${step}`);
        const next = argmax(logitsRow(last.next.logits));
        generated.push(next);
        if (next === eos) break;
        input = [[next, {generateNext: {logits: true}}]];
    }
    await context.dispose();
    return {prompt_ids: promptIds, tokens: generated, text: model.detokenize(generated)};
}

function logSoftmaxAt(row, index) {
    let max = -Infinity;
    for (const v of row) if (v > max) max = v;
    let sum = 0;
    for (const v of row) sum += Math.exp(v - max);
    return row[index] - max - Math.log(sum);
}

async function perplexity(model, text, contextLength) {
    const tokens = tokenizeWithSpecials(model, text);
    const {context, sequence} = await newSequence(model, contextLength);
    let nll = 0, scored = 0, chunks = 0;
    for (let start = 0; start + 1 < tokens.length; start += contextLength) {
        const chunk = tokens.slice(start, start + contextLength);
        if (chunk.length < 2) break;
        await sequence.clearHistory();
        const out = await sequence.controlledEvaluate(chunk.map((t) => [t, {generateNext: {logits: true}}]));
        for (let j = 1; j < chunk.length; j++) {
            if (!out[j - 1]?.next?.logits) fail(`no logits at position ${start + j - 1}`);
            nll -= logSoftmaxAt(logitsRow(out[j - 1].next.logits), chunk[j]);
            scored++;
        }
        chunks++;
    }
    await context.dispose();
    return {tokens: tokens.length, chunks, scored, nll, perplexity: Math.exp(nll / scored)};
}

async function main() {
    const [command, file, ...rest] = process.argv.slice(2);
    if (!command || !file) usage();
    if (!existsSync(file)) fail(`no such file: ${file}`);
    const llama = await loadLlama();
    const vocabOnly = command === "tokenize";
    const model = await llama.loadModel({modelPath: resolve(file), gpuLayers: 0, vocabOnly});
    let result;
    if (command === "tokenize") {
        const textFile = option(rest, "--file", null);
        const text = textFile !== null ? readFileSync(textFile, "utf8") : rest[0];
        if (text === undefined) usage();
        result = {ids: Array.from(model.tokenize(text, false)), ids_special: tokenizeWithSpecials(model, text)};
    } else if (command === "logits") {
        const list = option(rest, "--tokens", null);
        const listFile = option(rest, "--tokens-file", null);
        const tokens = list !== null ? list.split(",").filter((s) => s !== "").map(Number)
            : listFile !== null ? JSON.parse(readFileSync(listFile, "utf8")) : usage();
        if (tokens.length === 0 || tokens.some((t) => !Number.isInteger(t))) fail("--tokens: a list of token ids");
        result = await teacherForcedLogits(model, tokens);
    } else if (command === "greedy") {
        const prompt = option(rest, "--prompt", null);
        if (prompt === null) usage();
        result = await greedy(model, prompt, Number(option(rest, "-n", "64")));
    } else if (command === "perplexity") {
        const textFile = option(rest, "--file", null);
        if (textFile === null) usage();
        const contextLength = Number(option(rest, "--context", String(model.trainContextSize)));
        if (!Number.isInteger(contextLength) || contextLength < 2) fail("--context: an integer of at least 2");
        result = await perplexity(model, readFileSync(textFile, "utf8"), contextLength);
    } else {
        usage();
    }
    const json = JSON.stringify(result);
    const out = option(rest, "--out", null);
    if (out !== null) writeFileSync(out, json + "\n");
    else process.stdout.write(json + "\n");
    await model.dispose();
    await llama.dispose();
}

await main();
