//! Pattern Lisp tools inside partner, against a real SQLite file: a tool
//! runs on its caller's blocks, its output state becomes ordinary memory
//! writes that the permission engine checks (a denied write is denied, one
//! needing the partner waits), a broken tool is an error for the agent,
//! not a crash, and replay re-runs the recorded tool and checks its output.

use crate::support;

use partner::engine::exec::{ActionStatus, ExecConfig};
use partner::policy::Policy;
use partner::store::memory::backend::Memory;
use partner::store::memory::{BlockKind, BlockPermission};
use support::{Rig, rig_with};

const CHECKLIST: &str = r#";; Ticks an item of the todo block: /checklist ITEM
(define (tick line item)
  (if (and (string-contains? line "[ ]") (string-contains? line item))
      (string-join (string-split line "[ ]") "[x]")
      line))
(lambda (state)
  (let ((item (subject-get state args:)))
    (pattern-set-elements state
      (map (lambda (b)
             (if (string=? (subject-get b label:) "todo")
                 (subject-set b value:
                   (string-join (map (lambda (l) (tick l item)) (string-split (subject-get b value:) "\n")) "\n"))
                 b))
           (pattern-elements state)))))
"#;

const TALLY: &str = r#";; Counts the lines of every block into a new block, tally
(lambda (state)
  (let* ((blocks (pattern-elements state))
         (count (lambda (b) (length (string-split (subject-get b value:) "\n"))))
         (total (fold + 0 (map count blocks))))
    (pattern-set-elements state
      (append blocks (list (subject-set (subject-set (pattern {}) label: "tally") value: (number->string total)))))))
"#;

fn tool_rig(policy: &str) -> Rig {
    let dir = tempfile::tempdir().unwrap().keep();
    std::fs::write(dir.join("checklist.plisp"), CHECKLIST).unwrap();
    std::fs::write(dir.join("tally.plisp"), TALLY).unwrap();
    std::fs::write(dir.join("broken.plisp"), "(lambda (s) s)").unwrap();
    let config = ExecConfig {
        tools: Some(dir),
        ..ExecConfig::default()
    };
    let mut r = rig_with(Policy::from_toml(policy).unwrap(), config);
    // Each tool that loads gets a verb of its own, as a constellation's
    // config gives it.
    let mut table = r.exec.registry().table().clone();
    let warnings = partner::engine::exec::tools::add_tool_verbs(r.exec.tools(), &mut table);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("tool broken is not loaded"),
        "{warnings:?}"
    );
    r.exec.set_verbs(table).unwrap();
    r.block(
        "ada",
        "todo",
        BlockKind::Working,
        BlockPermission::ReadWrite,
        "- [ ] milk\n- [ ] eggs",
    );
    r.block(
        "ada",
        "notes",
        BlockKind::Working,
        BlockPermission::ReadOnly,
        "keep",
    );
    r
}

fn value(r: &Rig, label: &str) -> String {
    (r.exec.store().sqlite().unwrap().conn())
        .block("ada", label)
        .unwrap()
        .unwrap()
        .value
}

#[test]
fn a_tool_edits_memory_through_its_state() {
    let r = tool_rig("default = \"allow\"");
    let report = r.one("ada", "/tool checklist milk");
    assert_eq!(report.status, ActionStatus::Executed, "{report:?}");
    assert_eq!(report.children.len(), 1, "one write: {report:?}");
    assert_eq!(
        report.children[0].status,
        ActionStatus::Executed,
        "{:?}",
        report.children[0]
    );
    assert_eq!(value(&r, "todo"), "- [x] milk\n- [ ] eggs");
    assert!(
        report.text.contains("tool checklist ran: it writes todo"),
        "{}",
        report.text
    );
    // The run is traced with its input state, output state and changes,
    // and the write is traced as the agent's own action.
    let (records, _) = r.exec.trace().unwrap();
    let run = records
        .iter()
        .find(|x| x.canonical.starts_with("/tool"))
        .unwrap();
    assert!(
        run.data["tool"]["input"]
            .as_str()
            .unwrap()
            .contains("[ ] milk")
    );
    assert!(
        run.data["tool"]["output"]
            .as_str()
            .unwrap()
            .contains("[x] milk")
    );
    assert_eq!(run.data["tool"]["changes"][0]["Write"]["label"], "todo");
    let write = records
        .iter()
        .find(|x| x.canonical.starts_with("/recall patch todo"))
        .unwrap();
    assert_eq!(write.agent, "ada");
    assert!(write.memory.is_some());

    // The tool's own verb does the same.
    let report = r.one("ada", "/checklist eggs");
    assert_eq!(report.status, ActionStatus::Executed, "{report:?}");
    assert_eq!(value(&r, "todo"), "- [x] milk\n- [x] eggs");

    // A tool may add a block (stored as archival), never delete one.
    let report = r.one("ada", "/tool tally");
    assert_eq!(report.children.len(), 1, "{report:?}");
    assert_eq!(value(&r, "tally"), "3");
}

