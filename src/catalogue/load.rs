//! Reading `prompts/*.toml` and validating every entry; every problem names its file and line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::generator;
use super::long::Texts;
use super::spec::{Message, Prompt, PromptRequest, Role, SourceLocation, ToolUse, CATEGORIES};
use super::suite::{Suite, SuiteChoice};
use super::tools;
use crate::score::{ScoreContext, ScorerSpec};

/// A loaded, validated catalogue.
#[derive(Debug, Clone)]
pub struct Catalogue {
    pub dir: PathBuf,
    pub prompts: Vec<Prompt>,
    /// sha256 over every file's name and bytes, so a run records exactly which catalogue it used.
    pub hash: String,
    /// The suites its prompts come from (the files alone: `core`).
    pub suites: SuiteChoice,
    /// Position of each prompt by id, so looking one up does not scan them all.
    index: HashMap<String, usize>,
}

/// Every problem found while loading, each already prefixed with `file:line:`.
#[derive(Debug, thiserror::Error)]
#[error("invalid catalogue:\n  {}", problems.join("\n  "))]
pub struct CatalogueError {
    pub problems: Vec<String>,
}

impl CatalogueError {
    fn one(problem: String) -> Self {
        CatalogueError {
            problems: vec![problem],
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default, rename = "prompt")]
    prompts: Vec<toml::Spanned<RawPrompt>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrompt {
    id: String,
    kind: Option<String>,
    system: Option<String>,
    user: Option<String>,
    messages: Option<Vec<Message>>,
    prompt: Option<String>,
    max_tokens: Option<u32>,
    #[serde(default)]
    tags: Vec<String>,
    reference: Option<String>,
    wrong: Option<String>,
    score: ScorerSpec,
    /// `tool_use = { tools = [...], tool_choice = "auto", turns = [...] }` (chat prompts only).
    tool_use: Option<ToolUse>,
}

impl Catalogue {
    pub(crate) fn new(
        dir: PathBuf,
        prompts: Vec<Prompt>,
        hash: String,
        suites: SuiteChoice,
    ) -> Self {
        let index = prompts
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.clone(), i))
            .collect();
        Catalogue {
            dir,
            prompts,
            hash,
            suites,
            index,
        }
    }

    pub fn get(&self, id: &str) -> Option<&Prompt> {
        // The index, checked against the prompt it points at (`prompts` is public and may have
        // been changed since), else a scan.
        self.index
            .get(id)
            .and_then(|&i| self.prompts.get(i))
            .filter(|p| p.id == id)
            .or_else(|| self.prompts.iter().find(|p| p.id == id))
    }

    /// The prompts chosen by `--only` and `--category` (both empty: all of them).
    pub fn select(&self, only: &[String], categories: &[String]) -> Result<Vec<&Prompt>, String> {
        for id in only {
            if self.get(id).is_none() {
                let suggestion = closest(id, self.prompts.iter().map(|p| p.id.as_str()))
                    .map(|near| format!("; did you mean `{near}`?"))
                    .unwrap_or_default();
                return Err(format!(
                    "--only: no prompt with id `{id}` in {}{suggestion}",
                    self.dir.display()
                ));
            }
        }
        // The spec's categories and whatever else the prompts hold (the generated families).
        let mut known: Vec<&str> = CATEGORIES.iter().map(|(c, _)| *c).collect();
        for p in &self.prompts {
            if !known.contains(&p.category.as_str()) {
                known.push(&p.category);
            }
        }
        for cat in categories {
            if !known.contains(&cat.as_str()) {
                return Err(format!(
                    "--category: unknown category `{cat}` (known: {})",
                    known.join(", ")
                ));
            }
        }
        Ok(self
            .prompts
            .iter()
            .filter(|p| only.is_empty() || only.contains(&p.id))
            .filter(|p| categories.is_empty() || categories.contains(&p.category))
            .collect())
    }
}

/// The known name most like `name` (Jaro-Winkler similarity above 0.8, as clap suggests flags),
/// for a "did you mean" after a typo.
fn closest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    known
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

impl Catalogue {
    /// This catalogue (its files: the core suite) with the chosen suites: without its own
    /// prompts when `core` is not chosen, followed by the generated items when `generated` is.
    pub fn with_suites(self, choice: SuiteChoice) -> Catalogue {
        self.with_suites_as(choice, Texts::Built)
    }

