//! Printing results: one JSON object on stdout with `--json`, readable text otherwise.
//! Colours only on a terminal that shows them (`TERM=dumb` does not), never when `NO_COLOR` is
//! set.

use super::stdout;
use mnemon::recall::{Recall, Source, TrailEdge};
use mnemon::{DoctorReport, Error, IndexReport, NodeView};
use mnemon_testkit::eval::run::EvalReport;
use serde::Serialize;
use std::io::IsTerminal;
use std::path::Path;

/// Where and how to print.
pub struct Out {
    pub json: bool,
    color: bool,
}

impl Out {
    pub fn new(json: bool) -> Self {
        let color = !json
            && std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            && std::env::var_os("TERM").is_none_or(|t| t != "dumb");
        stdout::HUMAN.store(!json, std::sync::atomic::Ordering::Relaxed);
        Out { json, color }
    }

    /// Whether a progress display may be drawn (a terminal, human output).
    pub fn interactive(&self) -> bool {
        !self.json && std::io::stderr().is_terminal()
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    pub fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    pub fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }

    /// Print `value` as one JSON line.
    pub fn json<T: Serialize>(&self, value: &T) {
        match serde_json::to_string(value) {
            Ok(s) => outln!("{s}"),
            Err(e) => errln!("mnemon: cannot encode JSON output: {e}"),
        }
    }

    /// A message about a repair or a condition worth knowing (always stderr).
    pub fn notice(&self, msg: &str) {
        errln!("mnemon: {}", stdout::for_terminal(msg.to_string()));
    }

    /// An error: on stderr always; also as `{"error": ..}` on stdout with `--json`.
    pub fn error(&self, e: &Error) {
        errln!("mnemon: error: {}", stdout::for_terminal(e.to_string()));
        if self.json {
            self.json(&serde_json::json!({ "error": e.to_string() }));
        }
    }

    pub fn init(&self, root: &Path, report: &IndexReport) {
        if self.json {
            self.json(&serde_json::json!({
                "dir": root.display().to_string(),
                "index": report,
            }));
            return;
        }
        outln!(
            "memory folder ready: {}",
            self.bold(&root.display().to_string())
        );
        outln!("  notes go in {}", root.join("memory").display());
        self.index(report);
    }

    pub fn index(&self, r: &IndexReport) {
        if self.json {
            self.json(r);
            return;
        }
        outln!(
            "{}, {}; {} changed, {} removed ({} ms: scan {}, lexical {}, synthesize {}, store {})",
            plural(r.notes as usize, "note"),
            plural(r.edges as usize, "edge"),
            r.changed.len(),
            r.removed.len(),
            r.elapsed_ms,
            r.phases.scan_ms,
            r.phases.lexical_ms,
            r.phases.synthesize_ms,
            r.phases.store_ms
        );
        const SHOWN: usize = 20;
        for id in r.changed.iter().take(SHOWN) {
            outln!("  {} {id}", self.green("+"));
        }
        if r.changed.len() > SHOWN {
            outln!("  … and {} more", r.changed.len() - SHOWN);
        }
        for id in &r.removed {
            outln!("  {} {id}", self.red("-"));
        }
        if !r.errors.is_empty() {
            outln!("{} problems:", r.errors.len());
            for e in &r.errors {
                outln!(
                    "  {}: {}",
                    self.bold(&stdout::name_for_terminal(&e.path)),
                    e.message
                );
            }
        }
    }

    pub fn show(&self, v: &NodeView) {
        if self.json {
            // Through a Value, as `recall --json`, MCP's memory_show and Python's show() print
            // its floats (edge confidences widened to f64): one note, one set of numbers.
            self.json(&serde_json::to_value(v).unwrap_or_default());
            return;
        }
        // One line each: a line end inside a name, description or tag would start a line of
        // its own that reads as mnemon's.
        let name = stdout::name_for_terminal(v.name.as_deref().unwrap_or("(no name)"));
        outln!("{}  {}  [{}]", self.bold(&v.id), name, v.note_type);
        if let Some(d) = &v.description {
            outln!("  {}", stdout::line_for_terminal(d));
        }
        if !v.tags.is_empty() {
            outln!("  tags: {}", stdout::name_for_terminal(&v.tags.join(", ")));
        }
        outln!("  {}", self.dim(&format!("memory/{}", v.path)));
        if let Some(h) = &v.sha256 {
            outln!("  {}", self.dim(&format!("sha256 {h}")));
        }
        outln!("edges out ({}):", v.edges_out.len());
        for e in &v.edges_out {
            let dangling = if e.dangling {
                self.red(" (dangling)")
            } else {
                String::new()
            };
            outln!(
                "  -{}-> {}{}  {}",
                e.kind.as_str(),
                e.to,
                dangling,
                self.dim(&format!("{} {:.2}", e.provenance.as_str(), e.confidence))
            );
        }
        outln!("edges in ({}):", v.edges_in.len());
        for e in &v.edges_in {
            outln!(
                "  <-{}- {}  {}",
                e.kind.as_str(),
                e.from,
                self.dim(&format!("{} {:.2}", e.provenance.as_str(), e.confidence))
            );
        }
    }

