//! Commands that run other commands: what each runs, and where its own
//! options end. One table, read by the shell reading; a wrapper's options
//! that take a value are listed so that `sudo -u root rm -rf /` reads as
//! `rm -rf /`, not as a command named `root`.

use super::syntax::Arg;

/// What a command does with the words after it.
#[derive(Debug, Clone, PartialEq)]
pub enum Unwrapped {
    /// It runs the command that starts `skip` words in (`sudo`, `env`,
    /// `nice`, `timeout 5`…); `raises` when it runs it with raised
    /// privileges.
    Command {
        /// Words to take off.
        skip: usize,
        /// `sudo`, `doas`, `pkexec`.
        raises: bool,
    },
    /// A shell running a script: given as text (`bash -c TEXT`, `su -c`,
    /// `eval`, `watch`), or read from a file or its input (`None`).
    Script {
        /// The script, when it is known.
        text: Option<String>,
        /// `su -c` raises.
        raises: bool,
    },
    /// `xargs`: the command from `skip` words in, with items read from its
    /// input.
    Xargs {
        /// Words to take off.
        skip: usize,
    },
    /// `find`: what it walks, and the commands its `-exec` actions run (`{}`
    /// standing for each file found).
    Find {
        /// The places it walks from.
        roots: Vec<String>,
        /// The `-exec`, `-execdir`, `-ok` commands.
        execs: Vec<Vec<Arg>>,
    },
    /// Not a wrapper: the command itself.
    Done,
}

/// A wrapper's options: those that take the next word as their value.
struct Wrapper {
    names: &'static [&'static str],
    valued: &'static [&'static str],
    raises: bool,
    /// Positional words before the command (`timeout 5 cmd`).
    positional: usize,
}

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["sudo", "doas"],
        valued: &[
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-T",
            "-U",
            "--user",
            "--group",
            "--chdir",
            "--prompt",
            "--host",
            "--role",
            "--type",
            "--close-from",
            "--other-user",
            "--command-timeout",
        ],
        raises: true,
        positional: 0,
    },
    Wrapper {
        names: &["pkexec"],
        valued: &["--user"],
        raises: true,
        positional: 0,
    },
    Wrapper {
        names: &["env"],
        valued: &["-u", "-C", "--unset", "--chdir"],
        raises: false,
        positional: 0,
    },
    Wrapper {
        names: &["nice"],
        valued: &["-n", "--adjustment"],
        raises: false,
        positional: 0,
    },
    Wrapper {
        names: &[
            "nohup",
            "setsid",
            "builtin",
            "unbuffer",
            "catchsegv",
            "command",
        ],
        valued: &[],
        raises: false,
        positional: 0,
    },
    Wrapper {
        names: &["exec"],
        valued: &["-a"],
        raises: false,
        positional: 0,
    },
    Wrapper {
        names: &["time"],
        valued: &["-f", "-o", "--format", "--output"],
        raises: false,
        positional: 0,
    },
    Wrapper {
        names: &["timeout"],
        valued: &["-s", "-k", "--signal", "--kill-after"],
        raises: false,
        positional: 1,
    },
    Wrapper {
        names: &["stdbuf"],
        valued: &["-i", "-o", "-e"],
        raises: false,
        positional: 0,
    },
    Wrapper {
        names: &["ionice"],
        valued: &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        raises: false,
        positional: 0,
    },
    Wrapper {
        names: &["taskset"],
        valued: &[],
        raises: false,
        positional: 1,
    },
    Wrapper {
        names: &["flock"],
        valued: &["-w", "-E", "--timeout", "--conflict-exit-code"],
        raises: false,
        positional: 1,
    },
    Wrapper {
        names: &["busybox"],
        valued: &[],
        raises: false,
        positional: 0,
    },
];

/// Shells and the option that gives them a script as text.
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash",
];

/// True for a shell.
pub fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

/// What `words` (the command's name first) run.
pub fn unwrap(words: &[Arg]) -> Unwrapped {
    let Some(name) = words.first().map(|w| w.text.as_str()) else {
        return Unwrapped::Done;
    };
    if let Some(w) = WRAPPERS.iter().find(|w| w.names.contains(&name)) {
        return wrapper(w, name, words);
    }
    match name {
        _ if is_shell(name) => shell(words),
        "su" => su(words),
        "eval" => Unwrapped::Script {
            text: known_text(&words[1..]),
            raises: false,
        },
        // `trap 'cmd' EXIT` runs `cmd` later, in the same shell.
        "trap" if words.get(1).is_some_and(|w| !w.text.starts_with('-')) => Unwrapped::Script {
            text: known_text(&words[1..2]),
            raises: false,
        },
        "source" | "." => Unwrapped::Script {
            text: None,
            raises: false,
        },
        "watch" => {
            let at = skip_options(words, 1, &["-n", "-d", "--interval", "--differences"]);
            Unwrapped::Script {
                text: known_text(&words[at.min(words.len())..]),
                raises: false,
            }
        }
        "xargs" => Unwrapped::Xargs {
            skip: skip_options(
                words,
                1,
                &[
                    "-n",
                    "-I",
                    "-L",
                    "-P",
                    "-d",
                    "-E",
                    "-s",
                    "-a",
                    "--max-args",
                    "--replace",
                    "--max-lines",
                    "--max-procs",
                    "--delimiter",
                    "--eof",
                    "--max-chars",
                    "--arg-file",
                ],
            ),
        },
        "find" => find(words),
        _ => Unwrapped::Done,
    }
}

