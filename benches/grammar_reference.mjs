// The reference's side of the grammar bench: TypeAgent's own engine under
// Node, timed on the same grammars and inputs as partner in the same run.
//
//   node benches/grammar_reference.mjs ENGINE_DIR GRAMMAR_ROOT CASES_JSON
//
// CASES_JSON: [[name, grammar file under GRAMMAR_ROOT, request, prefix], ...].
// Prints one JSON line a case: the median nanoseconds per match and per
// forward completion (15 batches, each of at least 20 ms), and how many
// parses the request gave.
import fs from "node:fs";
import path from "node:path";

const [engineDir, root, casesJson] = process.argv.slice(2);
const engine = await import(path.resolve(engineDir, "typeagent-action-grammar.mjs"));
engine.registerBuiltInEntities();

function medianNs(f) {
    let n = 1;
    for (;;) {
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < n; i++) f();
        if (Number(process.hrtime.bigint() - t0) > 2e7) break;
        n *= 2;
    }
    const per = [];
    for (let b = 0; b < 15; b++) {
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < n; i++) f();
        per.push(Number(process.hrtime.bigint() - t0) / n);
    }
    per.sort((a, b) => a - b);
    return per[7];
}

for (const [name, file, request, prefix] of JSON.parse(casesJson)) {
    const abs = path.resolve(root, file);
    const grammar = engine.loadGrammarRules(abs, fs.readFileSync(abs, "utf8"));
    const matches = engine.matchGrammar(grammar, request).length;
    const match_ns = medianNs(() => engine.matchGrammar(grammar, request));
    const complete_ns = medianNs(() => engine.matchGrammarCompletion(grammar, prefix, 0, "forward"));
    console.log(JSON.stringify({ name, matches, match_ns, complete_ns }));
}
