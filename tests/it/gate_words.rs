//! The gate's other layers: intent analysis, sanitize and validate,
//! context gathering against fake probes, the FTS5 index over sample
//! `.desktop` files (a real SQLite file in a temp dir), and proposals
//! made without a model.

use std::path::PathBuf;

use partner::gate::context::{Context, PackageState, Probe, Similar, UnitState, gather};
use partner::gate::index::{Index, desktop_apps, parse_desktop};
use partner::gate::propose::{model_prompt, propose};
use partner::gate::{IntentKind, Risk, analyze, extract};

#[test]
fn intents_are_read_without_the_references_misreadings() {
    let cases: &[(&str, Option<IntentKind>, Option<&str>)] = &[
        ("run gimp", Some(IntentKind::Run), Some("gimp")),
        (
            "please run my firefox",
            Some(IntentKind::Run),
            Some("firefox"),
        ),
        (
            "can you launch the chrome",
            Some(IntentKind::Run),
            Some("google-chrome-stable"),
        ),
        ("open vs code", Some(IntentKind::Run), Some("code")),
        ("install gimp", Some(IntentKind::Install), Some("gimp")),
        ("intall gimp", Some(IntentKind::Install), Some("gimp")),
        ("instal node", Some(IntentKind::Install), Some("nodejs")),
        (
            "get rid of firefox",
            Some(IntentKind::Remove),
            Some("firefox"),
        ),
        (
            "uninstall postgres",
            Some(IntentKind::Remove),
            Some("postgresql"),
        ),
        (
            "start up nginx",
            Some(IntentKind::ServiceStart),
            Some("nginx"),
        ),
        ("start nginx", Some(IntentKind::ServiceStart), Some("nginx")),
        (
            "restart nginx please",
            Some(IntentKind::ServiceStart),
            Some("nginx"),
        ),
        (
            "stop the nginx service",
            Some(IntentKind::ServiceStop),
            Some("nginx"),
        ),
        (
            "shut down apache2",
            Some(IntentKind::ServiceStop),
            Some("apache2"),
        ),
        ("enable ssh", Some(IntentKind::ServiceConfig), Some("ssh")),
        (
            "disable bluetooth",
            Some(IntentKind::ServiceConfig),
            Some("bluetooth"),
        ),
        ("update my system", Some(IntentKind::Update), None),
        ("upgrade everything", Some(IntentKind::Update), None),
        ("is nginx running", Some(IntentKind::Check), Some("nginx")),
        (
            "check disk space",
            Some(IntentKind::Check),
            Some("disk space"),
        ),
        (
            "install a picture editor",
            Some(IntentKind::Install),
            Some("picture editor"),
        ),
        ("picture editor", None, Some("picture editor")),
        ("", None, None),
    ];
    for (text, intent, target) in cases {
        let got = analyze(text);
        assert_eq!(got.intent, *intent, "{text:?}");
        assert_eq!(got.target.as_deref(), *target, "{text:?}");
    }
}

