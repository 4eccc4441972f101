//! Program-output prediction: a small JavaScript program generated from a Rust syntax tree
//! (variables, a loop, a branch, arithmetic with `%`), whose output Rust computes by evaluating
//! the same tree. `prompts check` also runs every program in the sandboxed JS engine and
//! compares ([`confirm_in_engine`]).

use std::path::Path;

use fastrand::Rng;

use super::levels::by_level;
use super::Item;
use crate::catalogue::spec::Prompt;
use crate::score::js::{run_script, EngineLimits, ProcessLimits, ScriptJob, ScriptOutcome};
use crate::score::ScorerSpec;

const NAMES: [&str; 3] = ["a", "b", "c"];
/// The loop counter's slot after the variables.
const COUNTER: usize = 3;
/// Values beyond this are regenerated, so JS numbers stay exact integers.
const LIMIT: i64 = 1_000_000;
/// Where the program sits in the question, between its fences.
const FENCE_OPEN: &str = "```javascript\n";
const FENCE_CLOSE: &str = "```";

#[derive(Debug, Clone)]
enum Expr {
    Num(i64),
    Var(usize),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    /// Remainder by a positive constant (JS and Rust agree on its sign).
    Rem(Box<Expr>, i64),
}

#[derive(Debug, Clone)]
enum Cond {
    Less(usize, usize),
    Even(usize),
}

#[derive(Debug, Clone)]
enum Stmt {
    Assign(usize, Expr),
    If(Cond, Vec<Stmt>, Vec<Stmt>),
    /// `for (let i = 0; i < n; i++) { body }`
    Loop(i64, Vec<Stmt>),
}

struct Program {
    init: [i64; 3],
    body: Vec<Stmt>,
    /// The variables printed by the final `console.log`.
    printed: Vec<usize>,
}

pub(super) fn make(rng: &mut Rng) -> Item {
    // A program whose values stay small; a few draws at most (each is rarely too large).
    let (program, output) = loop {
        let program = random_program(rng);
        if let Some(output) = run(&program) {
            break (program, output);
        }
    };
    asked(&program, output)
}

/// Draws before a level's program falls back to version 2's shape (never reached in the tests).
const TRIES: usize = 10_000;

/// At `level`: one sum of two variables (level 1), two and three straight assignments with a
/// branch (2, 3), a loop of two or three turns (4), version 2's shape (5), then longer loops,
/// two loops and three loops of five to nine turns with a branch in each (6 to 8).
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    if level == 5 {
        return make(rng);
    }
    for _ in 0..TRIES {
        let program = leveled_program(rng, level);
        if let Some(output) = run(&program) {
            return asked(&program, output);
        }
    }
    make(rng)
}

/// A program of `level`'s shape (any level but 5, which is version 2's).
fn leveled_program(rng: &mut Rng, level: u8) -> Program {
    let init = [rng.i64(1..10), rng.i64(1..10), rng.i64(0..10)];
    let branch = |rng: &mut Rng| {
        let x = rng.usize(..3);
        Stmt::If(
            if rng.bool() {
                Cond::Even(x)
            } else {
                Cond::Less(x, (x + rng.usize(1..3)) % 3)
            },
            vec![random_assign(rng, true)],
            vec![random_assign(rng, true)],
        )
    };
    let (body, printed) = match level {
        ..=1 => (
            vec![Stmt::Assign(
                2,
                Expr::Add(Box::new(Expr::Var(0)), Box::new(Expr::Var(1))),
            )],
            vec![2],
        ),
        2 => (
            vec![random_assign(rng, false), random_assign(rng, false)],
            vec![0, 1],
        ),
        3 => (vec![branch(rng), random_assign(rng, false)], vec![0, 1]),
        4 => (
            vec![Stmt::Loop(rng.i64(2..4), vec![random_assign(rng, true)])],
            vec![0, 1],
        ),
        _ => {
            let (loops, turns) = by_level(
                level,
                [
                    (0, (0, 0)),
                    (0, (0, 0)),
                    (0, (0, 0)),
                    (0, (0, 0)),
                    (0, (0, 0)),
                    (1, (6, 11)),
                    (2, (4, 8)),
                    (3, (5, 9)),
                ],
            );
            let body = (0..loops)
                .map(|_| {
                    let n = rng.i64(turns.0..turns.1);
                    Stmt::Loop(n, vec![branch(rng), random_assign(rng, true)])
                })
                .collect();
            (body, vec![0, 1, 2])
        }
    };
    Program {
        init,
        body,
        printed,
    }
}