#[test]
fn a_write_the_agent_may_not_make_is_denied_or_waits() {
    // notes is read-only: a tool that rewrites it is refused like /recall would be.
    let r = tool_rig("default = \"allow\"");
    let dir = r.exec.tools().dir().unwrap().to_path_buf();
    std::fs::write(
        dir.join("scribble.plisp"),
        "(lambda (state) (pattern-set-elements state (map (lambda (b) (subject-set b value: \"scribbled\")) (pattern-elements state))))",
    )
    .unwrap();
    let report = r.one("ada", "/tool scribble");
    assert_eq!(report.status, ActionStatus::Executed);
    let by_label = |l: &str| {
        report
            .children
            .iter()
            .find(|c| c.canonical.contains(l))
            .unwrap()
    };
    assert_eq!(
        by_label("notes").status,
        ActionStatus::Denied,
        "{:?}",
        by_label("notes")
    );
    assert_eq!(by_label("todo").status, ActionStatus::Executed);
    assert_eq!(value(&r, "notes"), "keep");
    assert_eq!(value(&r, "todo"), "scribbled");

    // Under a policy that asks for memory writes, the write waits in the queue.
    let r = tool_rig("default = \"allow\"\n[[rules]]\nverb = \"recall\"\ndecide = \"ask\"");
    let report = r.one("ada", "/checklist milk");
    assert_eq!(
        report.children[0].status,
        ActionStatus::Pending,
        "{report:?}"
    );
    assert_eq!(
        value(&r, "todo"),
        "- [ ] milk\n- [ ] eggs",
        "nothing written yet"
    );
    let id = report.children[0].request.as_ref().unwrap().id.clone();
    r.exec
        .decide(
            &id,
            partner::policy::Decision::ApproveOnce,
            &partner::policy::Authority::Partner,
            None,
        )
        .unwrap();
    assert_eq!(value(&r, "todo"), "- [x] milk\n- [ ] eggs");
}

#[test]
fn broken_or_missing_tools_are_errors_for_the_agent() {
    let r = tool_rig("default = \"allow\"");
    let report = r.one("ada", "/tool broken");
    assert_eq!(report.status, ActionStatus::Failed);
    assert!(
        report.text.contains("must be named `state`"),
        "{}",
        report.text
    );
    let report = r.one("ada", "/tool nothere");
    assert_eq!(report.status, ActionStatus::Failed);
    assert!(
        report
            .text
            .contains("no tool `nothere`; the tools are checklist, tally"),
        "{}",
        report.text
    );
    let dir = r.exec.tools().dir().unwrap().to_path_buf();
    std::fs::write(
        dir.join("spin.plisp"),
        "(define (spin n) (spin n)) (lambda (state) (spin 0))",
    )
    .unwrap();
    let report = r.one("ada", "/tool spin");
    assert_eq!(report.status, ActionStatus::Failed);
    assert!(report.text.contains("step-budget"), "{}", report.text);
    std::fs::write(dir.join("bad.plisp"), "(lambda (state) 5)").unwrap();
    assert!(r.one("ada", "/tool bad").text.contains("not a pattern"));
    // A tool edited on disk is loaded again.
    std::fs::write(dir.join("bad.plisp"), ";; fixed\n(lambda (state) state)").unwrap();
    assert_eq!(r.one("ada", "/tool bad").status, ActionStatus::Executed);
    assert_eq!(value(&r, "todo"), "- [ ] milk\n- [ ] eggs");
    // Failed runs replay too: the failing tool was kept with the failure.
    let v =
        partner::engine::exec::replay::verify(&partner::store::trace::TraceInput::Database(r.db()))
            .unwrap();
    assert_eq!(v.divergence, None, "{v:?}");
}

#[test]
fn replay_reruns_the_recorded_tool_and_checks_its_output() {
    let r = tool_rig("default = \"allow\"");
    r.one("ada", "/checklist milk");
    r.one("ada", "/tool tally");
    // Today's file differs from the recorded one: replay runs the recorded one.
    let dir = r.exec.tools().dir().unwrap().to_path_buf();
    std::fs::write(dir.join("checklist.plisp"), "(lambda (state) state)").unwrap();
    let v =
        partner::engine::exec::replay::verify(&partner::store::trace::TraceInput::Database(r.db()))
            .unwrap();
    assert_eq!(v.divergence, None, "{v:?}");
    assert!(v.redone >= 4, "{v:?}");

    // A record whose output state was tampered with diverges.
    let (mut records, _) = r.exec.trace().unwrap();
    let run = records
        .iter_mut()
        .find(|x| x.canonical.starts_with("/checklist"))
        .unwrap();
    run.data["replay_check"] = serde_json::Value::String("[:State]".into());
    let verbs = r.exec.registry().table().clone();
    let (_, divergence) =
        partner::engine::exec::replay::verify_records_with(&records, Some(&verbs)).unwrap();
    let divergence = divergence.expect("diverges");
    assert!(divergence.what.contains("check"), "{divergence:?}");
}

