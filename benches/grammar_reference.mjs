// The reference's side of the grammar bench: TypeAgent's own engine under
// Node, timed on the same grammars and inputs as partner, in turn with it.
//
//   node benches/grammar_reference.mjs ENGINE_DIR GRAMMAR_ROOT CASES_JSON
//
// CASES_JSON: [[name, grammar file under GRAMMAR_ROOT, request, prefix], ...].
// Loads every grammar, prints one JSON line a case (how many parses its
// request gives), then `ready`. Then reads lines `NAME match` or
// `NAME complete` and answers each with one batch's nanoseconds per match
// or per forward completion (a batch: as many calls as take at least
// 20 ms, counted the first time a case is asked), so that the bench can
// time the two engines batch by batch, one right after the other, while
// the machine is in the same state.
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";

const [engineDir, root, casesJson] = process.argv.slice(2);
const engine = await import(path.resolve(engineDir, "typeagent-action-grammar.mjs"));
engine.registerBuiltInEntities();

// Calls a batch of `f` takes: doubled until they take at least 20 ms.
function batchSize(f) {
    let n = 1;
    for (;;) {
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < n; i++) f();
        if (Number(process.hrtime.bigint() - t0) > 2e7) return n;
        n *= 2;
    }
}

function batchNs(f, n) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) f();
    return Number(process.hrtime.bigint() - t0) / n;
}

const cases = new Map();
for (const [name, file, request, prefix] of JSON.parse(casesJson)) {
    const abs = path.resolve(root, file);
    const grammar = engine.loadGrammarRules(abs, fs.readFileSync(abs, "utf8"));
    const matches = engine.matchGrammar(grammar, request).length;
    cases.set(name, {
        match: () => engine.matchGrammar(grammar, request),
        complete: () => engine.matchGrammarCompletion(grammar, prefix, 0, "forward"),
    });
    console.log(JSON.stringify({ name, matches }));
}
console.log("ready");

const sizes = new Map();
for await (const line of readline.createInterface({ input: process.stdin })) {
    const [name, what] = line.trim().split(" ");
    const run = cases.get(name)?.[what];
    if (!run) {
        console.log(JSON.stringify({ error: `no ${what} for ${name}` }));
        continue;
    }
    const key = `${name} ${what}`;
    if (!sizes.has(key)) sizes.set(key, batchSize(run));
    console.log(JSON.stringify({ ns: batchNs(run, sizes.get(key)) }));
}