    pub fn doctor(&self, r: &DoctorReport) {
        if self.json {
            self.json(r);
            return;
        }
        outln!(
            "{}, {}",
            plural(r.notes as usize, "note"),
            plural(r.edges as usize, "edge")
        );
        outln!(
            "index: {} ({}, schema v{})",
            if r.index.ok {
                self.green("ok")
            } else {
                self.red("damaged")
            },
            r.index.path,
            r.index.schema_version
        );
        if let Some(m) = &r.index.message {
            outln!("  {m}");
        }
        for d in &r.store_damage {
            outln!("{} {d}", self.red("store"));
        }
        for d in &r.dangling {
            let why = match &d.other_form_of {
                Some(other) => format!(
                    "no such note, but `{}` is the same name in another Unicode normal form; \
                     write the link as the file name is written, or rename the file",
                    mnemon::with_marks_shown(other)
                ),
                None => "no such note; create it or fix the link".to_string(),
            };
            let written = match d.provenance {
                mnemon::Provenance::Frontmatter => " (in its frontmatter)",
                mnemon::Provenance::InlineLink => " (a [[link]] in its body)",
                mnemon::Provenance::Synthesized => " (a phrase before a [[link]] in its body)",
            };
            outln!(
                "{} {} -{}-> {}{written}: {why}",
                self.red("dangling"),
                d.from,
                d.kind.as_str(),
                d.to
            );
        }
        for e in &r.note_errors {
            outln!(
                "{} {}: {}",
                self.red("note"),
                stdout::name_for_terminal(&e.path),
                e.message
            );
        }
        for e in &r.walk_errors {
            outln!(
                "{} {}: {}",
                self.red("file"),
                stdout::name_for_terminal(&e.path),
                e.message
            );
        }
        for c in &r.supersede_cycles {
            outln!(
                "{} {}: these notes replace each other in a circle (supersedes); recall ranks them \
                 as if none replaced another, and names no successor, until one of them stops \
                 declaring it",
                self.red("cycle"),
                c.join(" -> ")
            );
        }
        for c in &r.contradictions {
            outln!(
                "{} {} and {} disagree (contradicts): settle it, then mark the old one as \
                 superseded",
                self.dim("contradiction"),
                c.a,
                c.b
            );
        }
        for d in &r.near_duplicates {
            outln!(
                "{} {} and {} say nearly the same ({:.0}% of the shorter one): merge them, or \
                 link one to the other with supersedes",
                self.dim("near-duplicate"),
                d.a,
                d.b,
                d.similarity * 100.0
            );
        }
        if r.near_duplicates_omitted > 0 {
            outln!(
                "{} and {} more pairs, past the {} listed",
                self.dim("near-duplicates"),
                r.near_duplicates_omitted,
                r.near_duplicates.len()
            );
        }
        if r.healthy {
            outln!("{}", self.green("healthy"));
        } else if !r.store_damage.is_empty() {
            outln!(
                "{}: the index store differs from the notes; `mnemon doctor --fix` rebuilds it",
                self.red("damaged")
            );
        } else {
            outln!(
                "{}: {} dangling links, {} supersede cycles, {} note problems ({} merge conflicts), \
                 {} file problems",
                self.red("problems found"),
                r.dangling.len(),
                r.supersede_cycles.len(),
                r.note_errors.len(),
                r.conflicts.len(),
                r.walk_errors.len()
            );
        }
    }

