//! The haystack of a long item: seeded filler prose, each sentence drawn from several word lists
//! with numbers in it, so the text is varied (not a repeated paragraph a cache or a compressor
//! would make trivial) and never mentions an access code.

use fastrand::Rng;

const NAMES: &[&str] = &[
    "Amara", "Bruno", "Chen", "Dalia", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jana", "Kofi",
    "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tariq", "Ulla",
    "Viktor", "Wen", "Yara",
];
const VERBS: &[&str] = &[
    "carried",
    "painted",
    "repaired",
    "measured",
    "described",
    "photographed",
    "moved",
    "sold",
    "borrowed",
    "cleaned",
    "counted",
    "inspected",
    "sketched",
    "weighed",
    "wrapped",
    "labelled",
    "polished",
    "catalogued",
    "returned",
    "examined",
];
const ADJECTIVES: &[&str] = &[
    "old", "narrow", "heavy", "bright", "wooden", "quiet", "crooked", "silver", "dusty", "folded",
    "striped", "hollow", "faded", "sturdy", "tiny", "enormous", "copper", "woollen", "cracked",
    "glossy", "rusty", "velvet", "marble", "paper",
];
const NOUNS: &[&str] = &[
    "lantern",
    "ladder",
    "basket",
    "clock",
    "bicycle",
    "kettle",
    "map",
    "chair",
    "violin",
    "umbrella",
    "telescope",
    "bench",
    "crate",
    "mirror",
    "compass",
    "notebook",
    "rope",
    "vase",
    "anchor",
    "drum",
    "saddle",
    "barrel",
    "quilt",
    "shovel",
    "statue",
    "wagon",
];
const PLACES: &[&str] = &[
    "harbour",
    "market",
    "library",
    "orchard",
    "station",
    "bakery",
    "workshop",
    "chapel",
    "museum",
    "greenhouse",
    "barn",
    "courtyard",
    "mill",
    "lighthouse",
    "pier",
    "garden",
    "tavern",
    "school",
    "bridge",
    "square",
];
const TIMES: &[&str] = &[
    "before dawn",
    "at noon",
    "on Monday",
    "after the rain",
    "in late autumn",
    "last winter",
    "during the fair",
    "at dusk",
    "on a windy morning",
    "before the holidays",
    "the following week",
    "in early spring",
    "after supper",
    "on the first of the month",
];

/// One filler sentence.
fn sentence(rng: &mut Rng) -> String {
    let pick = |rng: &mut Rng, list: &[&'static str]| list[rng.usize(..list.len())];
    let name = pick(rng, NAMES);
    let verb = pick(rng, VERBS);
    let adjective = pick(rng, ADJECTIVES);
    let noun = pick(rng, NOUNS);
    let place = pick(rng, PLACES);
    let time = pick(rng, TIMES);
    match rng.usize(..4) {
        0 => format!("{name} {verb} the {adjective} {noun} near the {place} {time}."),
        1 => format!(
            "{} {adjective} {} stood by the {place}, and {name} {verb} them {time}.",
            rng.u32(2..40),
            plural(noun)
        ),
        2 => format!(
            "{time}, {name} {verb} a {adjective} {noun} that weighed {} kilograms.",
            rng.u32(1..90)
        )
        .chars()
        .enumerate()
        .map(|(i, c)| if i == 0 { c.to_ascii_uppercase() } else { c })
        .collect(),
        _ => format!(
            "The {place} kept a {adjective} {noun} for {} years until {name} {verb} it.",
            rng.u32(2..60)
        ),
    }
}

fn plural(noun: &str) -> String {
    if noun.ends_with('s') {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

/// Filler sentences whose text (joined by spaces) holds about `chars` characters.
pub(super) fn sentences(rng: &mut Rng, chars: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut total = 0;
    while total < chars {
        let s = sentence(rng);
        total += s.len() + 1;
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filler_reaches_its_size_and_varies() {
        let mut rng = Rng::with_seed(4);
        let text = sentences(&mut rng, 4000).join(" ");
        assert!((4000..4200).contains(&text.len()));
        let distinct: std::collections::BTreeSet<String> =
            sentences(&mut rng, 4000).into_iter().collect();
        assert!(distinct.len() > 40, "{} distinct sentences", distinct.len());
        assert!(!text.contains("access code"));
    }
}