    /// [`Catalogue::with_suites`], the long items with their text or only their plan (a dry run).
    pub fn with_suites_as(self, choice: SuiteChoice, texts: Texts) -> Catalogue {
        let mut prompts = if choice.includes(Suite::Core) {
            self.prompts
        } else {
            Vec::new()
        };
        if choice.includes(Suite::Generated) {
            prompts.extend(generator::generate_at(
                choice.generator,
                choice.seed,
                choice.items,
                &choice.levels,
            ));
        }
        if choice.includes(Suite::Tools) {
            prompts.extend(tools::items());
        }
        if choice.includes(Suite::Long) {
            prompts.extend(super::long::generate_as(choice.seed, &choice.long, texts).0);
        }
        Catalogue::new(self.dir, prompts, self.hash, choice)
    }
}

impl Catalogue {
    /// The suite of the prompt `id` (None: not in this catalogue).
    pub fn suite_of(&self, id: &str) -> Option<Suite> {
        self.get(id).map(|p| p.suite)
    }

    /// Grow (or cut) this catalogue's generated suite to `items`: the same items first, since
    /// item i depends only on the seed and i.
    pub fn set_generated_items(&mut self, items: usize) {
        let mut choice = self.suites.clone();
        choice.items = items;
        let mut prompts: Vec<Prompt> = std::mem::take(&mut self.prompts);
        let kept = prompts
            .iter()
            .filter(|p| p.suite == Suite::Generated)
            .count()
            .min(items);
        let mut seen = 0;
        prompts.retain(|p| {
            if p.suite != Suite::Generated {
                return true;
            }
            seen += 1;
            seen <= kept
        });
        prompts.extend(
            (kept..items)
                .map(|i| generator::item(choice.generator, choice.seed, i, &choice.levels)),
        );
        let (dir, hash) = (
            std::mem::take(&mut self.dir),
            std::mem::take(&mut self.hash),
        );
        *self = Catalogue::new(dir, prompts, hash, choice);
    }
}

impl Catalogue {
    /// This catalogue's generated items made again at `levels` (the same count, ids and order;
    /// other prompts untouched): after calibration chose the levels.
    pub fn set_levels(&mut self, levels: generator::Levels) {
        let mut choice = self.suites.clone();
        choice.levels = levels;
        let mut made =
            generator::generate_at(choice.generator, choice.seed, choice.items, &choice.levels)
                .into_iter();
        let prompts: Vec<Prompt> = std::mem::take(&mut self.prompts)
            .into_iter()
            .map(|p| match p.suite {
                Suite::Generated => made.next().unwrap_or(p),
                _ => p,
            })
            .collect();
        let (dir, hash) = (
            std::mem::take(&mut self.dir),
            std::mem::take(&mut self.hash),
        );
        *self = Catalogue::new(dir, prompts, hash, choice);
    }
}

/// Load every `*.toml` file in `dir`. The file stem is the category.
pub fn load_catalogue(dir: &Path) -> Result<Catalogue, CatalogueError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        CatalogueError::one(format!(
            "{}: cannot read catalogue folder: {e}",
            dir.display()
        ))
    })?;
    let files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    let mut sources = Vec::new();
    let mut problems = Vec::new();
    for file in files {
        match std::fs::read_to_string(&file) {
            Ok(text) => sources.push((file, text)),
            Err(e) => problems.push(format!("{}: cannot read: {e}", file.display())),
        }
    }
    from_sources(dir, sources, problems)
}

