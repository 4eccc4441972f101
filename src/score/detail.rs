//! What a scorer found, as data: the structure its evidence sentence tells in words, for code
//! that decides from it (the divergence kind of a pair) instead of reading the sentence back.

/// What one scorer found in one answer, beyond pass or fail.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Detail {
    /// No answer could be read: the text is empty, or holds no number, option, output, JSON
    /// value or code defining the function.
    #[default]
    NotFound,
    /// One value read out of the text (numeric, exact, choice, output): `Score::extracted`
    /// holds it normalised, `Score::as_written` as the model wrote it.
    Value,
    /// A JSON value found in the answer (`json`).
    Json(JsonFound),
    /// The text checks of `trap`, `open` and `clarify`: those the answer failed, in the order
    /// they were checked (empty when it passed them all).
    Checks { failed: Vec<Check> },
    /// A JavaScript candidate run against its suite (`js`).
    Tests(Tests),
    /// The calls of a reply checked against the expected ones (`tool_call`).
    ToolCall(super::ToolCallFound),
    /// The scorer could not score at all: an invalid spec, a test suite it could not load, a
    /// worker it could not start.
    Unscored,
}

impl Detail {
    /// The checks a text failed, when the scorer ran text checks.
    pub fn failed_checks(&self) -> Option<&[Check]> {
        match self {
            Detail::Checks { failed } => Some(failed),
            _ => None,
        }
    }
}

/// Where a JSON value was found and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonFound {
    pub place: JsonPlace,
    /// The value is an object (not an array).
    pub object: bool,
}

/// Where in the answer a JSON value was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonPlace {
    /// The whole answer is the value.
    Whole,
    /// A fenced code block.
    CodeFence,
    /// The first balanced `{…}` or `[…]` span in the prose around it.
    Embedded,
}

/// How a JavaScript candidate did on its suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tests {
    /// The candidate got to its tests: false when it did not parse or threw while loading
    /// (every test then counts as failed).
    pub ran: bool,
    pub passed: usize,
    pub total: usize,
    /// The tests that did not pass, numbered from 1 as the evidence names them (`t3`).
    pub failed: Vec<usize>,
}

/// One check a text can fail, named by what the prompt set, not by this answer's particulars
/// (its counts, the words that broke the rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Sanity: no word at all.
    Empty,
    /// Sanity: far more words than any answer needs.
    Runaway,
    /// Sanity: a stuck word, a repeated line or a loop of phrases.
    Degenerate,
    /// A trap's required answer.
    Answer,
    /// A required term, as the prompt sets it (`a|b` alternatives included).
    Require(String),
    /// A forbidden word or phrase, as the prompt sets it.
    Forbid(String),
    /// A forbidden letter.
    ForbidLetter(char),
    MinWords,
    MaxWords,
    MaxSentences,
    Lines,
    Language,
    /// Neither asks for clarification nor states an assumption (`clarify`).
    Clarification,
}

/// A failed check and the evidence line that says how it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedCheck {
    pub check: Check,
    pub message: String,
}

impl FailedCheck {
    pub fn new(check: Check, message: impl Into<String>) -> Self {
        FailedCheck {
            check,
            message: message.into(),
        }
    }
}