#[test]
fn sanitize_and_validate_take_the_command_out() {
    let cases: &[(&str, Option<&str>)] = &[
        ("```bash\nls -la\n```", Some("ls -la")),
        ("```\n$ df -h\n```", Some("df -h")),
        ("`ls -la`", Some("ls -la")),
        ("Command: ls -la", Some("ls -la")),
        ("Run: `df -h`", Some("df -h")),
        ("$ ls -la", Some("ls -la")),
        ("> ls", Some("ls")),
        ("ada@box:~/src$ git status", Some("git status")),
        ("bash script.sh", Some("bash script.sh")),
        ("```sh\nbash script.sh\n```", Some("bash script.sh")),
        ("To list files, use ls -la\nls -la", Some("ls -la")),
        ("To list files, use `ls -la`.", Some("ls -la")),
        (
            "Here is the command:\n```bash\nsudo apt install gimp\n```\nIt installs GIMP.",
            Some("sudo apt install gimp"),
        ),
        ("**ls -la**", Some("ls -la")),
        // Outside a fence, the first command line only (the rest is
        // explanation); a fenced block is one script.
        ("df -h\nuptime", Some("df -h")),
        ("```bash\ncd /tmp\nls -la\n```", Some("cd /tmp\nls -la")),
        (
            "ls -la\nLists all files including hidden ones",
            Some("ls -la"),
        ),
        ("NONE", None),
        ("none.", None),
        ("**None**", None),
        ("`NONE`", None),
        ("NONE\nNo safe command does that.", None),
        ("What do you want me to do?", None),
        ("The quick brown fox jumps over the lazy dog.", None),
        ("I cannot do that.", None),
        ("Sure, here you go", None),
        ("", None),
        (
            "this is a long piece of prose that goes on and on without any shell operators in it at all really",
            None,
        ),
    ];
    for (text, want) in cases {
        let got = extract(text);
        assert_eq!(got.command.as_deref(), *want, "{text:?} → {got:?}");
        if want.is_none() {
            assert!(
                got.reason.is_some(),
                "{text:?} says why there is no command"
            );
        }
    }
    // The explanation keeps the words around the command.
    let got =
        extract("Here is the command:\n```bash\nsudo apt install gimp\n```\nIt installs GIMP.");
    assert!(got.explanation.contains("It installs GIMP."), "{got:?}");
}

/// A machine described by hand.
#[derive(Default)]
struct Fake {
    executables: Vec<&'static str>,
    installed: Vec<&'static str>,
    available: Vec<&'static str>,
    units: Vec<(&'static str, &'static str)>,
    similar: Vec<Similar>,
    /// No package manager answers.
    silent: bool,
}

impl Probe for Fake {
    fn executable(&self, name: &str) -> Option<PathBuf> {
        self.executables
            .contains(&name)
            .then(|| PathBuf::from(format!("/usr/bin/{name}")))
    }
    fn package(&self, name: &str) -> Option<PackageState> {
        if self.silent {
            return None;
        }
        Some(if self.installed.contains(&name) {
            PackageState::Installed("1.0".into())
        } else if self.available.contains(&name) {
            PackageState::Available("2.0".into())
        } else {
            PackageState::Unknown
        })
    }
    fn unit(&self, name: &str) -> Option<UnitState> {
        self.units
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, state)| UnitState {
                active: state.to_string(),
                enabled: "enabled".into(),
            })
    }
    fn similar(&self, _words: &str) -> Vec<Similar> {
        self.similar.clone()
    }
}

#[test]
fn context_is_gathered_and_written_in_one_format() {
    let fake = Fake {
        executables: vec!["gimp"],
        installed: vec!["gimp"],
        units: vec![("nginx", "inactive")],
        ..Fake::default()
    };
    let ctx = gather(&fake, "gimp");
    assert_eq!(ctx.lines()[0], "- gimp: executable at /usr/bin/gimp");
    assert!(
        ctx.for_model()
            .starts_with("System Context:\n- gimp: executable at /usr/bin/gimp")
    );
    let nginx = gather(&fake, "nginx");
    assert!(
        nginx
            .lines()
            .contains(&"- nginx service: inactive, enabled at boot".to_string()),
        "{:?}",
        nginx.lines()
    );
    // A probe that cannot answer adds nothing (fails open).
    let silent = Fake {
        silent: true,
        ..Fake::default()
    };
    let ctx = gather(&silent, "gimp");
    assert_eq!(ctx.package, None);
    assert_eq!(ctx.lines(), vec!["- gimp: nothing found on this system"]);
    // Names that a probe's command line could misread are not probed.
    assert_eq!(
        gather(&fake, "--help"),
        Context {
            target: "--help".into(),
            ..Context::default()
        }
    );
}

