//! Project tasks: `<projects>/<id>/task.toml` (requirements, scenarios, limits) beside the
//! specification (`spec.md`) and the scripted playthroughs (`playthrough.js`). The catalogue
//! loader reads `prompts/*.toml` only, so `prompts/projects/` is never counted among its prompts.
//! Every problem in a task file is an error naming the file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex::Regex;
use serde::Deserialize;

/// How a requirement is checked in the extracted source.
#[derive(Debug, Clone)]
pub enum StaticCheck {
    /// Met when every pattern matches (and no `none` pattern does); partial when some do.
    All { all: Vec<Regex>, none: Vec<Regex> },
    /// Met when `pattern` matches at least `min` times; partial when it matches at all.
    Count { pattern: Regex, min: usize },
    /// Met when `pattern` occurs and every occurrence sits inside a `try` block.
    Guarded { pattern: Regex },
    /// Met when every declared function is referenced somewhere besides its declaration.
    NoDeadCode,
}

/// Which text a static check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The extracted scripts, comments removed.
    Js,
    /// The extracted scripts as written, comments kept (for checks on the comment style).
    Comments,
    /// The page, scripts included.
    Html,
}

/// One requirement of the checklist.
#[derive(Debug, Clone)]
pub struct Requirement {
    pub id: String,
    pub title: String,
    /// How it is checked, in words (shown in the report).
    pub how: String,
    pub source: Source,
    pub static_check: Option<StaticCheck>,
    /// The playthrough probe that decides it (`no_errors` is computed from every scenario).
    pub probe: Option<String>,
}

/// One scripted playthrough: a fresh page load, then the named scenario of the playthrough script.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    /// `normal`, or `private`: localStorage.setItem throws like Safari's private mode.
    #[serde(default = "normal")]
    pub storage: String,
    /// localStorage entries present before the page loads.
    #[serde(default)]
    pub storage_preset: BTreeMap<String, String>,
    /// Length of one display frame in virtual milliseconds.
    #[serde(default = "sixty_hz")]
    pub frame_ms: f64,
    /// Whether an uncaught error here makes the artifact unplayable (false for private mode).
    #[serde(default = "yes")]
    pub counts_for_playable: bool,
}

fn normal() -> String {
    "normal".into()
}
fn sixty_hz() -> f64 {
    1000.0 / 60.0
}
fn yes() -> bool {
    true
}

/// A loaded project task.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    pub title: String,
    pub dir: PathBuf,
    /// The specification sent to the model.
    pub spec: String,
    /// A system message sent before it, if any.
    pub system: Option<String>,
    pub max_tokens: u32,
    pub playthrough: String,
    pub scenarios: Vec<Scenario>,
    pub requirements: Vec<Requirement>,
    /// Probes that must be met (with no uncaught error) for the artifact to count as playable.
    pub playable: Vec<String>,
    /// Wall-clock limit per scenario run, in seconds.
    pub scenario_timeout_s: u64,
}