/// Build a catalogue from its files' paths (shown in messages; the stem is the category) and
/// texts, wherever they were read from: a folder or the copy compiled into the binary. The hash
/// depends on the file names and texts alone, so both give the same hash for the same files.
pub(crate) fn from_sources(
    dir: &Path,
    mut sources: Vec<(PathBuf, String)>,
    mut problems: Vec<String>,
) -> Result<Catalogue, CatalogueError> {
    // The spec's category order (counting_traps first), so lists and reports read in that order.
    let rank = |p: &PathBuf| {
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        CATEGORIES
            .iter()
            .position(|(c, _)| *c == stem)
            .unwrap_or(usize::MAX)
    };
    sources.sort_by(|(a, _), (b, _)| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    if sources.is_empty() && problems.is_empty() {
        return Err(CatalogueError::one(format!(
            "{}: no *.toml prompt files found",
            dir.display()
        )));
    }

    let mut texts = Vec::new();
    let mut prompts = Vec::new();
    for (file, text) in sources {
        parse_file(&file, &text, &mut prompts, &mut problems);
        texts.push((file.file_name().unwrap_or_default().to_owned(), text));
    }
    // Hashed in file-name order, so the hash depends on the files alone, not on the load order.
    texts.sort();
    let mut hasher = Sha256::new();
    for (name, text) in &texts {
        hasher.update(name.as_encoded_bytes());
        hasher.update(text.as_bytes());
    }

    problems.extend(missing_suites(dir, &prompts));

    let mut first_seen: HashMap<&str, &SourceLocation> = HashMap::new();
    for p in &prompts {
        if let Some(prev) = first_seen.insert(&p.id, &p.source) {
            problems.push(format!(
                "{}: duplicate prompt id `{}` (first defined at {prev})",
                p.source, p.id
            ));
        }
    }

    if problems.is_empty() {
        Ok(Catalogue::new(
            dir.to_path_buf(),
            prompts,
            format!("{:x}", hasher.finalize()),
            SuiteChoice::default(),
        ))
    } else {
        Err(CatalogueError { problems })
    }
}

/// A `js` prompt whose suite file is not in the `scorers/` folder beside the catalogue (or, for
/// the built-in catalogue, in the binary): every answer to it would score wrong, so the catalogue
/// is refused before anything is sent.
fn missing_suites(dir: &Path, prompts: &[Prompt]) -> Vec<String> {
    let scorers = ScoreContext::for_catalogue(dir).scorers_dir;
    prompts
        .iter()
        .filter_map(|p| match &p.score {
            ScorerSpec::Js { suite, .. } => {
                let path = scorers.join(suite);
                let found = match crate::builtin::suite_text(&path) {
                    Some(built_in) => built_in.is_ok(),
                    None => path.is_file(),
                };
                (!found).then(|| {
                    format!(
                        "{}: prompt `{}`: score: the suite file {} does not exist",
                        p.source,
                        p.id,
                        path.display()
                    )
                })
            }
            _ => None,
        })
        .collect()
}

fn parse_file(file: &Path, text: &str, prompts: &mut Vec<Prompt>, problems: &mut Vec<String>) {
    let shown = file.display().to_string();
    let category = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    if !CATEGORIES.iter().any(|(c, _)| *c == category) {
        let known: Vec<&str> = CATEGORIES.iter().map(|(c, _)| *c).collect();
        problems.push(format!(
            "{shown}:1: unknown category `{category}` (the file name is the category; known: {})",
            known.join(", ")
        ));
        return;
    }
    parse_prompts(&shown, text, &category, prompts, problems);
}

/// Every prompt of one file's text, of `category`; problems are prefixed with `shown:line:`.
pub(crate) fn parse_prompts(
    shown: &str,
    text: &str,
    category: &str,
    prompts: &mut Vec<Prompt>,
    problems: &mut Vec<String>,
) {
    let raw: RawFile = match toml::from_str(text) {
        Ok(r) => r,
        Err(e) => {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
            problems.push(format!("{shown}:{line}: {}", e.message().trim()));
            return;
        }
    };
    let mut lines = LineCounter::new(text);
    for spanned in raw.prompts {
        let line = lines.line_of(spanned.span().start);
        let source = SourceLocation {
            file: shown.to_string(),
            line,
        };
        match validate(spanned.into_inner(), category, source.clone()) {
            Ok(p) => prompts.push(p),
            Err(msg) => problems.push(format!("{source}: {msg}")),
        }
    }
}

/// 1-based line number of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    LineCounter::new(text).line_of(offset)
}

/// Line numbers of increasing byte offsets in one pass over the text: each call counts only the
/// newlines since the previous offset, so numbering every prompt of a file is linear in its size
/// (counting from the start for each prompt made loading quadratic). An offset before the
/// previous one counts again from the start.
struct LineCounter<'a> {
    text: &'a str,
    offset: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a str) -> Self {
        LineCounter {
            text,
            offset: 0,
            line: 1,
        }
    }

    fn line_of(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        if offset < self.offset {
            *self = LineCounter::new(self.text);
        }
        let bytes = &self.text.as_bytes()[self.offset..offset];
        self.line += bytes.iter().filter(|&&b| b == b'\n').count();
        self.offset = offset;
        self.line
    }
}

