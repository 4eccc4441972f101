//! Hand-drawn inline SVG for the HTML writer: stacked bars, a proportion bar, box plots with
//! their points, an interval against a margin band, answer histograms, and the number
//! formatting they share.

use std::fmt::Write;

use super::escape::esc;
use super::{Figure, Segment};

/// Draw a figure.
pub(super) fn figure(out: &mut String, f: &Figure) {
    match f {
        Figure::Stacked {
            segments,
            scale,
            width,
        } => stacked_bar(out, segments, *scale, *width),
        Figure::Proportion { part, whole, class } => proportion_bar(out, *part, *whole, class),
        Figure::Interval {
            estimate,
            low,
            high,
            margin,
        } => interval(out, *estimate, *low, *high, *margin),
        Figure::BoxPlots {
            caption,
            unit,
            series,
        } => {
            let mut chart = String::new();
            let log = box_plots(&mut chart, unit, series);
            let _ = write!(
                out,
                "<figure>\n<figcaption>{}{}</figcaption>\n{chart}</figure>",
                esc(caption),
                if log {
                    " <span class=\"muted\">(log scale)</span>"
                } else {
                    ""
                }
            );
        }
        Figure::Histogram {
            bars,
            repeats,
            series,
        } => histogram(out, bars, *repeats, *series),
        Figure::VerdictLegend => out.push_str(LEGEND),
        // Text, not a drawing: the HTML writer writes it.
        Figure::Caption(_) => {}
    }
}

/// The verdict colour key, shared by the bars.
const LEGEND: &str = "<p class=\"legend\"><span class=\"key v-same\"></span>same \
    <span class=\"key v-format\"></span>format <span class=\"key v-no_answer\"></span>no answer \
    <span class=\"key v-diff\"></span>diff <span class=\"key v-review\"></span>review \
    <span class=\"key v-fail\"></span>fail</p>";

/// Answers shown per histogram; the rest are summed into one bar.
const MAX_BARS: usize = 8;

/// One endpoint's answers as horizontal bars, most frequent first.
fn histogram(out: &mut String, bars: &[(String, u32)], repeats: u32, series: usize) {
    const LABEL: f64 = 210.0;
    const PLOT: f64 = 150.0;
    const ROW: f64 = 20.0;
    let mut bars: Vec<(String, u32)> = bars.to_vec();
    bars.sort_by_key(|b| std::cmp::Reverse(b.1));
    if bars.len() > MAX_BARS {
        let rest: u32 = bars[MAX_BARS - 1..].iter().map(|b| b.1).sum();
        let others = bars.len() - (MAX_BARS - 1);
        bars.truncate(MAX_BARS - 1);
        bars.push((format!("({others} other answers)"), rest));
    }
    let height = ROW * bars.len() as f64;
    let width = LABEL + PLOT + 30.0;
    let _ = write!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" role=\"img\">"
    );
    for (row, (answer, n)) in bars.iter().enumerate() {
        let y = ROW * row as f64;
        let w = PLOT * f64::from(*n) / f64::from(repeats.max(1));
        let shown = answer.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = write!(
            out,
            "<g><title>{}: {n} of {repeats}</title>\
             <text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect class=\"s{}\" x=\"{LABEL}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\"/>\
             <text class=\"tick\" x=\"{}\" y=\"{}\">{n}</text></g>",
            esc(answer),
            fmt(LABEL - 8.0),
            fmt(y + 14.0),
            esc(&clip(&shown, 30)),
            series % 6,
            fmt(y + 3.0),
            fmt(w),
            fmt(ROW - 6.0),
            fmt(LABEL + w + 5.0),
            fmt(y + 14.0),
        );
    }
    out.push_str("</svg>");
}