impl Task {
    /// Words of the specification.
    pub fn spec_words(&self) -> usize {
        self.spec.split_whitespace().count()
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    id: String,
    title: String,
    #[serde(default = "spec_file")]
    spec: String,
    #[serde(default)]
    system: Option<String>,
    #[serde(default = "default_budget")]
    max_tokens: u32,
    #[serde(default = "playthrough_file")]
    playthrough: String,
    #[serde(default = "default_timeout")]
    scenario_timeout_s: u64,
    #[serde(default)]
    playable: Vec<String>,
    #[serde(default, rename = "scenario")]
    scenarios: Vec<toml::Spanned<Scenario>>,
    #[serde(default, rename = "requirement")]
    requirements: Vec<toml::Spanned<RawRequirement>>,
}

fn spec_file() -> String {
    "spec.md".into()
}
fn playthrough_file() -> String {
    "playthrough.js".into()
}
fn default_budget() -> u32 {
    32768
}
fn default_timeout() -> u64 {
    60
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequirement {
    id: String,
    title: String,
    how: String,
    #[serde(default, rename = "static")]
    static_check: Option<RawStatic>,
    #[serde(default)]
    probe: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStatic {
    #[serde(default = "js_source")]
    source: Source,
    #[serde(default)]
    all: Vec<String>,
    #[serde(default)]
    none: Vec<String>,
    #[serde(default)]
    count: Option<String>,
    #[serde(default)]
    min: Option<usize>,
    #[serde(default)]
    guarded: Option<String>,
    #[serde(default)]
    dead_code: bool,
}

fn js_source() -> Source {
    Source::Js
}

/// The project tasks folder: `--projects DIR`, else `prompts/projects` here.
pub fn projects_dir(flag: Option<&Path>) -> PathBuf {
    flag.map_or_else(|| PathBuf::from("prompts/projects"), Path::to_path_buf)
}

/// Every task id in `dir` (folders holding a `task.toml`), sorted.
pub fn task_ids(dir: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        format!(
            "{}: cannot read the project tasks folder: {e}",
            dir.display()
        )
    })?;
    let mut ids: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("task.toml").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    ids.sort();
    if ids.is_empty() {
        return Err(format!(
            "{}: no project tasks (no <id>/task.toml)",
            dir.display()
        ));
    }
    Ok(ids)
}

/// Load `dir/<id>/task.toml` with its specification and playthrough script.
pub fn load_task(dir: &Path, id: &str) -> Result<Task, String> {
    let task_dir = dir.join(id);
    let file = task_dir.join("task.toml");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("{}: cannot read: {e}", file.display()))?;
    parse_task(&text, &file, &task_dir)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// A problem in a task file: the line it is on and what is wrong.
type LineError = (usize, String);

/// Checks one scenario's storage, frame length and name.
fn check_scenario(s: &Scenario) -> Result<(), String> {
    if !["normal", "private"].contains(&s.storage.as_str()) {
        return Err(format!(
            "scenario `{}`: storage must be `normal` or `private`, not `{}`",
            s.name, s.storage
        ));
    }
    if !(s.frame_ms > 0.0 && s.frame_ms <= 1000.0) {
        return Err(format!(
            "scenario `{}`: frame_ms must be in (0, 1000]",
            s.name
        ));
    }
    if !s
        .name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(format!(
            "scenario `{}`: use letters, digits and _ only",
            s.name
        ));
    }
    Ok(())
}

/// The task's scenarios, each checked; at least one.
fn scenarios(raw: Vec<toml::Spanned<Scenario>>, text: &str) -> Result<Vec<Scenario>, LineError> {
    let mut scenarios = Vec::new();
    for s in raw {
        let line = line_of(text, s.span().start);
        let s = s.into_inner();
        check_scenario(&s).map_err(|e| (line, e))?;
        scenarios.push(s);
    }
    if scenarios.is_empty() {
        return Err((1, "no [[scenario]]".into()));
    }
    Ok(scenarios)
}

/// One requirement with its static check compiled; it needs a static check, a probe or both.
fn requirement(r: RawRequirement) -> Result<Requirement, String> {
    let (source, static_check) = match r.static_check {
        Some(s) => {
            let (source, check) =
                static_of(s).map_err(|e| format!("requirement `{}`: {e}", r.id))?;
            (source, Some(check))
        }
        None => (Source::Js, None),
    };
    if static_check.is_none() && r.probe.is_none() {
        return Err(format!(
            "requirement `{}`: give `static` or `probe` (or both)",
            r.id
        ));
    }
    Ok(Requirement {
        id: r.id,
        title: r.title,
        how: r.how,
        source,
        static_check,
        probe: r.probe,
    })
}

/// The task's requirements, ids unique; at least one, and every `playable` probe used by one.
fn requirements(
    raw: Vec<toml::Spanned<RawRequirement>>,
    playable: &[String],
    text: &str,
) -> Result<Vec<Requirement>, LineError> {
    let mut requirements: Vec<Requirement> = Vec::new();
    for r in raw {
        let line = line_of(text, r.span().start);
        let r = r.into_inner();
        if requirements.iter().any(|x| x.id == r.id) {
            return Err((line, format!("requirement `{}` is defined twice", r.id)));
        }
        requirements.push(requirement(r).map_err(|e| (line, e))?);
    }
    if requirements.is_empty() {
        return Err((1, "no [[requirement]]".into()));
    }
    for p in playable {
        if !requirements.iter().any(|r| r.probe.as_deref() == Some(p)) {
            return Err((1, format!("playable: no requirement uses the probe `{p}`")));
        }
    }
    Ok(requirements)
}