    pub fn recall(&self, r: &Recall, explain: bool) {
        if self.json {
            // Through a Value, as the contract always printed its floats (widened to f64).
            let layout = mnemon::recall::RecallLayout::Cli { explain };
            self.json(&serde_json::to_value(r.json(layout)).unwrap_or_default());
            return;
        }
        if r.results.is_empty() {
            outln!("nothing relevant ({} us)", r.latency_us);
            if explain {
                self.floor(&r.floor);
            }
            return;
        }
        for (i, h) in r.results.iter().enumerate() {
            let src = match h.source {
                Source::Direct => "direct",
                Source::Neighbor => "neighbor",
                Source::CoOccur => "co-occur",
            };
            outln!(
                "{:>2}. {}  {}  {}",
                i + 1,
                self.bold(&h.id),
                stdout::name_for_terminal(h.name.as_deref().unwrap_or("")),
                self.dim(&format!("{:.3} {src}", h.score))
            );
            if !h.trail.is_empty() {
                outln!("      {}", self.dim(&trail_line(&h.id, &h.trail)));
            }
            if !h.superseded_by.is_empty() {
                outln!("      superseded by {}", h.superseded_by.join(", "));
            }
            if !h.contradicts.is_empty() {
                outln!("      contradicts {}", h.contradicts.join(", "));
            }
            if explain {
                let x = &h.explain;
                outln!(
                    "      {}",
                    self.dim(&format!(
                        "evidence {:.3} (lexical {:.2}, covers {:.0}% [{}]{}{}{}) x usage (1 + {:.3}) x type {:.2} x ttl {:.2} x (1 + importance {:.2} + recency {:.3}, at most {})",
                        x.base,
                        x.lexical,
                        x.coverage * 100.0,
                        x.matched_terms.join(" "),
                        if x.learned != 0.0 {
                            format!(", learned {:+.2}", x.learned)
                        } else {
                            String::new()
                        },
                        if x.title_match { ", names it" } else { "" },
                        if x.support > 0.0 {
                            format!(", + {:.3} from the hits linking to it", x.support)
                        } else {
                            String::new()
                        },
                        x.usage,
                        x.type_weight,
                        x.ttl_factor,
                        x.importance,
                        x.recency,
                        mnemon::ranking::PRIOR_CAP
                    ))
                );
                if x.placed {
                    outln!(
                        "      {}",
                        self.dim(
                            "placed next to the note it replaces or that replaces it: the score is its place, not the product above"
                        )
                    );
                }
            }
        }
        if explain {
            self.floor(&r.floor);
        }
        outln!(
            "{}",
            self.dim(&format!(
                "{} in {} us",
                plural(r.results.len(), "result"),
                r.latency_us
            ))
        );
    }

    /// The score floor's view of the question (`recall --explain`).
    fn floor(&self, f: &mnemon::recall::FloorReport) {
        let terms: Vec<String> = f
            .terms
            .iter()
            .map(|t| {
                if let Some(word) = &t.form_of {
                    format!("{} (another form of {word})", t.term)
                } else if t.idf <= 0.0 {
                    format!("{} (too common)", t.term)
                } else if !t.in_memory && t.name {
                    format!("{} (a name no note writes, {:.2})", t.term, t.idf)
                } else if !t.in_memory {
                    format!("{} (in no note, {:.2})", t.term, t.idf)
                } else {
                    format!("{} {:.2}", t.term, t.idf)
                }
            })
            .collect();
        outln!(
            "  {}",
            self.dim(&format!(
                "floor: a direct hit must cover {:.0}% of the question's terms by idf [{}]",
                mnemon::ranking::MIN_COVERAGE * 100.0,
                terms.join(", ")
            ))
        );
        for id in &f.apart {
            outln!(
                "  {}",
                self.dim(&format!(
                    "{id} holds the question's words it matches only apart, each in another paragraph: not strong enough to bring its neighbours"
                ))
            );
        }
        if f.unknown_weak {
            outln!(
                "  {}",
                self.dim(&format!(
                    "weak question: no hit covers {:.0}% of it with two of its words or more, and {:.0}% of it is in words no note holds: it is likely about them, so only the best is shown, without its neighbours",
                    mnemon::ranking::STRONG_COVERAGE * 100.0,
                    100.0 * f.unknown_share
                ))
            );
        } else if f.weak {
            outln!(
                "  {}",
                self.dim(&format!(
                    "weak question: no hit covers {:.0}% of it with two of its words or more, so only the best {} are shown, without their neighbours",
                    mnemon::ranking::STRONG_COVERAGE * 100.0,
                    mnemon::ranking::WEAK_QUESTION_RESULTS
                ))
            );
        }
        if f.alone {
            outln!(
                "  {}",
                self.dim(&format!(
                    "no strong hit covers {:.0}% of the question or matches {} of its words: only the best {} are shown, without the notes reached from them",
                    mnemon::ranking::NEIGHBOUR_COVERAGE * 100.0,
                    mnemon::ranking::NEIGHBOUR_WORDS,
                    mnemon::ranking::ALONE_QUESTION_RESULTS
                ))
            );
        }
        if f.unknown_subject {
            outln!(
                "  {}",
                self.dim(&format!(
                    "{:.0}% of the question is in words no note holds and no strong hit covers {:.0}% of it: it is likely about something else, so only the best {} are shown",
                    100.0 * f.unknown_share,
                    mnemon::ranking::NEIGHBOUR_COVERAGE * 100.0,
                    mnemon::ranking::UNKNOWN_SUBJECT_RESULTS
                ))
            );
        }
        if f.names_only {
            outln!(
                "  {}",
                self.dim(&format!(
                    "every hit matches only the names the question writes, none of its other words: it asks about them something no note says, so only the best and the notes about those names among the best {} are shown",
                    mnemon::ranking::NAMED_NOTES_RESULTS
                ))
            );
        }
        if f.reached_floor > 0.0 {
            let partial = if f.reached_share > mnemon::ranking::MIN_NEIGHBOUR_SHARE {
                format!(
                    "; {:.0}% when a hit answers {:.0}% of the question",
                    mnemon::ranking::MIN_NEIGHBOUR_SHARE * 100.0,
                    mnemon::ranking::FULL_COVERAGE * 100.0
                )
            } else {
                String::new()
            };
            outln!(
                "  {}",
                self.dim(&format!(
                    "notes reached over the graph need a score of {:.3} ({:.0}% of the best direct hit's{partial})",
                    f.reached_floor,
                    f.reached_share * 100.0
                ))
            );
        }
        if f.terms.is_empty() {
            outln!(
                "  {}",
                self.dim(
                    "the question has no word to search for (only punctuation, symbols or emoji)"
                )
            );
        }
        if f.under_min_score {
            outln!(
                "  {}",
                self.dim("some notes scored under --min-score and were left out")
            );
        }
        if let Some(read) = f.read_bytes {
            outln!("  {}", self.dim(&question_cut(None, read)));
        }
        if f.old_first {
            outln!(
                "  {}",
                self.dim(
                    "the question asks about what was there before: a replaced note ranks above the notes replacing it unless they lead it clearly"
                )
            );
        }
        if f.asks_permission {
            outln!(
                "  {}",
                self.dim(
                    "the question asks whether something may be done: rules (feedback notes) weigh most in close calls"
                )
            );
        }
        for r in &f.rejected {
            outln!(
                "  {}",
                self.dim(&format!(
                    "turned away {} (covers {:.0}%): {}",
                    r.id,
                    r.coverage * 100.0,
                    r.reason
                ))
            );
        }
    }

