//! `partner lisp`, the contract other tools depend on: how each kind of
//! value prints, `--gram`, errors as one `error: KIND: message` line with
//! exit 1, files, and `check-tool` / `run-tool`; all from the real binary.

use crate::support;

use std::path::Path;

use support::partner_in;

/// (exit status, standard output, standard error).
fn lisp(args: &[&str]) -> (i32, String, String) {
    let args: Vec<&str> = std::iter::once("lisp")
        .chain(args.iter().copied())
        .collect();
    let (code, out, err) = partner_in(Path::new("."), &args, "");
    (code.unwrap(), out, err)
}

fn value(expr: &str) -> String {
    let (code, out, err) = lisp(&["-e", expr]);
    assert_eq!(code, 0, "{expr}: {err}");
    out.trim_end_matches('\n').to_string()
}

#[test]
fn values_print_as_the_contract_says() {
    for (expr, printed) in [
        ("(+ 1 2 3)", "6"),
        ("(/ 5.0 2)", "2.5"),
        ("\"hello world\"", "\"hello world\""),
        ("\"a\\\"b\\n\"", "\"a\\\"b\\n\""),
        ("(= 1 1)", "#t"),
        ("(= 1 2)", "#f"),
        ("(list 1 2 3)", "(1 2 3)"),
        ("'()", "()"),
        ("name:", "name:"),
        ("{name: \"Alice\" age: 30}", "{age: 30 name: \"Alice\"}"),
        ("#{3 1 2}", "#{1 2 3}"),
        ("(lambda (x) x)", "#<closure (x)>"),
        ("(lambda (a b) a)", "#<closure (a b)>"),
        ("+", "#<primitive +>"),
        ("(pattern \"hello\")", "(:String {text: \"hello\"})"),
    ] {
        assert_eq!(value(expr), printed, "{expr}");
    }
}

#[test]
fn several_forms_run_in_order_in_one_environment() {
    let (code, out, _) = lisp(&[
        "-e",
        "(define x 20)",
        "-e",
        "(define (f y) (+ x y))",
        "-e",
        "(f 1)",
    ]);
    assert_eq!((code, out.as_str()), (0, "21\n"));
    let (code, out, _) = lisp(&["-e", "(define x 1) (define y 2) (+ x y)"]);
    assert_eq!((code, out.as_str()), (0, "3\n"));
}

#[test]
fn gram_prints_any_value_serialized() {
    let (code, out, _) = lisp(&["--gram", "-e", "42"]);
    assert_eq!((code, out.trim()), (0, "(:Number {value: 42})"));
    let (code, out, _) = lisp(&["--gram", "-e", "(list 1 \"a\" #t)"]);
    assert_eq!(
        (code, out.trim()),
        (
            0,
            "[:List | (:Number {value: 1}), (:String {text: \"a\"}), (:Bool {value: true})]"
        )
    );
    let (code, out, _) = lisp(&["--gram", "-e", "+"]);
    assert_eq!((code, out.trim()), (0, "(:Primitive {name: \"+\"})"));
    let (code, out, _) = lisp(&["--gram", "-e", "(let ((k 2)) (lambda (x) (* x k)))"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(":Closure") && out.contains("params") && out.contains("\"k\""),
        "{out}"
    );
}

/// A 1 MiB string, then a list of it doubled twelve times.
const SHARED_LIST: &str = "(define (dbl s n) (if (= n 0) s (dbl (string-append s s) (- n 1)))) \
     (define (grow l n) (if (= n 0) l (grow (append l l) (- n 1)))) \
     (grow (list (dbl \"x\" 20)) 12)";

/// Closures that each capture the one before twice, written out whole.
const SHARED_CLOSURES: &str = "(define (dbl s n) (if (= n 0) s (dbl (string-append s s) (- n 1)))) \
     (define big (dbl \"x\" 20)) \
     (define (wrap f n) (if (= n 0) f (wrap (let ((a f) (b f)) (lambda () (list a b))) (- n 1)))) \
     (value->pattern (wrap (lambda () big) 40))";

/// Patterns whose elements are the pattern before, twice.
const SHARED_PATTERNS: &str = "(define (dbl s n) (if (= n 0) s (dbl (string-append s s) (- n 1)))) \
     (define (grow p n) (if (= n 0) p (grow (pattern-with {} (list p p)) (- n 1)))) \
     (grow (pattern {text: (dbl \"x\" 20)}) 40)";

#[test]
fn errors_are_one_line_with_their_kind_and_exit_1() {
    for (expr, kind) in [
        ("(+ 1", "parse"),
        ("nope", "undefined-variable"),
        ("(+ 1 \"a\")", "type-mismatch"),
        ("((lambda (x) x) 1 2)", "arity-mismatch"),
        ("(/ 1 0)", "division-by-zero"),
        ("(define (f n) (f n)) (f 0)", "step-budget"),
        // A thousand references to one long string are small in memory and
        // 4 GiB written out: measured by what they expand to.
        (SHARED_LIST, "size"),
        (SHARED_CLOSURES, "size"),
        (SHARED_PATTERNS, "size"),
    ] {
        let (code, out, err) = lisp(&["-e", expr]);
        assert_eq!(code, 1, "{expr}");
        assert!(out.is_empty(), "{expr}: {out}");
        assert_eq!(err.lines().count(), 1, "{expr}: {err}");
        assert!(
            err.starts_with(&format!("error: {kind}: ")),
            "{expr}: {err}"
        );
    }
    let (code, _, err) = lisp(&["--steps", "1000", "-e", "(define (f n) (f n)) (f 0)"]);
    assert_eq!(code, 1);
    assert!(err.contains("stopped after 1000 steps"), "{err}");
}

#[test]
fn files_tools_and_states() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let prog = file(
        "prog.plisp",
        "; sums\n(define (sum xs) (fold + 0 xs))\n(sum '(1 2 3 4))\n",
    );
    let (code, out, _) = lisp(&[&prog]);
    assert_eq!((code, out.as_str()), (0, "10\n"));

    let good = file(
        "upper.plisp",
        ";; Upper-cases every block.\n(lambda (state) (pattern-set-elements state (map (lambda (b) (subject-set b value: (string-upcase (subject-get b value: \"\")))) (pattern-elements state))))",
    );
    let (code, out, _) = lisp(&["check-tool", &good]);
    assert_eq!(
        (code, out.trim()),
        (0, "ok: upper: Upper-cases every block.")
    );
    for (name, text, says) in [
        (
            "a.plisp",
            "(+ 1 2)",
            "error: tool: 1:1: not a lambda: the last form must be (lambda (state) …)",
        ),
        (
            "b.plisp",
            "(lambda (x y) x)",
            "error: tool: 1:1: a tool takes exactly one parameter, `state`; this lambda takes 2",
        ),
        (
            "c.plisp",
            "(lambda (s) s)",
            "error: tool: 1:1: the parameter must be named `state`, not `s`",
        ),
    ] {
        let (code, _, err) = lisp(&["check-tool", &file(name, text)]);
        assert_eq!(code, 1, "{name}");
        assert_eq!(err.trim(), says, "{name}");
    }

    let state = file(
        "state.gram",
        "[:State | (:Block {label: \"todo\", value: \"milk\"})]",
    );
    let (code, out, err) = lisp(&["run-tool", &good, "--state", &state]);
    assert_eq!(code, 0, "{err}");
    // The output is Gram the state reader takes back.
    let got = partner::lisp::tool::state_from_gram(&out).unwrap();
    let want = partner::lisp::tool::state_from_gram(
        "[:State | (:Block {label: \"todo\", value: \"MILK\"})]",
    )
    .unwrap();
    assert_eq!(got, want, "{out}");
    let bad_state = file("bad.gram", "[:State | ");
    let (code, _, err) = lisp(&["run-tool", &good, "--state", &bad_state]);
    assert_eq!(code, 1);
    assert!(err.starts_with("error: parse: "), "{err}");
}