#[test]
fn common_intents_become_proposals_without_a_model() {
    let installed = Fake {
        executables: vec!["gimp", "apt"],
        installed: vec!["gimp"],
        ..Fake::default()
    };
    let p = propose("run gimp", &installed);
    assert_eq!(p.command.as_deref(), Some("gimp"));
    let missing = Fake {
        executables: vec!["apt"],
        available: vec!["gimp"],
        ..Fake::default()
    };
    let p = propose("run gimp", &missing);
    assert_eq!(p.command.as_deref(), Some("sudo apt install gimp"));
    assert_eq!(
        p.safety.unwrap().risk,
        Risk::High,
        "sudo raises an install to high"
    );
    let nginx = Fake {
        units: vec![("nginx", "inactive")],
        ..Fake::default()
    };
    assert_eq!(
        propose("start nginx", &nginx).command.as_deref(),
        Some("sudo systemctl start nginx")
    );
    assert_eq!(
        propose("start up nginx", &nginx).command.as_deref(),
        Some("sudo systemctl start nginx")
    );
    let active = Fake {
        units: vec![("nginx", "active")],
        ..Fake::default()
    };
    assert_eq!(
        propose("start nginx", &active).command,
        None,
        "already active"
    );
    // By description: the index's application.
    let described = Fake {
        similar: vec![Similar {
            by_meaning: false,
            name: "GNU Image Manipulation Program".into(),
            command: Some("gimp".into()),
            description: "Create images and edit photographs".into(),
            whole: true,
        }],
        ..Fake::default()
    };
    assert_eq!(
        propose("open a picture editor", &described)
            .command
            .as_deref(),
        Some("gimp")
    );
    // Nothing known: the model proposes, given the context.
    let p = propose("make my wallpaper blue", &Fake::default());
    assert_eq!(p.command, None);
    let prompt = model_prompt("make my wallpaper blue", p.context.as_ref());
    assert!(
        prompt.contains("Request: make my wallpaper blue") && prompt.contains("/shell"),
        "{prompt}"
    );
    // A command on this system is taken as it is.
    let shell = Fake {
        executables: vec!["df"],
        ..Fake::default()
    };
    let p = propose("df -h", &shell);
    assert_eq!(p.command.as_deref(), Some("df -h"));
    assert_eq!(p.safety.unwrap().risk, Risk::Low);
}

const GIMP: &str = "[Desktop Entry]\nType=Application\nName=GNU Image Manipulation Program\nGenericName=Image Editor\nComment=Create images and edit photographs\nKeywords=GIMP;graphic;design;illustration;painting;picture;\nExec=/usr/bin/gimp-2.10 %U\n";
const KRITA: &str = "[Desktop Entry]\nType=Application\nName=Krita\nGenericName=Digital Painting\nComment=Digital painting and picture editing\nExec=krita %F\n";
const HIDDEN: &str = "[Desktop Entry]\nType=Application\nName=Hidden Tool\nComment=picture editor\nNoDisplay=true\nExec=hidden\n";
const TERMINAL: &str =
    "[Desktop Entry]\nType=Application\nName=Terminal\nComment=Use the command line\nExec=xterm\n";