/// A horizontal stacked bar `width` wide for a total of `scale` (segments past it are clipped).
fn stacked_bar(out: &mut String, segments: &[Segment], scale: usize, width: f64) {
    const H: f64 = 16.0;
    let _ = write!(
        out,
        "<svg class=\"bar\" width=\"{width}\" height=\"{H}\" viewBox=\"0 0 {width} {H}\" role=\"img\">"
    );
    let _ = write!(
        out,
        "<rect class=\"track\" width=\"{width}\" height=\"{H}\" rx=\"3\"/>"
    );
    let mut x = 0.0;
    for s in segments.iter().filter(|s| s.count > 0) {
        let w = width * s.count as f64 / scale.max(1) as f64;
        let _ = write!(
            out,
            "<rect class=\"{}\" x=\"{}\" width=\"{}\" height=\"{H}\"><title>{}: {}</title></rect>",
            esc(s.class),
            fmt(x),
            fmt(w),
            esc(s.label),
            s.count
        );
        if w >= 18.0 {
            let _ = write!(
                out,
                "<text class=\"on-bar\" x=\"{}\" y=\"12\" text-anchor=\"middle\">{}</text>",
                fmt(x + w / 2.0),
                s.count
            );
        }
        x += w;
    }
    out.push_str("</svg>");
}

/// A bar filled to `part / whole`, followed by "part/whole" in text.
fn proportion_bar(out: &mut String, part: usize, whole: usize, class: &str) {
    const W: f64 = 90.0;
    const H: f64 = 10.0;
    let w = if whole == 0 {
        0.0
    } else {
        W * part as f64 / whole as f64
    };
    let _ = write!(
        out,
        "<svg class=\"bar\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" aria-hidden=\"true\">\
         <rect class=\"track\" width=\"{W}\" height=\"{H}\" rx=\"2\"/>\
         <rect class=\"{}\" width=\"{}\" height=\"{H}\" rx=\"2\"/></svg> <span class=\"num\">{part}/{whole}</span>",
        esc(class),
        fmt(w)
    );
}

/// Five-number summary of a sample (linear interpolation between order statistics).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quartiles {
    pub min: f64,
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub max: f64,
}

pub fn quartiles(values: &[f64]) -> Option<Quartiles> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let pos = q * (v.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
    };
    Some(Quartiles {
        min: v[0],
        q1: at(0.25),
        median: at(0.5),
        q3: at(0.75),
        max: v[v.len() - 1],
    })
}

/// Round tick positions covering [0, max].
fn ticks(max: f64) -> Vec<f64> {
    if max <= 0.0 {
        return vec![0.0];
    }
    let raw = max / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let mut t = Vec::new();
    let mut x = 0.0;
    while x <= max + step * 1e-9 {
        t.push(x);
        x += step;
    }
    if *t.last().unwrap() < max {
        t.push(x);
    }
    t
}

/// A value axis from zero (linear) or over whole decades (logarithmic, for long tails).
struct Axis {
    log: bool,
    low: f64,
    high: f64,
}

impl Axis {
    /// Logarithmic when the largest value is over 20 times the lower quartile: a few slow
    /// answers would otherwise squash every box against zero.
    fn fit(values: &[f64]) -> Axis {
        let q = quartiles(values);
        let max = q.map_or(0.0, |q| q.max);
        let positive_min = values
            .iter()
            .copied()
            .filter(|x| x.is_finite() && *x > 0.0)
            .fold(f64::INFINITY, f64::min);
        match q {
            Some(q) if q.q1 > 0.0 && max / q.q1 > 20.0 => Axis {
                log: true,
                low: step_at_or_below(positive_min),
                high: step_at_or_above(max),
            },
            _ => Axis {
                log: false,
                low: 0.0,
                high: ticks(max)
                    .last()
                    .copied()
                    .filter(|t| *t > 0.0)
                    .unwrap_or(1.0),
            },
        }
    }

    /// Where `v` falls, from 0 (low) to 1 (high).
    fn at(&self, v: f64) -> f64 {
        if self.log {
            let v = v.max(self.low);
            (v.log10() - self.low.log10()) / (self.high.log10() - self.low.log10()).max(1e-9)
        } else {
            v / self.high
        }
    }

    fn ticks(&self) -> Vec<f64> {
        if !self.log {
            return ticks(self.high);
        }
        // The 1-2-5 steps between the ends; only the decades when that is too many to label.
        let mut t = Vec::new();
        let mut decade = 10f64.powf(self.low.log10().floor());
        while decade <= self.high * (1.0 + 1e-9) {
            for m in [1.0, 2.0, 5.0] {
                let v = decade * m;
                if v >= self.low * (1.0 - 1e-9) && v <= self.high * (1.0 + 1e-9) {
                    t.push(v);
                }
            }
            decade *= 10.0;
        }
        if t.len() > 8 {
            let (first, last) = (t[0], t[t.len() - 1]);
            t.retain(|v| *v == first || *v == last || (v.log10().fract()).abs() < 1e-9);
        }
        t
    }
}

