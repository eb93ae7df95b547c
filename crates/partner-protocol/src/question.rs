//! A question for the partner (`/ask`): what an agent — or another agent
//! tool through `partner mcp serve` — asks the partner to decide, and the
//! answer it gets back. The question is the request's action text, one
//! JSON object, so the partner edits it like any action (`E`): a changed
//! `arguments` object or a `choice` among the options is the answer.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// At most this many characters in a title.
pub const MAX_TITLE: usize = 200;
/// At most this many characters of details.
pub const MAX_DETAILS: usize = 8_000;
/// At most this many options.
pub const MAX_OPTIONS: usize = 12;
/// At most this many characters in an option.
pub const MAX_OPTION: usize = 120;
/// At most this many bytes of arguments, as JSON.
pub const MAX_ARGUMENTS: usize = 64 * 1024;
/// At most this many characters in a tool's name.
pub const MAX_TOOL: usize = 128;

/// A question for the partner.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartnerQuestion {
    /// What is asked, in one line.
    pub title: String,
    /// What the partner should know to decide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    /// The answers to choose from (none: approve or deny).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// The tool the asker would call, when the question is about a call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The call's arguments (the partner may edit them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// The option chosen: the partner sets it by editing; an approval
    /// without one chooses the first option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<String>,
}

impl PartnerQuestion {
    /// Reads a question from an action's text: a JSON object with the
    /// fields above, or plain text taken as the title. An error names
    /// the field and the bound.
    pub fn read(text: &str) -> Result<PartnerQuestion, String> {
        let text = text.trim();
        let question = if text.starts_with('{') {
            serde_json::from_str::<PartnerQuestion>(text).map_err(|e| format!("/ask: {e}"))?
        } else {
            PartnerQuestion {
                title: text.to_string(),
                ..PartnerQuestion::default()
            }
        };
        question.check()?;
        Ok(question)
    }

    /// Checks every field against its bound.
    pub fn check(&self) -> Result<(), String> {
        let too_long = |field: &str, text: &str, max: usize| {
            (text.chars().count() > max)
                .then(|| format!("/ask: {field} is longer than {max} characters"))
        };
        if self.title.trim().is_empty() {
            return Err("/ask: the title is empty; say what the partner should decide".into());
        }
        if let Some(e) = too_long("the title", &self.title, MAX_TITLE)
            .or_else(|| {
                too_long(
                    "details",
                    self.details.as_deref().unwrap_or(""),
                    MAX_DETAILS,
                )
            })
            .or_else(|| {
                too_long(
                    "the tool's name",
                    self.tool.as_deref().unwrap_or(""),
                    MAX_TOOL,
                )
            })
        {
            return Err(e);
        }
        if self.options.len() > MAX_OPTIONS {
            return Err(format!("/ask: more than {MAX_OPTIONS} options"));
        }
        for option in &self.options {
            if option.trim().is_empty() {
                return Err("/ask: an option is empty".into());
            }
            if let Some(e) = too_long("an option", option, MAX_OPTION) {
                return Err(e);
            }
        }
        if let Some(args) = &self.arguments
            && Value::Object(args.clone()).to_string().len() > MAX_ARGUMENTS
        {
            return Err(format!(
                "/ask: the arguments are over {MAX_ARGUMENTS} bytes"
            ));
        }
        match &self.choice {
            Some(choice) if !self.options.iter().any(|o| o == choice) => Err(format!(
                "/ask: the choice {choice:?} is not one of the options ({})",
                self.options.join(", ")
            )),
            _ => Ok(()),
        }
    }

    /// The action text that asks it (`/ask {…}` without the verb): one
    /// line of JSON.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The answer an approval gives: the choice (or the first option)
    /// and the arguments as they stand.
    pub fn approved(&self) -> PartnerAnswer {
        PartnerAnswer {
            approved: true,
            choice: self
                .choice
                .clone()
                .or_else(|| self.options.first().cloned()),
            arguments: self.arguments.clone(),
            note: None,
        }
    }
}

/// The partner's answer to a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartnerAnswer {
    /// True when the partner approved.
    pub approved: bool,
    /// The option chosen, when there were options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<String>,
    /// The arguments as approved (edited by the partner, perhaps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Why, when the partner said no.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_a_title_and_json_is_read_field_by_field() {
        assert_eq!(
            PartnerQuestion::read("Deploy now?").unwrap().title,
            "Deploy now?"
        );
        let q = PartnerQuestion::read(r#"{"title":"Run","options":["a","b"],"arguments":{"x":1}}"#)
            .unwrap();
        assert_eq!(q.approved().choice.as_deref(), Some("a"));
        assert_eq!(PartnerQuestion::read(&q.to_text()).unwrap(), q);
    }

    #[test]
    fn bad_questions_are_refused_naming_what_is_wrong() {
        for (text, says) in [
            ("", "title is empty"),
            (r#"{"title":"x","colour":1}"#, "unknown field `colour`"),
            (
                r#"{"title":"x","options":["a"],"choice":"b"}"#,
                "not one of the options",
            ),
            (
                &format!(r#"{{"title":"{}"}}"#, "t".repeat(201)),
                "title is longer",
            ),
            (r#"{"title":"x","arguments":[1]}"#, "invalid type"),
        ] {
            let e = PartnerQuestion::read(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
