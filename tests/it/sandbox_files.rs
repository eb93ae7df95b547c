//! The reproductions of issue 49 in the file system, end to end with the
//! real binary: the home as working directory, build tools' grants, a
//! link planted in the working directory, the environment, what runs
//! later outside (a repository's config and hooks, the constellation's
//! own files), a database named by a relative path, and a machine without
//! namespaces. Each try is approved by the partner; none may reach what
//! the sandbox keeps.

use std::process::{Command, Stdio};

use crate::support;
use crate::support::places::{ask_and_approve, fake_home, partner_at, place, record_of};
use crate::support::sandbox::SECRET;

#[test]
fn a_home_is_never_a_working_directory() {
    let root = crate::support::sandbox::outside_tmp();
    let home = fake_home(root.path());
    let db = root.path().join("c.db");
    // A console started in the home: the command is refused, not run.
    std::fs::write(home.join("evil.sh"), "cat .ssh/id_rsa; echo x >> .bashrc\n").unwrap();
    let (asked, done) = ask_and_approve(&home, &home, &db, "bash evil.sh");
    assert!(
        asked.contains("NOT RUNNABLE HERE"),
        "the queue says so: {asked}"
    );
    assert!(!done.contains(SECRET), "{done}");
    assert!(done.contains("your home"), "{done}");
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# bashrc\n"
    );
    // `[shell] dir = "~"`: the constellation is refused when it loads.
    let dir = root.path().join("c");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"h\"\n[shell]\ndir = \"~\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("script.toml"), "[agents.ada]\n").unwrap();
    let (code, said) = partner_at(
        &dir,
        &home,
        &[
            "run",
            "--headless",
            "--config",
            "partner.toml",
            "--db",
            "c.db",
            "--for",
            "1s",
        ],
    );
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("[shell] dir") && said.contains("home"),
        "{said}"
    );
}

#[test]
fn build_tools_get_their_caches_and_never_their_credentials_or_config() {
    let root = crate::support::sandbox::outside_tmp();
    let home = fake_home(root.path());
    let work = home.join("work");
    let db = root.path().join("c.db");
    std::fs::write(
        work.join("build.sh"),
        "cat ~/.cargo/credentials.toml; echo '[build]' >> ~/.cargo/config.toml; echo x > ~/.local/share/partner/planted.db\n",
    )
    .unwrap();
    let (asked, done) = ask_and_approve(&work, &home, &db, "cargo --version; bash build.sh");
    assert!(asked.contains("sandbox"), "{asked}");
    assert!(
        !done.contains(SECRET),
        "cargo's credentials were read: {done}"
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".cargo/config.toml")).unwrap(),
        "# config\n",
        "{done}"
    );
    let (_, done) = ask_and_approve(&work, &home, &db, "pip --version; bash build.sh");
    assert!(
        !home.join(".local/share/partner/planted.db").exists(),
        "pip's grant wrote the partner's data: {done}"
    );
}

#[test]
fn a_link_planted_in_the_working_directory_never_widens_what_is_read() {
    let root = crate::support::sandbox::outside_tmp();
    let home = fake_home(root.path());
    let work = home.join("work");
    let db = root.path().join("c.db");
    let (_, done) = ask_and_approve(&work, &home, &db, "ln -s ~/.ssh keys");
    assert!(work.join("keys").is_symlink(), "{done}");
    let (asked, done) = ask_and_approve(&work, &home, &db, "cat keys/id_rsa");
    assert!(
        !done.contains(SECRET),
        "the key was read through the link: {done}"
    );
    assert!(
        asked.contains("BLOCKED") || asked.contains("HIGH"),
        "the queue rates the read by where the link leads: {asked}"
    );
}