/// Parse a task file; `file` names it in errors, `dir` holds its spec and playthrough.
pub fn parse_task(text: &str, file: &Path, dir: &Path) -> Result<Task, String> {
    let at = |line: usize, msg: String| format!("{}:{line}: {msg}", file.display());
    let raw: RawTask = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        at(line, e.message().to_string())
    })?;
    let read = |name: &str, what: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path)
            .map_err(|e| at(1, format!("cannot read the {what} {}: {e}", path.display())))
    };
    let spec = read(&raw.spec, "specification")?;
    let playthrough = read(&raw.playthrough, "playthrough script")?;
    if raw.id.trim().is_empty() || raw.id.contains(['/', '\\']) {
        return Err(at(1, format!("invalid task id `{}`", raw.id)));
    }
    let scenarios = scenarios(raw.scenarios, text).map_err(|(line, e)| at(line, e))?;
    let requirements =
        requirements(raw.requirements, &raw.playable, text).map_err(|(line, e)| at(line, e))?;
    Ok(Task {
        id: raw.id,
        title: raw.title,
        dir: dir.to_path_buf(),
        spec,
        system: raw.system,
        max_tokens: raw.max_tokens.max(1),
        playthrough,
        scenarios,
        requirements,
        playable: raw.playable,
        scenario_timeout_s: raw.scenario_timeout_s.clamp(1, 600),
    })
}

fn static_of(s: RawStatic) -> Result<(Source, StaticCheck), String> {
    let compile = |p: &str| Regex::new(p).map_err(|e| format!("invalid pattern `{p}`: {e}"));
    let kinds = usize::from(!s.all.is_empty())
        + usize::from(s.count.is_some())
        + usize::from(s.guarded.is_some())
        + usize::from(s.dead_code);
    if kinds != 1 {
        return Err(
            "a static check needs exactly one of `all`, `count`, `guarded`, `dead_code`".into(),
        );
    }
    let check = if let Some(p) = &s.count {
        StaticCheck::Count {
            pattern: compile(p)?,
            min: s.min.unwrap_or(1).max(1),
        }
    } else if let Some(p) = &s.guarded {
        StaticCheck::Guarded {
            pattern: compile(p)?,
        }
    } else if s.dead_code {
        StaticCheck::NoDeadCode
    } else {
        StaticCheck::All {
            all: s.all.iter().map(|p| compile(p)).collect::<Result<_, _>>()?,
            none: s
                .none
                .iter()
                .map(|p| compile(p))
                .collect::<Result<_, _>>()?,
        }
    };
    Ok((s.source, check))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Task, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("spec.md"), "Build a game.").unwrap();
        std::fs::write(dir.path().join("playthrough.js"), "var __scenarios = {};").unwrap();
        parse_task(text, Path::new("task.toml"), dir.path())
    }

    const HEAD: &str = "id = \"t\"\ntitle = \"T\"\n[[scenario]]\nname = \"main\"\n";

    #[test]
    fn a_small_task_loads() {
        let t = parse(&format!(
            "{HEAD}[[requirement]]\nid = \"R1\"\ntitle = \"x\"\nhow = \"y\"\nstatic = {{ all = [\"foo\"] }}\n"
        ))
        .unwrap();
        assert_eq!(t.requirements.len(), 1);
        assert_eq!(t.spec_words(), 3);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let bad_regex = parse(&format!(
            "{HEAD}\n[[requirement]]\nid = \"R1\"\ntitle = \"x\"\nhow = \"y\"\nstatic = {{ all = [\"(\"] }}\n"
        ))
        .unwrap_err();
        assert!(
            bad_regex.starts_with("task.toml:6: requirement `R1`: invalid pattern"),
            "{bad_regex}"
        );
        let unknown = parse(&format!("{HEAD}colour = 3\n")).unwrap_err();
        assert!(unknown.starts_with("task.toml:"), "{unknown}");
        let neither = parse(&format!(
            "{HEAD}[[requirement]]\nid = \"R1\"\ntitle = \"x\"\nhow = \"y\"\n"
        ))
        .unwrap_err();
        assert!(neither.contains("task.toml:5:"), "{neither}");
        let syntax = parse("id = \n").unwrap_err();
        assert!(syntax.starts_with("task.toml:1:"), "{syntax}");
    }
}
