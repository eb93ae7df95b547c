//! Pattern Lisp the language: every special form and primitive, with the
//! error each misuse gives (kind, the form or primitive, the argument).

use partner::lisp::{ErrorKind, Lisp};

/// The printed value of `src`, or the error as `partner lisp` prints it.
fn run(src: &str) -> String {
    match Lisp::new().eval_str(src) {
        Ok(v) => v.to_string(),
        Err(e) => format!("error: {e}"),
    }
}

fn kind(src: &str) -> ErrorKind {
    Lisp::new()
        .eval_str(src)
        .expect_err(&format!("{src} should fail"))
        .kind
}

#[test]
fn the_reader_reads_every_literal() {
    assert_eq!(run("6"), "6");
    assert_eq!(run("-2.5"), "-2.5");
    assert_eq!(run("3.0"), "3.0");
    assert_eq!(run(r#""a\"b\\c\n\u{e9}""#), r#""a\"b\\c\né""#);
    assert_eq!(run("#t"), "#t");
    assert_eq!(run("#f"), "#f");
    assert_eq!(run("name:"), "name:");
    assert_eq!(run("'x"), "\"x\"", "a quoted symbol is a string");
    assert_eq!(run("'(a 1 \"b\")"), "(\"a\" 1 \"b\")");
    assert_eq!(run("{name: \"Ada\" age: 30}"), "{age: 30 name: \"Ada\"}");
    assert_eq!(run("#{3 1 2 1}"), "#{1 2 3}");
    assert_eq!(run("; a comment\n(+ 1 ; inside\n 2)"), "3");
    assert_eq!(run("'()"), "()");
}

#[test]
fn reader_errors_give_line_and_column() {
    assert_eq!(
        run("(+ 1\n 2"),
        "error: parse: 1:1: unclosed bracket: expected `)`"
    );
    assert_eq!(run("\n\n   )"), "error: parse: 3:4: unexpected `)`");
    assert!(run("\"abc").starts_with("error: parse: 1:1: unclosed string"));
    assert_eq!(run("(1 2))"), "error: parse: 1:6: unexpected `)`");
    assert!(run("#x").starts_with("error: parse: 1:1:"));
    assert!(run("99999999999999999999").contains("64 bits"));
    assert_eq!(kind(&"(".repeat(10_000)), ErrorKind::Parse);
}

#[test]
fn special_forms() {
    assert_eq!(run("((lambda (x y) (+ x y)) 2 3)"), "5");
    assert_eq!(run("(if (< 1 2) 'yes 'no)"), "\"yes\"");
    assert_eq!(run("(let ((x 2) (y 3)) (* x y))"), "6");
    assert_eq!(
        run("(let ((x 1)) (let ((x 2) (y x)) y))"),
        "1",
        "let binds in parallel"
    );
    assert_eq!(run("(let* ((x 2) (y (* x 10))) y)"), "20");
    assert_eq!(
        run(
            "(letrec ((ev (lambda (n) (if (= n 0) #t (od (- n 1))))) (od (lambda (n) (if (= n 0) #f (ev (- n 1)))))) (list (ev 10) (od 10)))"
        ),
        "(#t #f)"
    );
    assert_eq!(run("(begin 1 2 3)"), "3");
    assert_eq!(run("(define x 5) (* x x)"), "25");
    assert_eq!(run("(quote (a b))"), "(\"a\" \"b\")");
    assert_eq!(run("(cond ((= 1 2) 'a) ((= 1 1) 'b) (else 'c))"), "\"b\"");
    assert_eq!(run("(cond ((= 1 2) 'a) (else 'c))"), "\"c\"");
    assert_eq!(run("(and #t #t)"), "#t");
    assert_eq!(
        run("(and #t #f (car '()))"),
        "#f",
        "and stops at the first #f"
    );
    assert_eq!(
        run("(or #f #t (car '()))"),
        "#t",
        "or stops at the first #t"
    );
    assert_eq!(run("(and)"), "#t");
    assert_eq!(run("(or)"), "#f");
}

#[test]
fn a_defined_function_calls_itself() {
    assert_eq!(
        run("(define fact (lambda (n) (if (= n 0) 1 (* n (fact (- n 1)))))) (fact 10)"),
        "3628800"
    );
    assert_eq!(
        run("(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))) (fib 15)"),
        "610"
    );
    // Inner defines see each other.
    assert_eq!(
        run(
            "(define (f n) (define (ev n) (if (= n 0) #t (od (- n 1)))) (define (od n) (if (= n 0) #f (ev (- n 1)))) (ev n)) (f 7)"
        ),
        "#f"
    );
}

#[test]
fn special_form_errors() {
    assert_eq!(
        run("(if 1 2 3)"),
        "error: type-mismatch: if: argument 1: expected a boolean condition, got integer 1"
    );
    assert_eq!(kind("(if #t 1)"), ErrorKind::ArityMismatch);
    assert_eq!(kind("(lambda (1) 2)"), ErrorKind::Parse);
    assert_eq!(kind("(lambda (x x) 2)"), ErrorKind::Parse);
    assert_eq!(kind("(let (x 1) x)"), ErrorKind::Parse);
    assert_eq!(kind("(cond (1 2))"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(cond (else 1) (#t 2))"), ErrorKind::Parse);
    assert_eq!(kind("(and 1)"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(+ 1 (define x 2))"), ErrorKind::Parse);
    assert_eq!(
        run("nope"),
        "error: undefined-variable: `nope` is not defined"
    );
    assert_eq!(
        run("((lambda (x) x))"),
        "error: arity-mismatch: #<closure (x)>: expected 1 argument, got 0"
    );
    assert_eq!(kind("(5 1)"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(begin)"), ErrorKind::Parse);
}

#[test]
fn arithmetic_and_comparison() {
    assert_eq!(run("(+ 1 2 3)"), "6");
    assert_eq!(run("(+)"), "0");
    assert_eq!(run("(- 10 4 3)"), "3");
    assert_eq!(run("(- 5)"), "-5");
    assert_eq!(run("(* 2 3 4)"), "24");
    assert_eq!(run("(/ 7 2)"), "3", "integer division truncates");
    assert_eq!(run("(/ -7 2)"), "-3");
    assert_eq!(run("(/ 5.0 2)"), "2.5");
    assert_eq!(run("(+ 1 0.5)"), "1.5");
    assert_eq!(run("(mod -7 3)"), "2");
    assert_eq!(run("(abs -4)"), "4");
    assert_eq!(run("(min 3 1 2)"), "1");
    assert_eq!(run("(max 3 1 2.5)"), "3");
    assert_eq!(
        run("(* 9223372036854775807 2)"),
        "18446744073709552000.0",
        "overflow becomes a decimal"
    );
    assert_eq!(
        run("(/ 1 0)"),
        "error: division-by-zero: /: division by zero"
    );
    assert_eq!(kind("(/ 1.5 0.0)"), ErrorKind::DivisionByZero);
    assert_eq!(kind("(mod 1 0)"), ErrorKind::DivisionByZero);
    assert_eq!(
        run("(+ 1 \"a\")"),
        "error: type-mismatch: +: argument 2: expected a number, got string \"a\""
    );
    assert_eq!(
        run("(/ 1)"),
        "error: arity-mismatch: /: expected at least 2 arguments, got 1"
    );
    assert_eq!(run("(= 1 1.0)"), "#t");
    assert_eq!(run("(= '(1 2) (list 1 2))"), "#t");
    assert_eq!(run("(< 1 2 3)"), "#t");
    assert_eq!(run("(< 1 3 2)"), "#f");
    assert_eq!(run("(> 3 2)"), "#t");
    assert_eq!(run("(<= 2 2)"), "#t");
    assert_eq!(run("(>= 1 2)"), "#f");
    assert_eq!(run("(/= 1 2)"), "#t");
    assert_eq!(run("(/= 1 1)"), "#f");
    assert_eq!(run("(not #f)"), "#t");
    assert_eq!(kind("(< 1 \"a\")"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(not 0)"), ErrorKind::TypeMismatch);
}

#[test]
fn strings() {
    assert_eq!(
        run("(string-append \"hello\" \" \" \"world\")"),
        "\"hello world\""
    );
    assert_eq!(run("(string-length \"héllo\")"), "5");
    assert_eq!(run("(substring \"hello\" 1 3)"), "\"el\"");
    assert_eq!(run("(substring \"hello\" 0 5)"), "\"hello\"");
    assert_eq!(
        run("(substring \"hello\" 2 9)"),
        "error: type-mismatch: substring: argument 3: expected an end from 2 to 5, got integer 9"
    );
    assert_eq!(kind("(substring \"hello\" 3 2)"), ErrorKind::TypeMismatch);
    assert_eq!(run("(string=? \"a\" \"a\")"), "#t");
    assert_eq!(run("(string-contains? \"hello\" \"ell\")"), "#t");
    assert_eq!(
        run("(string-split \"a,b,,c\" \",\")"),
        "(\"a\" \"b\" \"\" \"c\")"
    );
    assert_eq!(run("(string-join '(\"a\" \"b\") \"-\")"), "\"a-b\"");
    assert_eq!(run("(number->string 42)"), "\"42\"");
    assert_eq!(run("(number->string 2.5)"), "\"2.5\"");
    assert_eq!(run("(string->number \"12\")"), "12");
    assert_eq!(run("(string->number \"x\")"), "#f");
    assert_eq!(kind("(string-append \"a\" 1)"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(string-join '(1) \",\")"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(string-length)"), ErrorKind::ArityMismatch);
}

#[test]
fn lists() {
    assert_eq!(run("(cons 1 '(2 3))"), "(1 2 3)");
    assert_eq!(run("(car '(1 2))"), "1");
    assert_eq!(run("(cdr '(1 2))"), "(2)");
    assert_eq!(run("(list)"), "()");
    assert_eq!(run("(length '(1 2 3))"), "3");
    assert_eq!(run("(append '(1) '(2 3) '())"), "(1 2 3)");
    assert_eq!(run("(reverse '(1 2 3))"), "(3 2 1)");
    assert_eq!(run("(nth '(a b c) 1)"), "\"b\"");
    assert_eq!(run("(map (lambda (x) (* x x)) '(1 2 3))"), "(1 4 9)");
    assert_eq!(run("(filter (lambda (x) (> x 1)) '(1 2 3))"), "(2 3)");
    assert_eq!(run("(fold + 0 '(1 2 3))"), "6");
    assert_eq!(
        run("(fold (lambda (acc x) (cons x acc)) '() '(1 2 3))"),
        "(3 2 1)"
    );
    assert_eq!(run("(empty? '())"), "#t");
    assert_eq!(run("(empty? '(1))"), "#f");
    assert_eq!(
        run("(car '())"),
        "error: type-mismatch: car: argument 1: expected a non-empty list, got list ()"
    );
    assert_eq!(kind("(cdr 5)"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(nth '(1) 1)"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(cons 1 2)"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(map 5 '(1))"), ErrorKind::TypeMismatch);
    assert_eq!(
        run("(filter (lambda (x) x) '(1))"),
        "error: type-mismatch: filter: argument 1: the predicate must return a boolean, got integer 1"
    );
    assert_eq!(kind("(fold + 0)"), ErrorKind::ArityMismatch);
}

#[test]
fn maps_and_sets() {
    let m = "(define m {name: \"Ada\" age: 30 tags: {lang: \"en\"}})";
    let with = |e: &str| run(&format!("{m} {e}"));
    assert_eq!(with("(get m name:)"), "\"Ada\"");
    assert_eq!(with("(get m email: \"none\")"), "\"none\"");
    assert_eq!(with("(get m email:)"), "()");
    assert_eq!(with("(get-in m '(tags: lang:))"), "\"en\"");
    assert_eq!(with("(get-in m '(tags: x:) 0)"), "0");
    assert_eq!(
        with("(assoc m age: 31 city: \"Paris\")"),
        "{age: 31 city: \"Paris\" name: \"Ada\" tags: {lang: \"en\"}}"
    );
    assert_eq!(with("(dissoc m tags: age:)"), "{name: \"Ada\"}");
    assert_eq!(
        with("(get (update m age: (lambda (a) (+ a 1))) age:)"),
        "31"
    );
    assert_eq!(with("(keys m)"), "(age: name: tags:)");
    assert_eq!(run("(vals {a: 1 b: 2})"), "(1 2)");
    assert_eq!(run("(hash-map \"x\" 1 y: 2)"), "{\"x\" 1 y: 2}");
    assert_eq!(run("(hash-set 2 1 2)"), "#{1 2}");
    assert_eq!(with("(contains? m name:)"), "#t");
    assert_eq!(run("(contains? #{1 2} 3)"), "#f");
    assert_eq!(run("(set-union #{1 2} #{2 3})"), "#{1 2 3}");
    assert_eq!(run("(set-intersection #{1 2} #{2 3})"), "#{2}");
    assert_eq!(run("(set-difference #{1 2 3} #{2})"), "#{1 3}");
    assert_eq!(run("m"), "error: undefined-variable: `m` is not defined");
    assert_eq!(kind("(get '(1) 0)"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(hash-map 1)"), ErrorKind::ArityMismatch);
    assert_eq!(kind("(hash-set '(1))"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(set-union #{1} '(2))"), ErrorKind::TypeMismatch);
}

#[test]
fn patterns() {
    assert_eq!(run("(pattern \"hello\")"), "(:String {text: \"hello\"})");
    assert_eq!(run("(pattern-value (pattern 42))"), "42");
    assert_eq!(
        run("(pattern-value (pattern {name: \"Ada\"}))"),
        "{name: \"Ada\"}"
    );
    let tree = "(define t (pattern-with \"root\" (list (pattern-with \"a\" (list (pattern \"a1\") (pattern \"a2\"))) (pattern \"b\"))))";
    let with = |e: &str| run(&format!("{tree} {e}"));
    assert_eq!(with("(pattern-length t)"), "2");
    assert_eq!(with("(pattern-size t)"), "5");
    assert_eq!(with("(pattern-depth t)"), "2");
    assert_eq!(run("(pattern-depth (pattern 1))"), "0");
    assert_eq!(
        with("(pattern-values t)"),
        "(\"root\" \"a\" \"a1\" \"a2\" \"b\")",
        "pre-order"
    );
    assert_eq!(
        with("(map pattern-value (pattern-elements t))"),
        "(\"a\" \"b\")"
    );
    assert_eq!(
        with("(pattern-value (pattern-find t (lambda (p) (string=? (pattern-value p) \"a2\"))))"),
        "\"a2\""
    );
    assert_eq!(
        with("(pattern-value (pattern-find t (lambda (p) #t)))"),
        "\"root\"",
        "the root is searched"
    );
    assert_eq!(with("(pattern-find t (lambda (p) #f))"), "()");
    assert_eq!(
        with("(pattern-any? t (lambda (p) (= (pattern-length p) 2)))"),
        "#t"
    );
    assert_eq!(
        with("(pattern-all? t (lambda (p) (string? (pattern-value p))))"),
        "#t"
    );
    assert_eq!(
        with("(pattern-all? t (lambda (p) (= (pattern-length p) 0)))"),
        "#f"
    );
    assert_eq!(
        with("(pattern-any? t (lambda (p) 1))"),
        "error: type-mismatch: pattern-any?: argument 1: the predicate must return a boolean, got integer 1"
    );
    assert_eq!(
        kind(&format!("{tree} (pattern-find t (lambda (a b) #t))")),
        ErrorKind::TypeMismatch
    );
    assert_eq!(kind("(pattern-value 5)"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(pattern-with 1 '(2))"), ErrorKind::TypeMismatch);
    assert_eq!(kind("(pattern (lambda (x) x))"), ErrorKind::TypeMismatch);
    // Building a new pattern leaves the old one as it was.
    assert_eq!(
        with("(define u (subject-set t \"n\" 1)) (list (subject-get t n: 0) (subject-get u n:))"),
        "(0 1)"
    );
}

#[test]
fn subjects_are_read_and_written_through_patterns() {
    let state = "(define s (subject-with-labels (subject-with-id (pattern {label: \"todo\" value: \"- [ ] milk\"}) \"b1\") '(\"Block\")))";
    let with = |e: &str| run(&format!("{state} {e}"));
    assert_eq!(with("(subject-labels s)"), "#{\"Block\"}");
    assert_eq!(with("(subject-id s)"), "\"b1\"");
    assert_eq!(with("(subject-get s label:)"), "\"todo\"");
    assert_eq!(with("(subject-get s \"missing\" \"?\")"), "\"?\"");
    assert_eq!(
        with("(subject-get (subject-set s value: \"- [x] milk\") value:)"),
        "\"- [x] milk\""
    );
    assert_eq!(with("(subject-get (subject-set s n: '(1 2)) n:)"), "(1 2)");
    assert_eq!(
        kind(&format!("{state} (subject-set s v: {{a: 1}})")),
        ErrorKind::TypeMismatch
    );
}

#[test]
fn deep_recursion_runaway_programs_and_huge_values_stop_cleanly() {
    assert_eq!(
        run("(define (sum n) (if (= n 0) 0 (+ n (sum (- n 1))))) (sum 10000)"),
        "50005000",
        "10,000 deep does not overflow"
    );
    assert_eq!(
        run("(define (count n) (if (= n 0) 'done (count (- n 1)))) (count 100000)"),
        "\"done\"",
        "tail calls loop"
    );
    let e = Lisp::new()
        .eval_str("(define (sum n) (if (= n 0) 0 (+ n (sum (- n 1))))) (sum 10000000)")
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::StepBudget, "{e}");
    let mut lisp = Lisp::new();
    lisp.budget = 100_000;
    let e = lisp
        .eval_str("(define (loop n) (loop (+ n 1))) (loop 0)")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "step-budget: stopped after 100000 steps (the budget)"
    );
    assert_eq!(
        kind("(define (dbl s n) (if (= n 0) s (dbl (string-append s s) (- n 1)))) (dbl \"ab\" 64)"),
        ErrorKind::StepBudget
    );
    assert_eq!(
        kind("(define (dbl s n) (if (= n 0) s (dbl (append s s) (- n 1)))) (dbl '(1) 64)"),
        ErrorKind::StepBudget
    );
    assert_eq!(
        kind("(define (nest v n) (if (= n 0) v (nest (list v) (- n 1)))) (nest 1 5000)"),
        ErrorKind::StepBudget
    );
    assert_eq!(
        kind(
            "(define (wrap f n) (if (= n 0) f (wrap (lambda (x) (f x)) (- n 1)))) (wrap car 5000)"
        ),
        ErrorKind::StepBudget
    );
}

#[test]
fn definitions_last_across_evaluations() {
    let mut lisp = Lisp::new();
    lisp.eval_str("(define (sq x) (* x x))").unwrap();
    assert_eq!(lisp.eval_str("(sq 7)").unwrap().to_string(), "49");
    let sq = lisp.global("sq").unwrap().clone();
    assert_eq!(
        lisp.call(&sq, vec![partner::lisp::Value::Int(3)])
            .unwrap()
            .to_string(),
        "9"
    );
}

/// Every primitive in the table refuses the wrong number of arguments
/// with an arity error naming it, and (unless it takes anything) a closure
/// where it expects data with a type error naming it and the argument.
#[test]
fn every_primitive_checks_its_arity_and_types() {
    // Primitives for which a closure is a fine argument in every place.
    const TAKE_ANYTHING: &[&str] = &[
        "list",
        "=",
        "/=",
        "list?",
        "number?",
        "string?",
        "boolean?",
        "keyword?",
        "map?",
        "set?",
        "pattern?",
        "procedure?",
        "value->pattern",
    ];
    let mut checked = 0;
    for p in partner::lisp::prims::all() {
        let call = |n: usize| {
            let args = vec!["(lambda (x) x)"; n].join(" ");
            Lisp::new().eval_str(&format!("({} {args})", p.name))
        };
        if p.min > 0 {
            let e = call(p.min - 1).expect_err(p.name);
            assert_eq!(e.kind, ErrorKind::ArityMismatch, "{}: {e}", p.name);
            assert!(
                e.message.starts_with(&format!("{}: expected", p.name)),
                "{e}"
            );
        }
        if let Some(max) = p.max {
            let e = call(max + 1).expect_err(p.name);
            assert_eq!(e.kind, ErrorKind::ArityMismatch, "{}: {e}", p.name);
        }
        if !TAKE_ANYTHING.contains(&p.name) {
            // hash-map takes pairs.
            let n = if p.name == "hash-map" {
                2
            } else {
                p.min.max(1)
            };
            let e = call(n).expect_err(p.name);
            assert_eq!(e.kind, ErrorKind::TypeMismatch, "{}: {e}", p.name);
            assert!(
                e.message.starts_with(&format!("{}: argument ", p.name)),
                "{}: {e}",
                p.name
            );
            assert!(e.message.contains("expected"), "{e}");
        }
        checked += 1;
    }
    assert!(checked >= 80, "{checked} primitives");
}