/// The largest of 1, 2, 5 × 10^k at or below `x` (x > 0).
fn step_at_or_below(x: f64) -> f64 {
    let decade = 10f64.powf(x.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|v| *v <= x * (1.0 + 1e-9))
        .unwrap_or(decade)
}

/// The smallest of 1, 2, 5 × 10^k at or above `x` (x > 0).
fn step_at_or_above(x: f64) -> f64 {
    let decade = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|v| *v >= x * (1.0 - 1e-9))
        .unwrap_or(10.0 * decade)
}

/// Box plots of one quantity per endpoint on a shared axis, each over its points; returns
/// whether the axis is logarithmic.
fn box_plots(out: &mut String, unit: &str, series: &[(String, Vec<f64>)]) -> bool {
    const LABEL: f64 = 110.0;
    const PLOT: f64 = 400.0;
    const ROW: f64 = 44.0;
    let all: Vec<f64> = series.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    let axis = Axis::fit(&all);
    let x = |v: f64| LABEL + PLOT * axis.at(v);
    let height = ROW * series.len() as f64 + 30.0;
    let width = LABEL + PLOT + 20.0;
    let _ = write!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" role=\"img\">"
    );
    for t in axis.ticks() {
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{0}\" x2=\"{0}\" y1=\"4\" y2=\"{1}\"/>\
             <text class=\"tick\" x=\"{0}\" y=\"{2}\" text-anchor=\"middle\">{3}</text>",
            fmt(x(t)),
            fmt(height - 24.0),
            fmt(height - 8.0),
            fmt_tick(t)
        );
    }
    for (row, (name, values)) in series.iter().enumerate() {
        let mid = ROW * row as f64 + ROW / 2.0 + 2.0;
        let _ = write!(
            out,
            "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            fmt(LABEL - 10.0),
            fmt(mid + 4.0),
            esc(&clip(name, 18))
        );
        for (i, v) in values.iter().enumerate() {
            // A fixed jitter keeps the points apart and the file reproducible.
            let dy = ((i * 7919) % 23) as f64 - 11.0;
            let _ = write!(
                out,
                "<circle class=\"dot s{}\" cx=\"{}\" cy=\"{}\" r=\"2.2\"/>",
                row % 6,
                fmt(x(*v)),
                fmt(mid + dy)
            );
        }
        let Some(q) = quartiles(values) else { continue };
        let _ = write!(
            out,
            "<g class=\"box\"><title>{name}: min {min}, q1 {q1}, median {med}, q3 {q3}, max {max} {unit} ({n} answers)</title>\
             <line x1=\"{xmin}\" x2=\"{xq1}\" y1=\"{mid}\" y2=\"{mid}\"/>\
             <line x1=\"{xq3}\" x2=\"{xmax}\" y1=\"{mid}\" y2=\"{mid}\"/>\
             <line x1=\"{xmin}\" x2=\"{xmin}\" y1=\"{a}\" y2=\"{b}\"/>\
             <line x1=\"{xmax}\" x2=\"{xmax}\" y1=\"{a}\" y2=\"{b}\"/>\
             <rect x=\"{xq1}\" y=\"{bt}\" width=\"{bw}\" height=\"{bh}\"/>\
             <line class=\"median\" x1=\"{xmed}\" x2=\"{xmed}\" y1=\"{bt}\" y2=\"{bb}\"/></g>",
            name = esc(name),
            min = fmt_num(q.min),
            q1 = fmt_num(q.q1),
            med = fmt_num(q.median),
            q3 = fmt_num(q.q3),
            max = fmt_num(q.max),
            unit = esc(unit),
            n = values.len(),
            xmin = fmt(x(q.min)),
            xq1 = fmt(x(q.q1)),
            xq3 = fmt(x(q.q3)),
            xmax = fmt(x(q.max)),
            xmed = fmt(x(q.median)),
            mid = fmt(mid),
            a = fmt(mid - 5.0),
            b = fmt(mid + 5.0),
            bt = fmt(mid - 9.0),
            bb = fmt(mid + 9.0),
            bw = fmt((x(q.q3) - x(q.q1)).max(1.0)),
            bh = 18,
        );
    }
    out.push_str("</svg>");
    axis.log
}

