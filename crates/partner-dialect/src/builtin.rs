//! The built-in verbs of the dialect as data: each verb's strictness,
//! aliases (with the op each implies), summary and argument shape.

use super::action::Op;
use super::args::{
    BatchShape, CALC, CompleteShape, ContextShape, DataShape, DecisionShape, DismissShape, DmShape,
    FetchShape, IdAndReasonShape, PostShape, PulseShape, RecallShape, RemindShape, ReplyShape,
    SearchShape, SendShape, ShellShape, TEXT, TellShape, UNCERTAIN, WEB,
};
use super::shape::ArgShape;
use super::verbs::{Strictness, Verb};

/// One row of the built-in table.
pub struct BuiltinVerb {
    /// The verb.
    pub verb: Verb,
    /// Its matching strictness.
    pub strictness: Strictness,
    /// Named in the compact prompt profile (the everyday verbs).
    pub everyday: bool,
    /// Aliases (lowercase, words separated by one space) with the op each implies.
    pub aliases: &'static [(&'static str, Option<Op>)],
    /// One line for help and for the model's instructions.
    pub summary: &'static str,
    /// How its arguments are read and written back.
    pub shape: &'static dyn ArgShape,
}

use Strictness::{Loose, Normal, Strict};

/// Every built-in verb with its aliases. Two verbs share an alias only where
/// the argument decides between them (see the dialect module docs):
/// `remember` (recall or context) and `get` (fetch or recall read).
pub const BUILTIN_VERBS: &[BuiltinVerb] = &[
    BuiltinVerb {
        verb: Verb::Recall,
        strictness: Loose,
        everyday: true,
        aliases: &[
            ("remember", Some(Op::Insert)),
            ("store", Some(Op::Insert)),
            ("save", Some(Op::Insert)),
            ("archive", Some(Op::Insert)),
            ("forget", Some(Op::Delete)),
            ("get", Some(Op::Read)),
            ("patch", Some(Op::Patch)),
        ],
        shape: &RecallShape,
        summary: "long-term memory: read, search, store, append, delete, patch",
    },
    BuiltinVerb {
        verb: Verb::Context,
        strictness: Normal,
        everyday: false,
        aliases: &[("note", None), ("update", None), ("remember", None)],
        shape: &ContextShape,
        summary: "working memory: append, replace, archive, load, swap",
    },
    BuiltinVerb {
        verb: Verb::Search,
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
    BuiltinVerb {
        verb: Verb::Send,
        strictness: Normal,
        everyday: false,
        aliases: &[],
        shape: &SendShape,
        summary: "send to @domain @target",
    },
    BuiltinVerb {
        verb: Verb::Reply,
        strictness: Normal,
        everyday: true,
        aliases: &[("respond", None)],
        shape: &ReplyShape,
        summary: "reply in the current thread",
    },
    BuiltinVerb {
        verb: Verb::Post,
        strictness: Normal,
        everyday: true,
        aliases: &[("publish", None)],
        shape: &PostShape,
        summary: "publish to a platform",
    },
    BuiltinVerb {
        verb: Verb::Dm,
        strictness: Normal,
        everyday: true,
        aliases: &[("pm", None)],
        shape: &DmShape,
        summary: "direct message a user",
    },
    BuiltinVerb {
        verb: Verb::Tell,
        strictness: Normal,
        everyday: true,
        aliases: &[],
        shape: &TellShape,
        summary: "message another agent",
    },
    BuiltinVerb {
        verb: Verb::Fetch,
        strictness: Normal,
        everyday: true,
        aliases: &[("get", None)],
        shape: &FetchShape,
        summary: "fetch a web page",
    },
    BuiltinVerb {
        verb: Verb::Web,
        strictness: Normal,
        everyday: true,
        aliases: &[("search web", None), ("google", None), ("look up", None)],
        shape: &WEB,
        summary: "search the web",
    },
    BuiltinVerb {
        verb: Verb::Calc,
        strictness: Normal,
        everyday: true,
        aliases: &[("calculate", None), ("compute", None), ("math", None)],
        shape: &CALC,
        summary: "calculate (units, percentages, variables)",
    },
    BuiltinVerb {
        verb: Verb::Data,
        strictness: Normal,
        everyday: false,
        aliases: &[],
        shape: &DataShape,
        summary: "data sources: list, read, search, monitor, pause",
    },
    BuiltinVerb {
        verb: Verb::Approve,
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
    BuiltinVerb {
        verb: Verb::Deny,
        strictness: Strict,
        everyday: true,
        aliases: &[("reject", None), ("block", None), ("no", None)],
        shape: &DecisionShape { grants: false },
        summary: "refuse a pending request",
    },
    BuiltinVerb {
        verb: Verb::Escalate,
        strictness: Strict,
        everyday: true,
        aliases: &[],
        shape: &IdAndReasonShape,
        summary: "hand a request to a higher authority",
    },
    BuiltinVerb {
        verb: Verb::Cancel,
        strictness: Normal,
        everyday: false,
        aliases: &[("abort", None), ("nevermind", None), ("stop", None)],
        shape: &IdAndReasonShape,
        summary: "cancel the current chain or a pending request",
    },
    BuiltinVerb {
        verb: Verb::Halt,
        strictness: Strict,
        everyday: true,
        aliases: &[],
        shape: &TEXT,
        summary: "emergency stop",
    },
    BuiltinVerb {
        verb: Verb::Batch,
        strictness: Normal,
        everyday: false,
        aliases: &[],
        shape: &BatchShape,
        summary: "run several actions at once, one per line inside { }",
    },
    BuiltinVerb {
        verb: Verb::Summarize,
        strictness: Normal,
        everyday: true,
        aliases: &[("summarise", None), ("summary", None), ("tldr", None)],
        shape: &TEXT,
        summary: "summarize the previous result",
    },
    BuiltinVerb {
        verb: Verb::Uncertain,
        strictness: Normal,
        everyday: true,
        aliases: &[("unsure", None)],
        shape: &UNCERTAIN,
        summary: "flag uncertainty for review",
    },
    BuiltinVerb {
        verb: Verb::Remind,
        strictness: Normal,
        everyday: true,
        aliases: &[("remind me", None), ("reminder", None)],
        shape: &RemindShape,
        summary: "set a reminder: /remind \"when\" \"what\"",
    },
    BuiltinVerb {
        verb: Verb::Complete,
        strictness: Normal,
        everyday: false,
        aliases: &[("done", None), ("finish", None)],
        shape: &CompleteShape,
        summary: "complete an intention",
    },
    BuiltinVerb {
        verb: Verb::Dismiss,
        strictness: Normal,
        everyday: false,
        aliases: &[],
        shape: &DismissShape,
        summary: "dismiss an intention",
    },
    BuiltinVerb {
        verb: Verb::Intentions,
        strictness: Normal,
        everyday: false,
        aliases: &[("list intentions", None), ("reminders", None)],
        shape: &TEXT,
        summary: "list intentions",
    },
    BuiltinVerb {
        verb: Verb::Pulse,
        strictness: Normal,
        everyday: true,
        aliases: &[],
        shape: &PulseShape,
        summary: "change the pulse interval",
    },
    BuiltinVerb {
        verb: Verb::Shell,
        strictness: Normal,
        everyday: false,
        aliases: &[("run", None), ("exec", None), ("sh", None), ("bash", None)],
        shape: &ShellShape,
        summary: "propose a shell command, or a request in words; the partner approves each one",
    },
    BuiltinVerb {
        verb: Verb::Tool,
        strictness: Normal,
        everyday: false,
        aliases: &[],
        shape: &TEXT,
        summary: "run one of the partner's tools: /tool NAME arguments",
    },
];