    pub fn eval(&self, r: &EvalReport) {
        if self.json {
            self.json(r);
            return;
        }
        outln!("{} queries", r.queries);
        outln!(
            "{:<8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>9} {:>9}",
            "mode",
            "R@5",
            "R@10",
            "P@5",
            "MRR",
            "nDCG@5",
            "p50 us",
            "p99 us"
        );
        for (name, m) in &r.modes {
            outln!(
                "{:<8} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>9} {:>9}",
                name,
                m.r5,
                m.r10,
                m.p5,
                m.mrr,
                m.ndcg5,
                m.latency_us_p50,
                m.latency_us_p99
            );
            for (sub, s) in m.by_mode.iter().map(|(k, v)| (*k, v)).chain(
                m.by_kind
                    .iter()
                    .map(|(k, v)| (k.as_str(), v))
                    .filter(|_| !m.by_kind.is_empty()),
            ) {
                outln!(
                    "  {:<10} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
                    sub,
                    s.r5,
                    s.r10,
                    s.p5,
                    s.mrr,
                    s.ndcg5
                );
            }
            if m.no_answer.queries > 0 {
                outln!(
                    "  no answer: {} questions, {:.2} results on average, {:.0}% answered with nothing",
                    m.no_answer.queries,
                    m.no_answer.avg_results,
                    m.no_answer.empty_share * 100.0
                );
            }
        }
    }
}

/// A trail as one line from its seed to `hit`: `a -references-> b <-part_of- c`. An edge walked
/// against its direction points back (`<-kind-`). The nodes are found from the hit backwards:
/// each edge's other end is the node before.
fn trail_line(hit: &str, trail: &[TrailEdge]) -> String {
    let mut nodes: Vec<&str> = vec![hit];
    for e in trail.iter().rev() {
        let cur = nodes.last().copied().unwrap_or(hit);
        nodes.push(if e.to == cur { &e.from } else { &e.to });
    }
    nodes.reverse();
    let mut line = nodes[0].to_string();
    for (e, next) in trail.iter().zip(&nodes[1..]) {
        if e.to == *next {
            line.push_str(&format!(" -{}-> {next}", e.kind.as_str()));
        } else {
            line.push_str(&format!(" <-{}- {next}", e.kind.as_str()));
        }
    }
    line
}

/// `n` and `noun`, with an `s` unless `n` is 1.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// What a recall read of a question over its limits ([`mnemon::recall::MAX_QUERY_BYTES`]
/// bytes, [`mnemon::recall::MAX_QUERY_TERMS`] distinct words): the first `read` bytes
/// of its `len` (when known).
pub fn question_cut(len: Option<usize>, read: usize) -> String {
    let of = len.map_or(String::new(), |len| format!(" of its {len}"));
    format!(
        "only the first {read} bytes{of} of the question were read: recall reads {} bytes and {} \
         distinct words at most (whole words); ask a shorter question",
        mnemon::recall::MAX_QUERY_BYTES,
        mnemon::recall::MAX_QUERY_TERMS
    )
}