/// An estimate with its interval on an axis of accuracy points, over the equivalence band
/// (−margin, +margin); all in points.
fn interval(out: &mut String, estimate: f64, low: f64, high: f64, margin: f64) {
    const W: f64 = 420.0;
    const H: f64 = 54.0;
    const PAD: f64 = 24.0;
    let reach = [2.0 * margin, low.abs(), high.abs(), 10.0]
        .into_iter()
        .fold(0.0, f64::max);
    let reach = (reach / 5.0).ceil() * 5.0;
    let x = |v: f64| PAD + (W - 2.0 * PAD) * (v + reach) / (2.0 * reach);
    let _ = write!(
        out,
        "<svg class=\"chart interval\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" role=\"img\">\
         <title>difference {} points, 90% interval {} to {}, margin ±{}</title>\
         <rect class=\"band\" x=\"{}\" y=\"6\" width=\"{}\" height=\"26\"/>\
         <line class=\"zero\" x1=\"{z}\" x2=\"{z}\" y1=\"2\" y2=\"36\"/>\
         <line class=\"ci\" x1=\"{l}\" x2=\"{h}\" y1=\"19\" y2=\"19\"/>\
         <line class=\"ci\" x1=\"{l}\" x2=\"{l}\" y1=\"12\" y2=\"26\"/>\
         <line class=\"ci\" x1=\"{h}\" x2=\"{h}\" y1=\"12\" y2=\"26\"/>\
         <circle class=\"estimate\" cx=\"{e}\" cy=\"19\" r=\"5\"/>",
        fmt_signed(estimate),
        fmt_signed(low),
        fmt_signed(high),
        fmt_num(margin),
        fmt(x(-margin)),
        fmt(x(margin) - x(-margin)),
        z = fmt(x(0.0)),
        l = fmt(x(low.max(-reach))),
        h = fmt(x(high.min(reach))),
        e = fmt(x(estimate)),
    );
    for t in [-reach, -margin, 0.0, margin, reach] {
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{}\" y=\"50\" text-anchor=\"middle\">{}</text>",
            fmt(x(t)),
            if t == 0.0 { "0".into() } else { fmt_signed(t) }
        );
    }
    out.push_str("</svg>");
}

/// An SVG coordinate: at most one decimal, no trailing zeros.
fn fmt(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// A number for people: whole above 100, else at most one decimal.
pub fn fmt_num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        fmt(x)
    }
}

/// An axis label: 20k for 20000.
fn fmt_tick(x: f64) -> String {
    if x >= 1000.0 && (x / 1000.0).fract() == 0.0 {
        format!("{}k", x / 1000.0)
    } else {
        fmt_num(x)
    }
}

/// "+3.5", "−2", "0".
pub fn fmt_signed(x: f64) -> String {
    let s = fmt_num(x.abs());
    if s == "0" {
        s
    } else if x > 0.0 {
        format!("+{s}")
    } else {
        format!("−{s}")
    }
}

/// At most `max` characters, with an ellipsis when cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_interpolate() {
        let q = quartiles(&[4.0, 1.0, 3.0, 2.0, 5.0]).unwrap();
        assert_eq!(
            (q.min, q.q1, q.median, q.q3, q.max),
            (1.0, 2.0, 3.0, 4.0, 5.0)
        );
        assert_eq!(quartiles(&[]), None);
    }

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(9.0), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(1234.0).last(), Some(&1250.0));
        assert_eq!(ticks(0.0), [0.0]);
    }

    #[test]
    fn long_tails_get_a_log_axis() {
        let tail = [100.0, 120.0, 150.0, 200.0, 40_000.0];
        let axis = Axis::fit(&tail);
        assert!(axis.log);
        assert_eq!((axis.low, axis.high), (100.0, 50_000.0));
        assert_eq!(axis.ticks(), [100.0, 1000.0, 10_000.0, 50_000.0]);
        assert_eq!(
            Axis::fit(&[20.0, 30.0, 40.0, 1000.0]).ticks(),
            [20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        assert_eq!(fmt_tick(20_000.0), "20k");
        assert!(!Axis::fit(&[1.0, 2.0, 3.0]).log);
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(fmt(2.0), "2");
        assert_eq!(fmt(2.24), "2.2");
        assert_eq!(fmt_signed(-3.0), "−3");
        assert_eq!(fmt_signed(0.01), "0");
        assert_eq!(fmt_num(1234.56), "1235");
    }
}