#[test]
fn a_constellation_teaches_its_tools_and_reports_broken_ones() {
    use partner::dialect::VerbSpec;
    use partner::engine::exec::registry::Registry;
    use partner::runtime::ConstellationConfig;
    use partner::runtime::prompt::{PromptInputs, system_prompt};

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tools")).unwrap();
    std::fs::write(dir.path().join("tools/checklist.plisp"), CHECKLIST).unwrap();
    std::fs::write(dir.path().join("tools/broken.plisp"), "(lambda (a b) a)").unwrap();
    std::fs::write(
        dir.path().join("script.toml"),
        "[agents.ada]\npulses = []\n",
    )
    .unwrap();
    let config_text = "name = \"t\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\n";
    std::fs::write(dir.path().join("partner.toml"), config_text).unwrap();
    let config = ConstellationConfig::load(&dir.path().join("partner.toml")).unwrap();
    assert_eq!(
        config.exec.tools.as_deref(),
        Some(dir.path().join("tools").as_path())
    );
    let warnings = config.warnings();
    assert!(
        warnings.iter().any(|w| w.contains("tool broken is not loaded") && w.contains("exactly one parameter")),
        "{warnings:?}"
    );
    let registry = Registry::new(config.verbs.clone()).unwrap();
    let verbs: Vec<&VerbSpec> = registry.verbs_for(false);
    let prompt = system_prompt(&PromptInputs {
        agent: "ada",
        partner: "Sam",
        blocks: &[],
        intentions: &[],
        pulse: std::time::Duration::from_secs(600),
        verbs: &verbs,
        profile: Default::default(),
        format: Default::default(),
        now: 0,
    });
    assert!(prompt.contains("/checklist"), "{prompt}");
    assert!(
        prompt.contains("Ticks an item of the todo block"),
        "the tool's doc is taught: {prompt}"
    );
    assert!(prompt.contains("/tool"), "{prompt}");
    assert!(!prompt.contains("broken"), "{prompt}");

    // Without tools, /tool is not taught at all.
    let plain = Registry::new(partner::dialect::VerbTable::builtin()).unwrap();
    assert!(
        !plain
            .verbs_for(false)
            .iter()
            .any(|v| v.verb.name() == "tool")
    );
}

#[test]
fn a_tool_that_stops_loading_is_reported_once() {
    let r = tool_rig("default = \"allow\"");
    let shelf = r.exec.tools();
    assert!(
        shelf.new_problems().is_empty(),
        "the first look only notes what is there"
    );
    let dir = shelf.dir().unwrap().to_path_buf();
    std::fs::write(dir.join("tally.plisp"), "(lambda (state)").unwrap();
    let news = shelf.new_problems();
    assert_eq!(news.len(), 1, "{news:?}");
    assert!(news[0].starts_with("tool tally is not loaded:"), "{news:?}");
    assert!(shelf.new_problems().is_empty(), "said once");
    std::fs::write(dir.join("tally.plisp"), TALLY).unwrap();
    assert!(shelf.new_problems().is_empty());
    assert_eq!(r.one("ada", "/tally").status, ActionStatus::Executed);
}

#[test]
fn a_crafted_tool_in_a_trace_is_an_error_under_replay_not_an_abort() {
    let r = tool_rig("default = \"allow\"");
    r.one("ada", "/tool tally");
    let (mut records, _) = r.exec.trace().unwrap();
    let run = records
        .iter_mut()
        .find(|x| x.data["tool"]["source"].is_string())
        .unwrap();
    // The recorded source replaced: a state whose elements are the state
    // before, twice, forty times over, around a 1 MiB string.
    run.data["tool"]["source"] = serde_json::Value::String(
        "(lambda (state) \
           (define (dbl s n) (if (= n 0) s (dbl (string-append s s) (- n 1)))) \
           (define (grow p n) (if (= n 0) p (grow (pattern-with {} (list p p)) (- n 1)))) \
           (grow (pattern {text: (dbl \"x\" 20)}) 40))"
            .into(),
    );
    let verbs = r.exec.registry().table().clone();
    let (_, divergence) =
        partner::engine::exec::replay::verify_records_with(&records, Some(&verbs)).unwrap();
    let divergence = divergence.expect("the crafted tool does not give the recorded output");
    let said = format!("{divergence:?}");
    assert!(said.contains("size"), "{said}");
}
