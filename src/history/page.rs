//! The trend page: one self-contained HTML file (inline CSS and SVG, no script, nothing fetched)
//! showing, per watch, its checks over time (identity, behaviour, substituted share) and a table
//! of every check linking to that check's report.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Component, Path};

use super::{Check, CheckStatus};
use crate::doc::{fmt_num, html_text as esc};

/// The page for `checks` (oldest first, each with its id), to be written in the folder
/// `page_dir` (report links below it are relative, others `file://` URLs).
pub fn render(checks: &[(i64, Check)], page_dir: &Path) -> String {
    let mut by_name: BTreeMap<&str, Vec<&(i64, Check)>> = BTreeMap::new();
    for row in checks {
        by_name.entry(row.1.name.as_str()).or_default().push(row);
    }
    let mut out = String::from(HEAD);
    out.push_str("<h1>Watch history</h1>\n");
    match (checks.first(), checks.last()) {
        (Some((_, first)), Some((_, last))) => {
            let _ = writeln!(
                out,
                "<p id=\"summary\"><strong>{}</strong> of {} from {} to {}.</p>",
                count(checks.len(), "check", "checks"),
                count(by_name.len(), "watch", "watches"),
                esc(&first.started_at),
                esc(&last.started_at),
            );
        }
        _ => out.push_str(
            "<p id=\"summary\"><strong>No checks yet.</strong> <code>coherence watch</code> \
             records one here each time it checks an endpoint.</p>\n",
        ),
    }
    if by_name.len() > 1 {
        out.push_str("<nav><ul>\n");
        for (i, name) in by_name.keys().enumerate() {
            let _ = writeln!(out, "<li><a href=\"#watch-{i}\">{}</a></li>", esc(name));
        }
        out.push_str("</ul></nav>\n");
    }
    for (i, (name, rows)) in by_name.iter().enumerate() {
        watch_section(&mut out, i, name, rows, page_dir);
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// `1 check`, `3 checks`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

const HEAD: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>coherence: watch history</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2430; background: #fff; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.5rem; border-bottom: 1px solid #ccd; }
figure { margin: 1rem 0; } figcaption { font-weight: 600; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #556; }
.axis { stroke: #99a; stroke-width: 1; } .grid { stroke: #e3e6ee; stroke-width: 1; }
.ref { stroke: #778; stroke-dasharray: 4 3; }
.bar { stroke: #445; stroke-width: 1.5; }
table { border-collapse: collapse; font-size: 13px; width: 100%; }
th, td { border-bottom: 1px solid #e3e6ee; padding: 3px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; } td.time { white-space: nowrap; }
.muted { color: #667; }
.s-unchanged, .v-identical, .v-equivalent { fill: #2e8540; color: #2e8540; }
.s-flagged, .v-different { fill: #c62828; color: #c62828; }
.v-perturbed { fill: #e07b00; color: #b86400; }
.s-incomplete, .v-undecided, .v-other { fill: #8a8f9c; color: #5f6470; }
.share { fill: #3559b7; }
td.s-unchanged, td.s-flagged, td.s-incomplete { font-weight: 600; }
</style>
</head>
<body>
<main>
"#;

/// One watch: what it watches, its three timelines and its table.
fn watch_section(out: &mut String, i: usize, name: &str, rows: &[&(i64, Check)], dir: &Path) {
    let Some((_, latest)) = rows.last() else {
        return;
    };
    let statuses = CheckStatus::ALL
        .iter()
        .map(|&s| {
            let n = rows.iter().filter(|r| r.1.status == s).count();
            count(n, s.as_str(), s.as_str())
        })
        .collect::<Vec<_>>()
        .join(", ");
    let _ = write!(
        out,
        "<section id=\"watch-{i}\">\n<h2>{}</h2>\n<p>{}: {statuses}. Latest, {}: \
         <strong class=\"{}\">{}</strong>: {}</p>\n<p class=\"muted\">{} against the baseline \
         {}</p>\n",
        esc(name),
        count(rows.len(), "check", "checks"),
        esc(&latest.started_at),
        status_class(latest.status),
        esc(latest.status.as_str()),
        esc(&latest.because),
        esc(&latest.endpoint),
        esc(&latest.baseline),
    );
    let checks: Vec<&Check> = rows.iter().map(|r| &r.1).collect();
    identity_chart(out, &checks);
    behaviour_chart(out, &checks);
    share_chart(out, &checks);
    checks_table(out, rows, dir);
    out.push_str("</section>\n");
}

/// The CSS class of a status (`s-…`), of a verdict (`v-…`); an unknown verdict reads as
/// `other`.
fn status_class(status: CheckStatus) -> &'static str {
    match status {
        CheckStatus::Unchanged => "s-unchanged",
        CheckStatus::Flagged => "s-flagged",
        CheckStatus::Incomplete => "s-incomplete",
    }
}

fn verdict_class(verdict: &str) -> &'static str {
    match verdict {
        "identical" => "v-identical",
        "equivalent" => "v-equivalent",
        "perturbed" => "v-perturbed",
        "different" => "v-different",
        "undecided" => "v-undecided",
        _ => "v-other",
    }
}

/// The drawing area every timeline shares: checks evenly spaced left to right.
struct Frame {
    n: usize,
    height: f64,
}

const WIDTH: f64 = 960.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 22.0;

impl Frame {
    fn x(&self, i: usize) -> f64 {
        LEFT + (WIDTH - LEFT - RIGHT) * (i as f64 + 0.5) / self.n.max(1) as f64
    }

    /// `y` for a value at `t` of the way up (0 bottom, 1 top; clamped).
    fn y(&self, t: f64) -> f64 {
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        self.height - BOTTOM - (self.height - TOP - BOTTOM) * t
    }

    /// A point's radius: smaller as checks crowd.
    fn radius(&self) -> f64 {
        ((WIDTH - LEFT - RIGHT) / self.n.max(1) as f64 / 2.5).clamp(1.5, 4.5)
    }

    /// The opening of the figure: caption, SVG, the y grid with labels, the time axis.
    fn open(&self, out: &mut String, caption: &str, label: &str, ticks: &[(f64, String)]) {
        let _ = write!(
            out,
            "<figure>\n<figcaption>{caption}</figcaption>\n<svg viewBox=\"0 0 {WIDTH} {h}\" \
             width=\"{WIDTH}\" height=\"{h}\" role=\"img\" aria-label=\"{label}\">\n",
            h = self.height,
        );
        for (t, text) in ticks {
            let y = self.y(*t);
            let _ = writeln!(
                out,
                "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
                 <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                WIDTH - RIGHT,
                LEFT - 6.0,
                y + 4.0,
                esc(text)
            );
        }
        let base = self.height - BOTTOM;
        let _ = writeln!(
            out,
            "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{base}\"/>"
        );
    }

    /// The time axis (the first and last check's time) and the end of the figure.
    fn close(&self, out: &mut String, checks: &[&Check]) {
        let y = self.height - 6.0;
        if let (Some(first), Some(last)) = (checks.first(), checks.last()) {
            let _ = write!(
                out,
                "<text x=\"{LEFT}\" y=\"{y}\">{}</text>",
                esc(&first.started_at)
            );
            if checks.len() > 1 {
                let _ = write!(
                    out,
                    "<text x=\"{}\" y=\"{y}\" text-anchor=\"end\">{}</text>",
                    WIDTH - RIGHT,
                    esc(&last.started_at)
                );
            }
        }
        out.push_str("\n</svg>\n</figure>\n");
    }

    /// A vertical interval from `low` to `high` (fractions of the height) at check `i`.
    fn interval(&self, out: &mut String, i: usize, low: f64, high: f64) {
        let x = self.x(i);
        let cap = self.radius();
        let (y1, y2) = (self.y(low), self.y(high));
        let _ = write!(
            out,
            "<path class=\"bar\" d=\"M{x:.1} {y1:.1}V{y2:.1}M{:.1} {y1:.1}h{:.1}M{:.1} {y2:.1}h{:.1}\"/>",
            x - cap,
            2.0 * cap,
            x - cap,
            2.0 * cap
        );
    }

    /// A point at check `i`, `t` of the way up, with its tooltip.
    fn point(&self, out: &mut String, i: usize, t: f64, class: &str, title: &str) {
        let _ = writeln!(
            out,
            "<circle class=\"{class}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"{:.1}\"><title>{}</title></circle>",
            self.x(i),
            self.y(t),
            self.radius(),
            esc(title)
        );
    }
}

/// Identity: each check's status as a strip along the top, and its e-value on a log scale,
/// coloured by the identity verdict.
fn identity_chart(out: &mut String, checks: &[&Check]) {
    let frame = Frame {
        n: checks.len(),
        height: 190.0,
    };
    let logs: Vec<f64> = checks
        .iter()
        .map(|c| c.e_value)
        .filter(|e| e.is_finite() && *e > 0.0)
        .map(f64::log10)
        .collect();
    let low = logs.iter().copied().fold(0.0, f64::min).floor().max(-30.0);
    let high = logs.iter().copied().fold(2.0, f64::max).ceil().min(300.0);
    let span = (high - low).max(1.0);
    let at = |log: f64| (log - low) / span;
    // Every `step` decades from 1 (always labelled: the line of no evidence) both ways.
    let step = (span / 6.0).ceil().max(1.0);
    let ticks: Vec<(f64, String)> = ((low / step).floor() as i64..=(high / step).floor() as i64)
        .map(|j| j as f64 * step)
        .filter(|k| (low..=high).contains(k))
        .map(|k| (at(k), decade(k)))
        .collect();
    frame.open(
        out,
        "Identity: e-value against the baseline (log scale; above 1, evidence of a change), \
         coloured by verdict; the strip on top is each check's status",
        "identity e-values over time",
        &ticks,
    );
    let one = frame.y(at(0.0));
    let _ = writeln!(
        out,
        "<line class=\"ref\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{one:.1}\" y2=\"{one:.1}\"/>",
        WIDTH - RIGHT
    );
    let width = (WIDTH - LEFT - RIGHT) / checks.len().max(1) as f64;
    for (i, c) in checks.iter().enumerate() {
        let _ = writeln!(
            out,
            "<rect class=\"{}\" x=\"{:.1}\" y=\"2\" width=\"{:.1}\" height=\"7\"><title>{}</title></rect>",
            status_class(c.status),
            frame.x(i) - width / 2.0,
            (width - 1.0).max(0.5),
            esc(&format!("{}: {}", c.started_at, c.status))
        );
        let t = match c.e_value {
            e if e.is_nan() || e <= 0.0 => continue,
            e if e.is_infinite() => 1.0,
            e => at(e.log10()),
        };
        let title = format!(
            "{}: {}, e-value {}",
            c.started_at,
            c.identity,
            c.e_value_text()
        );
        frame.point(out, i, t, verdict_class(&c.identity), &title);
    }
    frame.close(out, checks);
}

/// `10^k` as an axis label: `0.01`, `1`, `1000`, `1e6`.
fn decade(k: f64) -> String {
    match k as i32 {
        -2 => "0.01".into(),
        -1 => "0.1".into(),
        k @ 0..=3 => 10u32.pow(k as u32).to_string(),
        k => format!("1e{k}"),
    }
}

/// Behaviour: the quality difference (other − baseline) in points with its interval.
fn behaviour_chart(out: &mut String, checks: &[&Check]) {
    let frame = Frame {
        n: checks.len(),
        height: 170.0,
    };
    let largest = checks
        .iter()
        .flat_map(|c| [c.quality_difference, c.quality_low, c.quality_high])
        .flatten()
        .filter(|x| x.is_finite())
        .fold(0.0, |m: f64, x| m.max(100.0 * x.abs()));
    let half = [5.0, 10.0, 20.0, 50.0, 100.0]
        .into_iter()
        .find(|h| largest <= *h)
        .unwrap_or(100.0);
    let at = |x: f64| (100.0 * x + half) / (2.0 * half);
    let ticks: Vec<(f64, String)> = [-1.0, -0.5, 0.0, 0.5, 1.0]
        .iter()
        .map(|f| ((f + 1.0) / 2.0, format!("{} pts", fmt_num(f * half))))
        .collect();
    frame.open(
        out,
        "Behaviour: quality difference from the baseline (percentage points, with its \
         interval), coloured by verdict",
        "quality differences over time",
        &ticks,
    );
    for (i, c) in checks.iter().enumerate() {
        let Some(d) = c.quality_difference.filter(|d| d.is_finite()) else {
            continue;
        };
        if let (Some(lo), Some(hi)) = (c.quality_low, c.quality_high) {
            frame.interval(out, i, at(lo), at(hi));
        }
        let title = format!(
            "{}: {}, {} on {} graded",
            c.started_at,
            c.behaviour,
            c.quality_text(),
            c.graded
        );
        frame.point(out, i, at(d), verdict_class(&c.behaviour), &title);
    }
    frame.close(out, checks);
}

/// The estimated share of requests that do not look like the baseline, with its interval.
fn share_chart(out: &mut String, checks: &[&Check]) {
    let frame = Frame {
        n: checks.len(),
        height: 150.0,
    };
    let ticks: Vec<(f64, String)> = [0.0, 0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|t| (*t, format!("{}%", fmt_num(100.0 * t))))
        .collect();
    frame.open(
        out,
        "Substituted share: requests that do not look like the baseline (with its 95% interval)",
        "substituted shares over time",
        &ticks,
    );
    for (i, c) in checks.iter().enumerate() {
        let Some(share) = c.substituted_share.filter(|s| s.is_finite()) else {
            continue;
        };
        if let (Some(lo), Some(hi)) = (c.substituted_low, c.substituted_high) {
            frame.interval(out, i, lo, hi);
        }
        let title = format!("{}: {}", c.started_at, c.substituted_text());
        frame.point(out, i, share, "share", &title);
    }
    frame.close(out, checks);
}

/// Every check of one watch, oldest first, each linking to its report.
fn checks_table(out: &mut String, rows: &[&(i64, Check)], dir: &Path) {
    out.push_str(
        "<table>\n<thead><tr><th>#</th><th>time</th><th>status</th><th>identity</th>\
         <th>e-value</th><th>behaviour</th><th>quality difference</th>\
         <th>substituted share</th><th>requests (failed)</th><th>because</th><th>report</th>\
         </tr></thead>\n<tbody>\n",
    );
    for (id, c) in rows.iter().map(|r| (&r.0, &r.1)) {
        let report = match report_link(&c.run_dir, dir) {
            Some(href) => format!("<a href=\"{}\">report</a>", esc(&href)),
            None => "<span class=\"muted\">—</span>".into(),
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"num\">{id}</td><td class=\"time\">{}</td><td class=\"{}\">{}</td>\
             <td class=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"{}\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} ({})</td>\
             <td>{}</td><td>{report}</td></tr>",
            esc(&c.started_at),
            status_class(c.status),
            esc(c.status.as_str()),
            verdict_class(&c.identity),
            esc(&c.identity),
            esc(&c.e_value_text()),
            verdict_class(&c.behaviour),
            esc(&c.behaviour),
            esc(&c.quality_text()),
            esc(&c.substituted_text()),
            c.requests,
            c.failed,
            esc(&c.because),
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

/// The link to `run_dir/report.html` from a page in `page_dir`: relative when the run folder is
/// below the page's folder, else a `file://` URL (a relative run folder is left relative).
/// None for an empty run folder.
pub fn report_link(run_dir: &str, page_dir: &Path) -> Option<String> {
    if run_dir.is_empty() {
        return None;
    }
    let run = Path::new(run_dir);
    let path = match run.strip_prefix(page_dir) {
        Ok(below) if run.is_absolute() && is_plain(below) => {
            return Some(url_path(&below.join("report.html")));
        }
        _ => run.join("report.html"),
    };
    Some(if path.is_absolute() {
        format!("file://{}", url_path(&path))
    } else {
        url_path(&path)
    })
}

/// Whether `path` only goes down (no `..`): a run folder given as `/page/../elsewhere` is not
/// below the page.
fn is_plain(path: &Path) -> bool {
    path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// A path as a URL path: `/` kept, every byte other than letters, digits and `-._~` as `%XX`.
fn url_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
