//! The `partner` binary: parses the command line and calls the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A terminal console for watching LLM agents, deciding what they may do,
/// and editing their memory.
#[derive(Parser)]
#[command(name = "partner", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no subcommand: run a constellation (the demo when there is no config).
    #[command(flatten)]
    run: partner::commands::RunOptions,
}

#[derive(Subcommand)]
enum Command {
    /// Parse one agent turn and print its actions (canonical lines, or JSON).
    Parse {
        /// Print one JSON object: {"actions": [...], "errors": [...], "segments": [...]}.
        #[arg(long)]
        json: bool,
        /// Comma-separated block labels that exist (for recall inference).
        #[arg(long, value_delimiter = ',', value_name = "LABELS")]
        blocks: Vec<String>,
        /// Comma-separated working-memory block labels (for `remember` and context).
        #[arg(long, value_delimiter = ',', value_name = "LABELS")]
        working_blocks: Vec<String>,
        /// A TOML file adding verbs and aliases ([verbs.NAME] aliases = [...]).
        #[arg(long, value_name = "FILE")]
        verbs: Option<PathBuf>,
        /// The turn to parse; standard input when absent or `-`.
        file: Option<PathBuf>,
    },
    /// Parse and run one agent turn headlessly against a database.
    Exec(partner::commands::ExecOptions),
    /// Browse and edit memory blocks; search memory.
    Memory(partner::commands::MemoryOptions),
    /// The constellation's MCP servers: their state and tools.
    Mcp(partner::commands::McpOptions),
    /// The embedding models search by meaning uses: list them, fetch one.
    Models(partner::commands::ModelsOptions),
    /// List and decide waiting requests; manage standing rules.
    Pending(partner::commands::PendingOptions),
    /// Add, list and revoke partners: the people who decide, each with a token.
    Partners(partner::commands::PartnersOptions),
    /// Move a constellation between a database file and PostgreSQL.
    Store(partner::commands::StoreOptions),
    /// Read or export the execution trace.
    Trace {
        #[command(subcommand)]
        command: TraceCommand,
    },
    /// Replay a trace; with --verify, re-execute it and report divergence.
    Replay(partner::commands::ReplayOptions),
    /// Run a constellation (`--headless` prints events as JSON lines).
    Run(partner::commands::RunOptions),
    /// Score how well an agent's model writes actions, over a task set.
    Eval(partner::commands::EvalOptions),
    /// Check, match and complete with action grammars (`.agr`).
    Grammar(partner::commands::GrammarOptions),
    /// The parse gate: check, extract, read the intent of, or propose shell commands.
    Gate(partner::commands::GateOptions),
    /// Run a constellation with no terminal, for a service manager; consoles
    /// and commands reach it through its socket.
    Serve(partner::commands::ServeOptions),
    /// Open the console on a running daemon (quitting leaves the agents running).
    Attach(partner::commands::AttachOptions),
    /// Whether a daemon runs the database, its agents and pending requests.
    Status(partner::commands::StatusOptions),
    /// Send an agent a message from the partner, through the daemon.
    Msg(partner::commands::MsgOptions),
    /// Pattern Lisp: evaluate expressions or files, a REPL, check and run tools.
    Lisp(partner::commands::LispOptions),
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Print trace records, filtered by agent, verb or outcome.
    Show(partner::commands::TraceShowOptions),
    /// Write the database's trace as JSON lines to standard output.
    Export(partner::commands::TraceExportOptions),
}

fn main() -> ExitCode {
    partner::core::isolate::install_quiet_hook();
    // What partner creates is the user's alone (files 0600, dirs 0700).
    partner::core::files::private_umask();
    let cli = Cli::parse();
    // Whatever the input, the exit status is 0, 1 or 2: a bug that panics
    // is reported as an error, not a crash.
    let code = match partner::core::isolate::contain(|| dispatch(cli)) {
        Ok(code) => code,
        Err(panic) => {
            eprintln!("partner: internal error (please report it): {panic}");
            ExitCode::from(2)
        }
    };
    // Nothing an approved command started outlives partner.
    partner::gate::process::stop_all();
    code
}

fn dispatch(cli: Cli) -> ExitCode {
    // The daemon logs to standard error from many threads: it must not be
    // held locked here.
    if let Some(Command::Serve(options)) = &cli.command {
        return exit(partner::commands::run_serve(options));
    }
    // An MCP server speaks on standard output from its own threads.
    if let Some(Command::Mcp(options)) = &cli.command
        && options.serves()
    {
        let (mut out, mut err) = (std::io::sink(), std::io::sink());
        return exit(partner::commands::run_mcp(options, &mut out, &mut err));
    }
    let stdin = &mut std::io::stdin().lock();
    let stdout = &mut std::io::stdout().lock();
    let stderr = &mut std::io::stderr().lock();
    let result = match cli.command {
        None => partner::commands::run_run(&cli.run, stdout, stderr),
        Some(Command::Run(options)) => partner::commands::run_run(&options, stdout, stderr),
        Some(Command::Parse {
            json,
            blocks,
            working_blocks,
            verbs,
            file,
        }) => {
            let options = partner::commands::ParseOptions {
                json,
                blocks: blocks
                    .into_iter()
                    .filter(|b| !b.trim().is_empty())
                    .collect(),
                working_blocks: working_blocks
                    .into_iter()
                    .filter(|b| !b.trim().is_empty())
                    .collect(),
                verbs,
                file,
            };
            partner::commands::run_parse(&options, stdin, stdout, stderr)
        }
        Some(Command::Exec(options)) => partner::commands::run_exec(&options, stdin, stdout),
        Some(Command::Memory(options)) => partner::commands::run_memory(&options, stdin, stdout),
        Some(Command::Pending(options)) => partner::commands::run_pending(&options, stdout),
        Some(Command::Partners(options)) => partner::commands::run_partners(&options, stdout),
        Some(Command::Store(options)) => partner::commands::run_store(&options, stdout),
        Some(Command::Trace {
            command: TraceCommand::Show(options),
        }) => partner::commands::run_trace_show(&options, stdout, stderr),
        Some(Command::Trace {
            command: TraceCommand::Export(options),
        }) => partner::commands::run_trace_export(&options, stdout),
        Some(Command::Replay(options)) => partner::commands::run_replay(&options, stdout, stderr),
        Some(Command::Eval(options)) => partner::commands::run_eval(&options, stdout, stderr),
        Some(Command::Mcp(options)) => partner::commands::run_mcp(&options, stdout, stderr),
        Some(Command::Models(options)) => partner::commands::run_models(&options, stdout, stderr),
        Some(Command::Grammar(options)) => partner::commands::run_grammar(&options, stdin, stdout),
        Some(Command::Gate(options)) => partner::commands::run_gate(&options, stdin, stdout),
        Some(Command::Serve(_)) => unreachable!("served above"),
        Some(Command::Attach(options)) => partner::commands::run_attach(&options),
        Some(Command::Status(options)) => partner::commands::run_status(&options, stdout),
        Some(Command::Msg(options)) => partner::commands::run_msg(&options, stdout),
        Some(Command::Lisp(options)) => {
            partner::commands::run_lisp(&options, stdin, stdout, stderr)
        }
    };
    exit(result)
}

/// The exit status of a command's result; an error is one line on
/// standard error.
fn exit(result: partner::error::Result<i32>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code as u8),
        // The reader went away (`partner trace show | head -1`): nothing
        // more to say, and nothing wrong.
        Err(partner::error::Error::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("partner: {err}");
            ExitCode::from(2)
        }
    }
}
