//! What reading a command gives: the commands it would run, each with its
//! arguments as far as they are known, its redirections, how it is reached
//! and whether it runs raised.

/// One argument as far as it is known before the command runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Arg {
    /// Its text with quoting removed; `~` for the home directory however
    /// written (`~`, `$HOME`, `${HOME}`), `$NAME` for a variable whose value
    /// is not known, `$(…)` for output not known.
    pub text: String,
    /// Part of it is only known when it runs.
    pub dynamic: bool,
    /// The commands its substitutions run (indices into the reading's
    /// invocations).
    pub inner: Vec<usize>,
    /// It came from splitting an unquoted variable (`$c` where
    /// `c='rm -rf /'`).
    pub split: bool,
}

impl Arg {
    pub(super) fn plain(text: &str) -> Self {
        Arg {
            text: text.to_string(),
            ..Arg::default()
        }
    }
}

/// A redirection of a command's input or output.
#[derive(Debug, Clone, PartialEq)]
pub struct Redirect {
    /// True when it writes (`>`, `>>`, `<>`, `&>`, `>|`).
    pub writes: bool,
    /// The file, as an argument.
    pub target: Arg,
}

/// How an invocation was reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Via {
    /// Written in the command line (or a script string inside it).
    Direct,
    /// Run by `xargs`, with the items it reads when they are known (from
    /// an `echo` or `printf` before it in the pipeline).
    Xargs(Option<Vec<String>>),
    /// Run by `find -exec` on what `find` walks from these roots.
    FindExec(Vec<String>),
}

/// The directory a command runs in, as far as the reading knows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Cwd {
    /// Where the command line starts (no `cd` before it).
    #[default]
    Start,
    /// Where a `cd` or `pushd` with a known argument moved (as written:
    /// relative to the start, `~`, or absolute).
    At(String),
    /// Only known when it runs (`cd "$D"`, `cd -`, `popd`).
    Unknown,
}

/// One command the shell would run.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// The command's name (its base name: `/bin/rm` → `rm`) and arguments.
    pub argv: Vec<Arg>,
    /// Its redirections.
    pub redirects: Vec<Redirect>,
    /// It runs raised (`sudo`, `doas`, `pkexec`, `su -c`).
    pub elevated: bool,
    /// The commands before it in its pipeline (their output is its input),
    /// nearest last, as invocation indices.
    pub upstream: Vec<usize>,
    /// How it is reached.
    pub via: Via,
    /// Where a `cd` before it moved.
    pub cwd: Cwd,
    /// What a here-string or here-document gives its input, when known.
    pub stdin: Option<String>,
    /// Variables set for it alone (`PAGER=… man ls`, `env X=… cmd`).
    pub assigned: Vec<(String, Option<String>)>,
    /// It calls a shell function defined in the line (whose body was
    /// read in its place).
    pub function: bool,
    /// It defines a function that calls itself in a pipeline or in the
    /// background (the shape of a fork bomb).
    pub self_spawning: bool,
}

impl Invocation {
    /// The command's name.
    pub fn name(&self) -> &str {
        self.argv.first().map_or("", |a| a.text.as_str())
    }

    /// The arguments after the name.
    pub fn args(&self) -> &[Arg] {
        self.argv.get(1..).unwrap_or(&[])
    }
}

/// What reading a command found.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// Every command it would run, in order of appearance.
    pub invocations: Vec<Invocation>,
    /// Why some of it could not be read, if so (then the invocations are
    /// what could be).
    pub unreadable: Option<String>,
    /// A loop that never ends starts something in the background each
    /// time round (`while true; do sleep 1 & done`): processes without end.
    pub floods: bool,
}