#[test]
fn the_repl_edits_lines_keeps_history_and_reads_forms_across_lines() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let command = format!(
        "cd {} && env XDG_DATA_HOME={} HOME={} TERM=xterm-256color {} lisp; echo exited-$?; exec sh",
        dir.path().display(),
        dir.path().display(),
        dir.path().display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    let tmux = support::tmux::Tmux::start("repl", &command);
    tmux.wait("the prompt", Duration::from_secs(10), |s| s.contains("λ>"));
    tmux.keys(&["(define x 5)", "Enter"]);
    tmux.keys(&["(* x 2)", "Enter"]);
    tmux.wait("the value", Duration::from_secs(10), |s| {
        s.lines().any(|l| l.trim() == "10")
    });
    // A form may span lines: the REPL waits for the brackets to close.
    tmux.keys(&["(+ 1", "Enter"]);
    tmux.wait("the continuation prompt", Duration::from_secs(10), |s| {
        s.contains("..")
    });
    tmux.keys(&["41)", "Enter"]);
    tmux.wait("the sum", Duration::from_secs(10), |s| {
        s.lines().any(|l| l.trim() == "42")
    });
    // Errors are shown and the REPL goes on.
    tmux.keys(&["(car 1)", "Enter"]);
    tmux.wait("the error", Duration::from_secs(10), |s| {
        s.contains("error: type-mismatch: car")
    });
    // Line editing: Up brings back the last line; Home moves to its start.
    tmux.keys(&[
        "Up", "Home", "Right", "Right", "Right", "BSpace", "d", "Enter",
    ]);
    tmux.wait("the edited line", Duration::from_secs(10), |s| {
        s.contains("error: type-mismatch: cdr")
    });
    tmux.keys(&["C-d"]);
    tmux.wait("the exit", Duration::from_secs(10), |s| {
        s.contains("exited-0")
    });
    let history = std::fs::read_to_string(dir.path().join("partner/lisp-history.txt"))
        .or_else(|_| {
            // The data directory's name is the platform's.
            let found = walk(dir.path())
                .into_iter()
                .find(|p| p.ends_with("lisp-history.txt"));
            std::fs::read_to_string(found.expect("a history file"))
        })
        .unwrap();
    assert!(history.contains("(define x 5)"), "{history}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The `check-tool` and `run-tool` lines of `docs/lisp.md`, run as written from
/// the repository: the sample state is there, and the tool ticks it.
#[test]
fn the_readmes_tool_commands_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("docs/lisp.md")).unwrap();
    let lines: Vec<&str> = readme
        .lines()
        .filter(|l| {
            l.starts_with("partner lisp check-tool") || l.starts_with("partner lisp run-tool")
        })
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for line in lines {
        let code = line.split('#').next().unwrap();
        let args: Vec<&str> = code.split_whitespace().skip(1).collect();
        let (status, out, err) = partner_in(root, &args, "");
        assert_eq!(status, Some(0), "{line}: {err}");
        if line.contains("run-tool") {
            assert!(out.contains("build the binaries (done)"), "{out}");
            assert!(out.contains("announce the launch\""), "{out}");
        }
    }
}