/// The question for `program`, which prints `output`.
fn asked(program: &Program, output: String) -> Item {
    let code = render(program);
    let wrong = {
        let mut parts: Vec<String> = output.split(' ').map(String::from).collect();
        let last = parts.len() - 1;
        let n: i64 = parts[last].parse().unwrap_or_default();
        parts[last] = (n + 1).to_string();
        parts.join(" ")
    };
    Item {
        question: format!(
            "What does this JavaScript program print? Reply with the exact output only.\n\n{FENCE_OPEN}{code}{FENCE_CLOSE}"
        ),
        reference: output.clone(),
        wrong,
        score: ScorerSpec::Output { expected: output },
    }
}

fn random_program(rng: &mut Rng) -> Program {
    let init = [rng.i64(1..20), rng.i64(1..20), rng.i64(0..10)];
    let loop_body = vec![
        Stmt::If(
            if rng.bool() {
                Cond::Even(rng.usize(..3))
            } else {
                let x = rng.usize(..3);
                Cond::Less(x, (x + rng.usize(1..3)) % 3)
            },
            vec![random_assign(rng, true)],
            vec![random_assign(rng, true)],
        ),
        random_assign(rng, true),
    ];
    let mut body = vec![Stmt::Loop(rng.i64(3..7), loop_body)];
    if rng.bool() {
        body.push(random_assign(rng, false));
    }
    let printed = if rng.bool() {
        vec![0, 1]
    } else {
        vec![0, 1, 2]
    };
    Program {
        init,
        body,
        printed,
    }
}

fn random_assign(rng: &mut Rng, in_loop: bool) -> Stmt {
    let target = rng.usize(..3);
    let operand = |rng: &mut Rng| -> Expr {
        match rng.u8(..3) {
            0 => Expr::Num(rng.i64(1..10)),
            1 if in_loop => Expr::Var(COUNTER),
            _ => Expr::Var(rng.usize(..3)),
        }
    };
    let left = Box::new(Expr::Var(target));
    let right = Box::new(operand(rng));
    let expr = match rng.u8(..5) {
        0 => Expr::Add(left, right),
        1 => Expr::Sub(left, right),
        2 => Expr::Mul(left, Box::new(Expr::Num(rng.i64(2..4)))),
        3 => Expr::Rem(Box::new(Expr::Add(left, right)), rng.i64(5..13)),
        _ => Expr::Add(Box::new(Expr::Mul(left, Box::new(Expr::Num(2)))), right),
    };
    Stmt::Assign(target, expr)
}