#[test]
fn the_index_finds_programs_by_what_they_do() {
    let dir = tempfile::tempdir().unwrap();
    let apps = dir.path().join("applications");
    std::fs::create_dir_all(&apps).unwrap();
    for (name, text) in [
        ("gimp", GIMP),
        ("krita", KRITA),
        ("hidden", HIDDEN),
        ("xterm", TERMINAL),
    ] {
        std::fs::write(apps.join(format!("{name}.desktop")), text).unwrap();
    }
    std::fs::write(apps.join("notes.txt"), "not a desktop file").unwrap();
    assert!(
        parse_desktop("hidden", HIDDEN).is_none(),
        "NoDisplay entries are left out"
    );
    let found = desktop_apps(std::slice::from_ref(&apps));
    assert_eq!(found.len(), 3);
    let path = dir.path().join("index.sqlite");
    let mut index = Index::open(&path).unwrap();
    assert!(index.is_empty());
    index
        .fill(
            &found,
            &[("inkscape".into(), "vector-based drawing program".into())],
        )
        .unwrap();
    // A second process reads what the first wrote.
    drop(index);
    let index = Index::open(&path).unwrap();
    let hits = index.search("picture editor", 5, None).unwrap();
    let names: Vec<&str> = hits.iter().map(|s| s.name.as_str()).collect();
    assert!(names.len() >= 2, "{names:?}");
    assert!(
        names[..2].contains(&"GNU Image Manipulation Program") && names[..2].contains(&"Krita"),
        "{names:?}"
    );
    assert_eq!(
        hits.iter()
            .find(|s| s.name == "Krita")
            .unwrap()
            .command
            .as_deref(),
        Some("krita")
    );
    // Porter stemming: "drawings" finds "drawing".
    assert_eq!(
        index.search("drawings", 5, None).unwrap()[0].name,
        "inkscape"
    );
    // Quotes and operators in a query are words, not FTS syntax.
    assert!(index.search("\"picture\" OR NEAR(", 5, None).is_ok());
    assert!(index.search("", 5, None).unwrap().is_empty());
}

#[test]
fn an_approved_command_runs_bounded() {
    use partner::gate::process::run_shell;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    // SECRET_TOKEN would pass only if the environment were not scrubbed.
    let ran = run_shell(
        "pwd; echo ${SECRET_TOKEN:-scrubbed}; echo oops >&2; exit 3",
        dir.path(),
        Duration::from_secs(10),
        4096,
        None,
    )
    .unwrap();
    assert_eq!(ran.status, Some(3));
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(
        std::fs::canonicalize(lines[0]).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
    assert_eq!(lines[1], "scrubbed");
    assert_eq!(ran.stderr.trim(), "oops");
    // Output is capped.
    let big = run_shell(
        "yes | head -c 100000",
        dir.path(),
        Duration::from_secs(10),
        1000,
        None,
    )
    .unwrap();
    assert_eq!(big.stdout.len(), 1000);
    assert!(big.truncated);
    // A command that outlives its time is killed, with what it started.
    let start = Instant::now();
    let slow = run_shell(
        "sleep 30 & sleep 30",
        dir.path(),
        Duration::from_millis(300),
        1000,
        None,
    )
    .unwrap();
    assert!(slow.timed_out && slow.status.is_none());
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // Cancelled from outside.
    let (tx, rx) = tokio::sync::watch::channel(false);
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        tx.send(true).unwrap();
    });
    let cancelled = run_shell(
        "sleep 30",
        dir.path(),
        Duration::from_secs(20),
        1000,
        Some(&rx),
    )
    .unwrap();
    t.join().unwrap();
    assert!(cancelled.cancelled);
}

#[test]
fn a_command_is_told_from_a_request_that_starts_with_a_programs_name() {
    let machine = Fake {
        executables: vec!["install", "kill", "df", "apt", "make"],
        available: vec!["gimp"],
        ..Fake::default()
    };
    let cases: &[(&str, Option<&str>)] = &[
        // `install` is a program, but "install gimp" asks for an install.
        ("install gimp", Some("sudo apt install gimp")),
        (
            "install -m 644 a.conf /tmp/b.conf",
            Some("install -m 644 a.conf /tmp/b.conf"),
        ),
        ("kill 1234", Some("kill 1234")),
        ("df -h", Some("df -h")),
        // Options or paths make a command even when the program is unknown.
        ("mycmd --flag", Some("mycmd --flag")),
        ("./build.sh", Some("./build.sh")),
        // A program's name followed by words spoken to someone.
        ("make my wallpaper blue", None),
        // A program that is not a service: its processes are stopped.
        ("kill make", Some("pkill -x make")),
        ("start make", None),
    ];
    for (text, want) in cases {
        assert_eq!(
            propose(text, &machine).command.as_deref(),
            *want,
            "{text:?}"
        );
    }
}