#[test]
fn a_command_gets_no_provider_key_token_or_partner_setting() {
    let p = place("/shell env", "");
    let (code, _, err) = support::headless(&p.dir, "3s", &[]);
    assert_eq!(code, Some(0), "{err}");
    // The process that runs the command holds a provider's key, a token
    // and partner's own settings.
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(&p.dir)
        .env("OPENAI_API_KEY", SECRET)
        .env("PARTNER_TOKEN", SECRET)
        .env("GITHUB_TOKEN", SECRET)
        .args(["pending", "--db", "c.db", "approve", "r1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let ran = record_of(&p.dir, "r1");
    let stdout = ran["data"]["stdout"].as_str().unwrap_or_default();
    assert!(stdout.contains("PATH="), "{ran:#}");
    assert!(!stdout.contains(SECRET), "{stdout}");
    for line in stdout.lines() {
        let name = line.split('=').next().unwrap_or_default();
        // TMPDIR is its own; PWD, SHLVL and _ are bash's.
        assert!(
            partner::gate::process::KEPT_ENV.contains(&name)
                || ["TMPDIR", "PWD", "SHLVL", "_"].contains(&name),
            "{name} passed: {stdout}"
        );
    }
}

#[test]
fn without_namespaces_approving_from_the_command_line_asks_once_more() {
    let root = crate::support::sandbox::outside_tmp();
    let home = fake_home(root.path());
    let work = home.join("work");
    let db = root.path().join("c.db");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_partner"))
            .current_dir(&work)
            .env("HOME", &home)
            .env("PARTNER_NO_NAMESPACES", "1")
            .args(args)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), said)
    };
    let db = db.to_str().unwrap();
    let (code, asked) = run(&["exec", "--db", db, "--agent", "ada", "/shell echo hi"]);
    assert_eq!(code, Some(0), "{asked}");
    assert!(
        asked.contains("PARTLY SANDBOXED (no namespaces (PARTNER_NO_NAMESPACES is set))"),
        "{asked}"
    );
    let (code, refused) = run(&["pending", "--db", db, "approve", "r1"]);
    assert_eq!(code, Some(2), "{refused}");
    assert!(
        refused.contains("--unsandboxed") && refused.contains("PARTLY SANDBOXED"),
        "{refused}"
    );
    let (code, done) = run(&["pending", "--db", db, "approve", "r1", "--unsandboxed"]);
    assert_eq!(code, Some(0), "{done}");
    assert!(done.contains("hi"), "{done}");
}

/// The partner's database named by a relative path (`--db ./agents.db`)
/// is protected in the queue's rating as it is by its full path.
#[test]
fn a_relative_database_path_keeps_its_protection() {
    let root = crate::support::sandbox::outside_tmp();
    let home = fake_home(root.path());
    let work = home.join("work");
    let (code, asked) = partner_at(
        &work,
        &home,
        &[
            "exec",
            "--db",
            "./agents.db",
            "--agent",
            "ada",
            "/shell cat agents.db",
        ],
    );
    assert_eq!(code, 0, "{asked}");
    assert!(
        asked.contains("BLOCKED") && asked.contains("partner's"),
        "the queue rates reading the database by its real path: {asked}"
    );
}

/// What would run later, outside the sandbox, stays read-only in the
/// working directory — a repository's config and hooks, the
/// constellation's config, policy and scripts — while the command still
/// works there: it makes files at the top (beside the partner's database,
/// which it cannot see) and commits.
#[test]
fn what_runs_later_outside_stays_read_only() {
    let p = place("/shell bash evil.sh", "");
    let text = std::fs::read_to_string(p.dir.join("partner.toml"))
        .unwrap()
        .replace("dir = \"work\"", "dir = \".\"");
    std::fs::write(p.dir.join("partner.toml"), &text).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&p.dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "-q"]);
    std::fs::write(
        p.dir.join("evil.sh"),
        "echo '[core] fsmonitor = ./x' >> .git/config\n\
         echo id > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit\n\
         echo 'default = \"allow\"' >> policy.toml\n\
         echo '# planted' >> partner.toml\n\
         echo '# planted' >> script.toml\n\
         cat c.db; echo made > made-at-the-top\n\
         git add made-at-the-top && git -c user.name=a -c user.email=a@b commit -qm x && echo committed\n",
    )
    .unwrap();
    let before: Vec<String> = [".git/config", "policy.toml", "partner.toml", "script.toml"]
        .iter()
        .map(|f| std::fs::read_to_string(p.dir.join(f)).unwrap())
        .collect();
    let (code, _, err) = support::headless(&p.dir, "3s", &[]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) =
        support::partner_in(&p.dir, &["pending", "--db", "c.db", "approve", "r1"], "");
    assert_eq!(code, Some(0), "{out}{err}");
    let after: Vec<String> = [".git/config", "policy.toml", "partner.toml", "script.toml"]
        .iter()
        .map(|f| std::fs::read_to_string(p.dir.join(f)).unwrap())
        .collect();
    assert_eq!(before, after, "{out}");
    assert!(!p.dir.join(".git/hooks/pre-commit").exists(), "{out}");
    assert!(p.dir.join("made-at-the-top").exists(), "{out}");
    assert!(out.contains("committed"), "{out}");
    assert!(git(&["log", "--oneline"]).lines().count() == 1);
}
