//! Generates the table of other languages' common words (`recall::evidence`): the ISO lists of
//! the `stop-words` crate merged into one sorted array of (word, languages), searched by binary
//! search, so that no recall pays to build a hash table of some eight thousand words.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Languages whose common words are known (ISO codes of the `stop-words` lists). English is
/// left out: recall keeps its own set.
const OTHER_LANGUAGES: [&str; 17] = [
    "fr", "it", "ru", "ko", "de", "es", "pt", "nl", "sv", "pl", "da", "no", "fi", "cs", "tr", "id",
    "uk",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let mut words: BTreeMap<&str, u32> = BTreeMap::new();
    for (i, code) in OTHER_LANGUAGES.iter().enumerate() {
        let list =
            stop_words::lookup(code).unwrap_or_else(|| panic!("no stop-word list for {code}"));
        for w in list {
            *words.entry(w).or_default() |= 1 << i;
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "/// Languages whose common words are known (ISO codes), in the order of their bits.\n\
         pub const OTHER_LANGUAGES: [&str; {}] = {:?};",
        OTHER_LANGUAGES.len(),
        OTHER_LANGUAGES
    );
    let _ = writeln!(
        out,
        "/// Each common word of [`OTHER_LANGUAGES`] with the bits of the languages holding it,\n\
         /// sorted by word (bytes).\n\
         pub static OTHER_COMMON_WORDS: [(&str, u32); {}] = [",
        words.len()
    );
    for (w, bits) in &words {
        let _ = writeln!(out, "    ({w:?}, {bits}),");
    }
    out.push_str("];\n");
    let path = std::path::Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"))
        .join("other_common_words.rs");
    std::fs::write(&path, out).expect("write other_common_words.rs");
}