fn wrapper(w: &Wrapper, name: &str, words: &[Arg]) -> Unwrapped {
    let mut at = 1;
    while let Some(word) = words.get(at) {
        let t = word.text.as_str();
        if t == "--" {
            at += 1;
            break;
        }
        if name == "env" && !t.starts_with('-') && t.contains('=') {
            at += 1;
            continue;
        }
        if name == "env" && (t == "-S" || t.starts_with("--split-string")) {
            let text = t
                .strip_prefix("--split-string=")
                .map(str::to_string)
                .or_else(|| {
                    words
                        .get(at + 1)
                        .filter(|a| !a.dynamic)
                        .map(|a| a.text.clone())
                });
            return Unwrapped::Script {
                text,
                raises: false,
            };
        }
        if name == "command" && matches!(t, "-v" | "-V") {
            return Unwrapped::Done;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        at += 1 + usize::from(takes_value(w.valued, t));
    }
    at += w.positional;
    if at >= words.len() {
        // `sudo -i`, `sudo -s` alone: a root shell reading its input.
        let shell = w.raises
            && words[1..].iter().any(|a| {
                a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains(['i', 's'])
            });
        if shell {
            return Unwrapped::Script {
                text: None,
                raises: true,
            };
        }
        // `env` alone: the wrapper is the command.
        return Unwrapped::Done;
    }
    Unwrapped::Command {
        skip: at,
        raises: w.raises,
    }
}

/// True when option word `t` takes the next word as its value: `-u`, or a
/// cluster of short options ending in one (`-iu root`, `-Hu root`).
fn takes_value(valued: &[&str], t: &str) -> bool {
    if valued.contains(&t) {
        return true;
    }
    if t.starts_with("--") || t.len() < 3 {
        return false;
    }
    // In a cluster, the first letter that takes a value takes the rest of
    // the word, or the next word when it is last.
    let letters: Vec<char> = t[1..].chars().collect();
    for (i, c) in letters.iter().enumerate() {
        if valued.contains(&format!("-{c}").as_str()) {
            return i + 1 == letters.len();
        }
    }
    false
}

/// The index of the first word from `from` that is not an option (or an
/// option's value).
fn skip_options(words: &[Arg], from: usize, valued: &[&str]) -> usize {
    let mut at = from;
    while let Some(word) = words.get(at) {
        let t = word.text.as_str();
        if t == "--" {
            return at + 1;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        at += 1 + usize::from(takes_value(valued, t));
    }
    at
}

fn known_text(words: &[Arg]) -> Option<String> {
    if words.is_empty() || words.iter().any(|w| w.dynamic) {
        return None;
    }
    Some(
        words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn shell(words: &[Arg]) -> Unwrapped {
    let mut at = 1;
    while let Some(word) = words.get(at) {
        let t = word.text.as_str();
        if t.starts_with('-') && t.len() > 1 && !t.starts_with("--") && t[1..].contains('c') {
            let script = words.get(at + 1);
            return Unwrapped::Script {
                text: script.filter(|s| !s.dynamic).map(|s| s.text.clone()),
                raises: false,
            };
        }
        if t == "-o" || t == "-O" || t == "+O" || t == "+o" {
            at += 2;
            continue;
        }
        if !t.starts_with(['-', '+']) {
            break;
        }
        at += 1;
    }
    // A script file, or its input.
    Unwrapped::Script {
        text: None,
        raises: false,
    }
}

fn su(words: &[Arg]) -> Unwrapped {
    let mut at = 1;
    while let Some(word) = words.get(at) {
        let t = word.text.as_str();
        if t == "-c" || t == "--command" {
            return Unwrapped::Script {
                text: words
                    .get(at + 1)
                    .filter(|s| !s.dynamic)
                    .map(|s| s.text.clone()),
                raises: true,
            };
        }
        if let Some(text) = t.strip_prefix("--command=") {
            return Unwrapped::Script {
                text: Some(text.to_string()),
                raises: true,
            };
        }
        at += 1;
    }
    // `su`, `su - root` alone: a root shell reading its input.
    Unwrapped::Script {
        text: None,
        raises: true,
    }
}

fn find(words: &[Arg]) -> Unwrapped {
    let mut roots = Vec::new();
    let mut at = 1;
    // Leading options (-H, -L, -P, -O3, -D debug).
    while let Some(w) = words.get(at) {
        match w.text.as_str() {
            "-H" | "-L" | "-P" => at += 1,
            "-D" => at += 2,
            t if t.starts_with("-O") => at += 1,
            _ => break,
        }
    }
    while let Some(w) = words.get(at) {
        let t = w.text.as_str();
        if t.starts_with('-') || t == "(" || t == "!" {
            break;
        }
        roots.push(t.to_string());
        at += 1;
    }
    if roots.is_empty() {
        roots.push(".".into());
    }
    let mut execs = Vec::new();
    while at < words.len() {
        if matches!(
            words[at].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = at + 1;
            let mut end = start;
            while end < words.len() && !matches!(words[end].text.as_str(), ";" | "+") {
                end += 1;
            }
            if end > start {
                execs.push(words[start..end].to_vec());
            }
            at = end + 1;
        } else {
            at += 1;
        }
    }
    Unwrapped::Find { roots, execs }
}
