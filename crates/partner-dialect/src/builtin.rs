//! The built-in verbs of the dialect as data: each verb's strictness,
//! aliases (with the op each implies), summary and argument shape.

use super::action::ActionOp;
use super::args::{
    BatchShape, CALC, CompleteShape, ContextShape, DataShape, DecisionShape, DismissShape, DmShape,
    FetchShape, IdAndReasonShape, PostShape, PulseShape, RecallShape, RemindShape, ReplyShape,
    SearchShape, SendShape, ShellShape, TEXT, TellShape, UNCERTAIN, WEB,
};
use super::shape::ArgShape;
use super::verbs::Strictness;

/// One row of the built-in table.
pub struct BuiltinVerb {
    /// The verb.
    pub verb: Verb,
    /// Its matching strictness.
    pub strictness: Strictness,
    /// Named in the compact prompt profile (the everyday verbs).
    pub everyday: bool,
    /// Aliases (lowercase, words separated by one space) with the op each implies.
    pub aliases: &'static [(&'static str, Option<ActionOp>)],
    /// One line for help and for the model's instructions.
    pub summary: &'static str,
    /// How its arguments are read and written back.
    pub shape: &'static dyn ArgShape,
}

use Strictness::{Loose, Normal, Strict};

/// The one list of built-in verbs: each entry makes the [`Verb`] variant
/// (its doc, its canonical name) and its row of [`BUILTIN_VERBS`]. Its
/// handler is the engine's (`partner-engine`'s `handlers::of_builtin`, a
/// match the compiler checks for every variant): the parser never
/// depends on what runs a verb.
macro_rules! builtin_verbs {
    ($(
        $(#[doc = $doc:literal])*
        $verb:ident = $name:literal {
            strictness: $strictness:ident,
            everyday: $everyday:literal,
            aliases: $aliases:expr,
            shape: $shape:expr,
            summary: $summary:literal $(,)?
        }
    ),* $(,)?) => {
        /// A verb of the dialect, aliases resolved.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum Verb {
            $( $(#[doc = $doc])* $verb, )*
            /// A verb added from a TOML verb file; its argument is free text.
            Custom(String),
        }

        impl Verb {
            /// The canonical name, as written after the slash.
            pub fn name(&self) -> &str {
                match self {
                    $( Verb::$verb => $name, )*
                    Verb::Custom(name) => name,
                }
            }
        }

        /// Every built-in verb with its aliases. Two verbs share an alias only where
        /// the argument decides between them (see the dialect module docs):
        /// `remember` (recall or context) and `get` (fetch or recall read).
        pub const BUILTIN_VERBS: &[BuiltinVerb] = &[
            $( BuiltinVerb {
                verb: Verb::$verb,
                strictness: $strictness,
                everyday: $everyday,
                aliases: $aliases,
                shape: $shape,
                summary: $summary,
            }, )*
        ];
    };
}

builtin_verbs! {
    /// Long-term memory: read, search, insert, append, delete, patch.
    Recall = "recall" {
        strictness: Loose,
        everyday: true,
        aliases: &[
            ("remember", Some(ActionOp::Insert)),
            ("store", Some(ActionOp::Insert)),
            ("save", Some(ActionOp::Insert)),
            ("archive", Some(ActionOp::Insert)),
            ("forget", Some(ActionOp::Delete)),
            ("get", Some(ActionOp::Read)),
            ("patch", Some(ActionOp::Patch)),
        ],
        shape: &RecallShape,
        summary: "long-term memory: read, search, store, append, delete, patch",
    },
    /// Working memory: append, replace, archive, load, swap.
    Context = "context" {
        strictness: Normal,
        everyday: false,
        aliases: &[("note", None), ("update", None), ("remember", None)],
        shape: &ContextShape,
        summary: "working memory: append, replace, archive, load, swap",
    },
    /// Search across memory domains.
    Search = "search" {
        strictness: Loose,
        everyday: true,
        aliases: &[
            ("find", None),
            ("query", None),
            ("look", None),
            ("lookup", None),
        ],
        shape: &SearchShape,
        summary: "search memory and conversations",
    },
    /// Send to an explicit domain and target.
    Send = "send" {
        strictness: Normal,
        everyday: false,
        aliases: &[],
        shape: &SendShape,
        summary: "send to @domain @target",
    },
    /// Reply in the current thread.
    Reply = "reply" {
        strictness: Normal,
        everyday: true,
        aliases: &[("respond", None)],
        shape: &ReplyShape,
        summary: "reply in the current thread",
    },
    /// Post to a platform.
    Post = "post" {
        strictness: Normal,
        everyday: true,
        aliases: &[("publish", None)],
        shape: &PostShape,
        summary: "publish to a platform",
    },
    /// Direct message a user.
    Dm = "dm" {
        strictness: Normal,
        everyday: true,
        aliases: &[("pm", None)],
        shape: &DmShape,
        summary: "direct message a user",
    },
    /// Message another agent.
    Tell = "tell" {
        strictness: Normal,
        everyday: true,
        aliases: &[],
        shape: &TellShape,
        summary: "message another agent",
    },
    /// Fetch a web page.
    Fetch = "fetch" {
        strictness: Normal,
        everyday: true,
        aliases: &[("get", None)],
        shape: &FetchShape,
        summary: "fetch a web page",
    },
    /// Web search.
    Web = "web" {
        strictness: Normal,
        everyday: true,
        aliases: &[("search web", None), ("google", None), ("look up", None)],
        shape: &WEB,
        summary: "search the web",
    },
    /// Calculation.
    Calc = "calc" {
        strictness: Normal,
        everyday: true,
        aliases: &[("calculate", None), ("compute", None), ("math", None)],
        shape: &CALC,
        summary: "calculate (units, percentages, variables)",
    },
    /// Data sources.
    Data = "data" {
        strictness: Normal,
        everyday: false,
        aliases: &[],
        shape: &DataShape,
        summary: "data sources: list, read, search, monitor, pause",
    },
    /// Grant a pending request (authority only).
    Approve = "approve" {
        strictness: Strict,
        everyday: true,
        aliases: &[
            ("allow", None),
            ("permit", None),
            ("ok", None),
            ("yes", None),
        ],
        shape: &DecisionShape { grants: true },
        summary: "grant a pending request",
    },
    /// Refuse a pending request (authority only).
    Deny = "deny" {
        strictness: Strict,
        everyday: true,
        aliases: &[("reject", None), ("block", None), ("no", None)],
        shape: &DecisionShape { grants: false },
        summary: "refuse a pending request",
    },
    /// Hand a request to the next authority.
    Escalate = "escalate" {
        strictness: Strict,
        everyday: true,
        aliases: &[],
        shape: &IdAndReasonShape,
        summary: "hand a request to a higher authority",
    },
    /// Cancel the current chain or a pending request.
    Cancel = "cancel" {
        strictness: Normal,
        everyday: false,
        aliases: &[("abort", None), ("nevermind", None), ("stop", None)],
        shape: &IdAndReasonShape,
        summary: "cancel the current chain or a pending request",
    },
    /// Emergency stop.
    Halt = "halt" {
        strictness: Strict,
        everyday: true,
        aliases: &[],
        shape: &TEXT,
        summary: "emergency stop",
    },
    /// Several independent actions at once.
    Batch = "batch" {
        strictness: Normal,
        everyday: false,
        aliases: &[],
        shape: &BatchShape,
        summary: "run several actions at once, one per line inside { }",
    },
    /// Summarize the previous output or a reference.
    Summarize = "summarize" {
        strictness: Normal,
        everyday: true,
        aliases: &[("summarise", None), ("summary", None), ("tldr", None)],
        shape: &TEXT,
        summary: "summarize the previous result",
    },
    /// Flag uncertainty for review.
    Uncertain = "uncertain" {
        strictness: Normal,
        everyday: true,
        aliases: &[("unsure", None)],
        shape: &UNCERTAIN,
        summary: "flag uncertainty for review",
    },
    /// Set a reminder (an intention).
    Remind = "remind" {
        strictness: Normal,
        everyday: true,
        aliases: &[("remind me", None), ("reminder", None)],
        shape: &RemindShape,
        summary: "set a reminder: /remind \"when\" \"what\"",
    },
    /// Complete an intention.
    Complete = "complete" {
        strictness: Normal,
        everyday: false,
        aliases: &[("done", None), ("finish", None)],
        shape: &CompleteShape,
        summary: "complete an intention",
    },
    /// Dismiss an intention.
    Dismiss = "dismiss" {
        strictness: Normal,
        everyday: false,
        aliases: &[],
        shape: &DismissShape,
        summary: "dismiss an intention",
    },
    /// List intentions.
    Intentions = "intentions" {
        strictness: Normal,
        everyday: false,
        aliases: &[("list intentions", None), ("reminders", None)],
        shape: &TEXT,
        summary: "list intentions",
    },
    /// Change the pulse interval.
    Pulse = "pulse" {
        strictness: Normal,
        everyday: true,
        aliases: &[],
        shape: &PulseShape,
        summary: "change the pulse interval",
    },
    /// Propose a shell command (or a request in words) for the partner to
    /// approve.
    Shell = "shell" {
        strictness: Normal,
        everyday: false,
        aliases: &[("run", None), ("exec", None), ("sh", None), ("bash", None)],
        shape: &ShellShape,
        summary: "propose a shell command, or a request in words; the partner approves each one",
    },
    /// Ask the partner to decide: a title, details, options and the
    /// arguments of a tool call, answered from the queue (what another
    /// agent tool asks through `partner mcp serve` is one).
    Ask = "ask" {
        strictness: Strict,
        everyday: false,
        aliases: &[],
        shape: &TEXT,
        summary: "ask the partner to decide: /ask {\"title\": …, \"details\": …, \"options\": […]}",
    },
    /// Run a Pattern Lisp tool from the constellation's `tools/` folder.
    Tool = "tool" {
        strictness: Normal,
        everyday: false,
        aliases: &[],
        shape: &TEXT,
        summary: "run one of the partner's tools: /tool NAME arguments",
    },
}