fn validate(raw: RawPrompt, category: &str, source: SourceLocation) -> Result<Prompt, String> {
    let id = raw.id.trim().to_string();
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        return Err(format!(
            "prompt id `{id}` must be non-empty lowercase letters, digits and underscores"
        ));
    }
    let ctx = |msg: String| format!("prompt `{id}`: {msg}");
    let request = build_request(&raw).map_err(ctx)?;
    let reference = non_empty(raw.reference, "reference").map_err(ctx)?;
    let wrong = non_empty(raw.wrong, "wrong").map_err(ctx)?;
    if raw.max_tokens == Some(0) {
        return Err(ctx("max_tokens must be at least 1".into()));
    }
    let score = tools::bind(raw.score, raw.tool_use.as_ref(), &request).map_err(ctx)?;
    score.validate().map_err(|e| ctx(format!("score: {e}")))?;
    Ok(Prompt {
        id: id.clone(),
        category: category.to_string(),
        suite: crate::catalogue::Suite::Core,
        request,
        max_tokens: raw.max_tokens,
        tags: raw.tags,
        reference,
        wrong,
        score,
        source,
        tool_use: raw.tool_use,
    })
}

fn non_empty(value: Option<String>, field: &str) -> Result<String, String> {
    match value {
        Some(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(format!(
            "`{field}` is required (a worked reference answer and a plausible wrong one)"
        )),
    }
}

fn build_request(raw: &RawPrompt) -> Result<PromptRequest, String> {
    match raw.kind.as_deref().unwrap_or("chat") {
        "completion" => {
            if raw.user.is_some() || raw.system.is_some() || raw.messages.is_some() {
                return Err(
                    "kind = \"completion\" takes `prompt`, not `user`, `system` or `messages`"
                        .into(),
                );
            }
            match &raw.prompt {
                Some(p) if !p.is_empty() => Ok(PromptRequest::Completion { prompt: p.clone() }),
                _ => Err("kind = \"completion\" needs a non-empty `prompt`".into()),
            }
        }
        "chat" => {
            if raw.prompt.is_some() {
                return Err("`prompt` is only for kind = \"completion\"; chat prompts use `user` or `messages`".into());
            }
            let messages = match (&raw.user, &raw.messages) {
                (Some(user), None) => {
                    let mut m = Vec::new();
                    if let Some(system) = &raw.system {
                        m.push(Message {
                            role: Role::System,
                            content: system.clone(),
                        });
                    }
                    m.push(Message {
                        role: Role::User,
                        content: user.clone(),
                    });
                    m
                }
                (None, Some(messages)) => {
                    if raw.system.is_some() {
                        return Err(
                            "put the system turn inside `messages` when using `messages`".into(),
                        );
                    }
                    messages.clone()
                }
                (Some(_), Some(_)) => {
                    return Err("give either `user` or `messages`, not both".into())
                }
                (None, None) => return Err("a chat prompt needs `user` or `messages`".into()),
            };
            match messages.last() {
                Some(m) if m.role == Role::User && !m.content.trim().is_empty() => {
                    Ok(PromptRequest::Chat { messages })
                }
                _ => Err("the last message must be a non-empty user turn".into()),
            }
        }
        other => Err(format!(
            "unknown kind `{other}` (expected \"chat\" or \"completion\")"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(files: &[(&str, &str)]) -> Result<Catalogue, CatalogueError> {
        let dir = Path::new("/nonexistent-catalogue/prompts");
        let sources = files
            .iter()
            .map(|(name, text)| (dir.join(name), text.to_string()))
            .collect();
        from_sources(dir, sources, Vec::new())
    }

    fn numeric_prompt(id: &str, score: &str) -> String {
        format!(
            "[[prompt]]\nid = \"{id}\"\nuser = \"How many?\"\nreference = \"2\"\nwrong = \"3\"\nscore = {score}\n\n"
        )
    }

    #[test]
    fn a_mistyped_prompt_id_gets_the_nearest_id_and_a_far_one_gets_none() {
        let text: String = ["count_letters", "count_words", "fact_capital_canada"]
            .iter()
            .map(|id| numeric_prompt(id, r#"{ type = "numeric", expected = "2" }"#))
            .collect();
        let catalogue = load(&[("deterministic_math.toml", &text)]).unwrap();
        let err = catalogue.select(&["count_leters".into()], &[]).unwrap_err();
        assert!(err.ends_with("did you mean `count_letters`?"), "{err}");
        let err = catalogue.select(&["zzz".into()], &[]).unwrap_err();
        assert!(!err.contains("did you mean"), "{err}");
    }

    #[test]
    fn every_prompt_of_a_large_file_is_numbered_by_its_own_line() {
        let text: String = (0..3000)
            .map(|i| numeric_prompt(&format!("p{i}"), r#"{ type = "numeric", expected = "2" }"#))
            .collect();
        let catalogue = load(&[("deterministic_math.toml", &text)]).unwrap();
        assert_eq!(catalogue.prompts.len(), 3000);
        for (i, p) in catalogue.prompts.iter().enumerate() {
            assert_eq!(p.source.line, 7 * i + 1, "{}", p.id);
        }
    }

    #[test]
    fn a_prompt_offers_tools_and_its_tool_call_score_learns_their_schemas() {
        let tools = r#"tool_use = { tools = [{ type = "function", function = { name = "get_weather", parameters = { type = "object", properties = { city = { type = "string" } }, required = ["city"] } } }], tool_choice = "auto", turns = [{ role = "assistant", content = "", tool_calls = [] }] }"#;
        let text = format!(
            "[[prompt]]\nid = \"weather\"\nuser = \"Weather in Paris?\"\n{tools}\nreference = '{{\"tool_calls\":[{{\"name\":\"get_weather\",\"arguments\":\"{{\\\"city\\\":\\\"Paris\\\"}}\"}}],\"finish_reason\":\"tool_calls\"}}'\nwrong = \"It is sunny.\"\nscore = {{ type = \"tool_call\", calls = [{{ name = \"get_weather\", arguments = {{ city = \"Paris\" }} }}] }}\n"
        );
        let catalogue = load(&[("factual.toml", &text)]).unwrap();
        let p = catalogue.get("weather").unwrap();
        let tool_use = p.tool_use.as_ref().unwrap();
        assert_eq!(tool_use.names(), ["get_weather"]);
        assert_eq!(tool_use.turns.len(), 1);
        let ScorerSpec::ToolCall { schemas, .. } = &p.score else {
            panic!("{:?}", p.score)
        };
        assert!(schemas.contains_key("get_weather"));
        let ctx = ScoreContext::for_catalogue(&catalogue.dir);
        assert_eq!(
            crate::score::score(&p.score, &p.reference, &ctx).correct,
            Some(true)
        );
        let unbound = text.replace(tools, "");
        let err = load(&[("factual.toml", &unbound)]).unwrap_err();
        assert!(
            err.problems[0].contains("a `tool_call` score needs `tool_use`"),
            "{err}"
        );
    }

    #[test]
    fn line_numbers_of_offsets_in_any_order() {
        let text = "a\nb\nc\n";
        let mut lines = LineCounter::new(text);
        assert_eq!(lines.line_of(4), 3);
        assert_eq!(lines.line_of(0), 1);
        assert_eq!(lines.line_of(2), 2);
        assert_eq!(lines.line_of(100), 4);
        assert_eq!(line_of(text, 5), 3);
    }

    #[test]
    fn a_js_prompt_whose_suite_file_is_missing_is_refused_naming_the_file() {
        let text = r#"
[[prompt]]
id = "gone"
user = "Write f."
reference = "function f() {}"
wrong = "nothing"
score = { type = "js", suite = "code_generation/gone.toml", function = "f" }
"#;
        let err = load(&[("code_generation.toml", text)]).unwrap_err();
        let all = err.problems.join("\n");
        assert!(
            all.contains("code_generation.toml:2: prompt `gone`"),
            "{all}"
        );
        assert!(
            all.contains("/nonexistent-catalogue/scorers/code_generation/gone.toml"),
            "{all}"
        );
    }

    #[test]
    fn numbers_that_would_match_any_answer_are_refused() {
        let huge = format!("1{}", "0".repeat(400));
        for score in [
            format!(r#"{{ type = "numeric", expected = "{huge}" }}"#),
            r#"{ type = "numeric", expected = "2", tolerance = inf }"#.to_string(),
            r#"{ type = "numeric", expected = "2", tolerance = nan }"#.to_string(),
            r#"{ type = "numeric", expected = "2", tolerance = -0.5 }"#.to_string(),
        ] {
            let text = numeric_prompt("n", &score);
            let err = load(&[("deterministic_math.toml", &text)]).unwrap_err();
            let all = err.problems.join("\n");
            assert!(
                all.contains("deterministic_math.toml:1: prompt `n`: score:"),
                "{score}: {all}"
            );
        }
        let fine = numeric_prompt(
            "n",
            r#"{ type = "numeric", expected = "2", tolerance = 0.5 }"#,
        );
        assert!(load(&[("deterministic_math.toml", &fine)]).is_ok());
    }
}