/// What the program prints, or `None` when a value leaves ±[`LIMIT`].
fn run(program: &Program) -> Option<String> {
    let mut vars = [program.init[0], program.init[1], program.init[2], 0];
    exec(&program.body, &mut vars)?;
    Some(
        program
            .printed
            .iter()
            .map(|&v| vars[v].to_string())
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn exec(stmts: &[Stmt], vars: &mut [i64; 4]) -> Option<()> {
    for stmt in stmts {
        match stmt {
            Stmt::Assign(v, e) => vars[*v] = eval(e, vars)?,
            Stmt::If(c, then, otherwise) => {
                let holds = match c {
                    Cond::Less(x, y) => vars[*x] < vars[*y],
                    Cond::Even(x) => vars[*x] % 2 == 0,
                };
                exec(if holds { then } else { otherwise }, vars)?;
            }
            Stmt::Loop(n, body) => {
                for i in 0..*n {
                    vars[COUNTER] = i;
                    exec(body, vars)?;
                }
            }
        }
    }
    Some(())
}

fn eval(e: &Expr, vars: &[i64; 4]) -> Option<i64> {
    let v = match e {
        Expr::Num(n) => *n,
        Expr::Var(v) => vars[*v],
        Expr::Add(a, b) => eval(a, vars)?.checked_add(eval(b, vars)?)?,
        Expr::Sub(a, b) => eval(a, vars)?.checked_sub(eval(b, vars)?)?,
        Expr::Mul(a, b) => eval(a, vars)?.checked_mul(eval(b, vars)?)?,
        Expr::Rem(a, m) => eval(a, vars)?.checked_rem(*m)?,
    };
    (v.abs() <= LIMIT).then_some(v)
}

fn render(program: &Program) -> String {
    let mut out = String::new();
    for (i, value) in program.init.iter().enumerate() {
        out.push_str(&format!("let {} = {value};\n", NAMES[i]));
    }
    render_block(&program.body, 0, &mut out);
    let printed: Vec<&str> = program.printed.iter().map(|&v| NAMES[v]).collect();
    out.push_str(&format!("console.log({});\n", printed.join(", ")));
    out
}

fn render_block(stmts: &[Stmt], depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for stmt in stmts {
        match stmt {
            Stmt::Assign(v, e) => out.push_str(&format!("{pad}{} = {};\n", NAMES[*v], expr(e))),
            Stmt::If(c, then, otherwise) => {
                let cond = match c {
                    Cond::Less(x, y) => format!("{} < {}", name(*x), name(*y)),
                    Cond::Even(x) => format!("{} % 2 === 0", name(*x)),
                };
                out.push_str(&format!("{pad}if ({cond}) {{\n"));
                render_block(then, depth + 1, out);
                out.push_str(&format!("{pad}}} else {{\n"));
                render_block(otherwise, depth + 1, out);
                out.push_str(&format!("{pad}}}\n"));
            }
            Stmt::Loop(n, body) => {
                out.push_str(&format!("{pad}for (let i = 0; i < {n}; i++) {{\n"));
                render_block(body, depth + 1, out);
                out.push_str(&format!("{pad}}}\n"));
            }
        }
    }
}

fn name(v: usize) -> &'static str {
    if v == COUNTER {
        "i"
    } else {
        NAMES[v]
    }
}

fn expr(e: &Expr) -> String {
    match e {
        Expr::Num(n) => n.to_string(),
        Expr::Var(v) => name(*v).to_string(),
        Expr::Add(a, b) => format!("{} + {}", expr(a), expr(b)),
        Expr::Sub(a, b) => format!("{} - {}", expr(a), operand(b)),
        Expr::Mul(a, b) => format!("{} * {}", operand(a), operand(b)),
        Expr::Rem(a, m) => format!("({}) % {m}", expr(a)),
    }
}

/// An operand that binds tighter than `-` and `*`: sums are parenthesised.
fn operand(e: &Expr) -> String {
    match e {
        Expr::Add(..) | Expr::Sub(..) => format!("({})", expr(e)),
        _ => expr(e),
    }
}

/// The program inside a generated question, between its fences.
fn program_of(question: &str) -> Option<&str> {
    let start = question.find(FENCE_OPEN)? + FENCE_OPEN.len();
    let len = question[start..].find(FENCE_CLOSE)?;
    Some(&question[start..start + len])
}

/// Runs every generated program among `prompts` in the sandboxed JS engine (one worker for all)
/// and returns a problem for each whose printed output differs from the expected one.
pub fn confirm_in_engine(prompts: &[Prompt], worker: &Path) -> Vec<String> {
    let programs: Vec<(&Prompt, &str, &str)> = prompts
        .iter()
        .filter_map(|p| match &p.score {
            ScorerSpec::Output { expected } if p.suite == crate::catalogue::Suite::Generated => {
                Some((p, program_of(p.question())?, expected.as_str()))
            }
            _ => None,
        })
        .collect();
    if programs.is_empty() {
        return Vec::new();
    }
    // Each program runs in its own function scope with a console that records what it logs.
    let scripts = programs
        .iter()
        .map(|(_, code, _)| {
            format!(
                "__coherence_out.push((function () {{ const __lines = []; const console = {{ log: (...xs) => __lines.push(xs.join(' ')) }};\n{code}\nreturn __lines.join('\\n'); }})());"
            )
        })
        .collect();
    let job = ScriptJob {
        prelude: "var __coherence_out = []; var __coherence_errors = [];".into(),
        scripts,
        error_hook: "__coherence_errors.push".into(),
        after_load: String::new(),
        driver: "[][Symbol.iterator]()".into(),
        max_steps: 1,
        report: "JSON.stringify({ out: __coherence_out, errors: __coherence_errors })".into(),
        limits: EngineLimits::default(),
    };
    let limits = ProcessLimits {
        timeout: std::time::Duration::from_secs(60),
        ..ProcessLimits::default()
    };
    let report = match run_script(worker, &job, limits) {
        Ok(ScriptOutcome::Report(report)) => report,
        Ok(other) => {
            return vec![format!(
                "generated programs: the JS engine did not finish: {other:?}"
            )]
        }
        Err(e) => return vec![format!("generated programs: {e}")],
    };
    #[derive(serde::Deserialize)]
    struct Report {
        out: Vec<String>,
        errors: Vec<String>,
    }
    let report: Report = match serde_json::from_str(&report) {
        Ok(r) => r,
        Err(e) => return vec![format!("generated programs: unreadable engine report: {e}")],
    };
    let mut problems: Vec<String> = report
        .errors
        .iter()
        .map(|e| format!("generated programs: a program threw in the JS engine: {e}"))
        .collect();
    if report.out.len() != programs.len() {
        problems.push(format!(
            "generated programs: the JS engine ran {} of {} programs",
            report.out.len(),
            programs.len()
        ));
        return problems;
    }
    for ((p, _, expected), printed) in programs.iter().zip(&report.out) {
        if printed != expected {
            problems.push(format!(
                "{}: prompt `{}`: the JS engine prints {printed:?}, the generator expects {expected:?}",
                p.source, p.id
            ));
        }
    }
    problems
}
