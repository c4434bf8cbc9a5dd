//! Every ranking constant above the lexical index in one place (the index's own BM25F parameters
//! are in `index::scoring`). Each says what it trades off; nothing in recall uses an inline number
//! instead. Changing one changes ranking for every query set alike: tune on mechanisms, never on
//! individual queries. A leaf: it imports only the note model's types, and the index and the
//! store do not import it.

use crate::notes::{EdgeKind, NoteType, Provenance};

// ---- Score floor -----------------------------------------------------------------------------

/// A query term is informative when its idf (BM25's `ln(1 + (N - df + 0.5) / (df + 0.5))`) is at
/// least this (0.45: a word in under about 60 % of the notes). Uninformative terms neither count
/// towards a match nor against it.
pub const MIN_MATCH_IDF: f32 = 0.45;
/// In a small memory the informativeness bar is at most this share of the idf of a word held by
/// a single note (with one note, that idf is 0.29, below [`MIN_MATCH_IDF`]), so a word that
/// singles out a note always counts.
pub const SMALL_MEMORY_IDF_SHARE: f32 = 0.5;
/// A query word found nowhere in the memory (no note holds it, nor anything within typo
/// distance) counts as informative with this share of the idf of a word in no note: it says the
/// question may be about something the memory lacks, but paraphrases use such words too.
pub const UNKNOWN_TERM_IDF_SHARE: f32 = 0.5;
/// A name the question writes (capitalised where no sentence starts: `Gmail`, `iPhone`, `UK`;
/// see `recall::evidence::name_words`) that no note holds, or that notes hold only in lower case
/// (`recall::evidence::forget_names_written_lower`), counts with this share instead: a name
/// has no other words a paraphrase could use for it, so a memory without it is most likely
/// about something else, and a note sharing the question's other words answers less of it.
pub const UNKNOWN_NAME_IDF_SHARE: f32 = 1.0;
/// A common English word in a question ("keep", "over", "without": see
/// `recall::evidence::is_generic`), or a short number, counts with this share of its idf: in a
/// small memory such words are rare and so look informative, but they say little about what is
/// asked.
pub const GENERIC_TERM_IDF_SHARE: f32 = 0.3;
/// A number of at most this many digits counts as a common word ("iOS 18", "the 5 % step"):
/// dates, counts and versions put such numbers in notes on every subject.
pub const SMALL_NUMBER_DIGITS: usize = 2;
/// A direct hit must cover at least this share of the question's information: the idf-weighted
/// share of its informative terms the note matches (a typo or prefix match counts
/// `index::scoring::FUZZY_TERM_WEIGHT` / `PREFIX_TERM_WEIGHT` of a term). Long questions in other
/// words than the note's share a few words with it; lower returns more of those and more noise,
/// higher returns nothing for partial paraphrases.
pub const MIN_COVERAGE: f32 = 0.2;
/// A direct hit that matches one informative term of a longer question must cover at least this
/// share of it: one shared word (a "pool" or a "canary" in another sense) is how off-topic
/// questions find notes, so that word must carry most of the question. A name the question
/// writes that the note's id, name, description or tags hold is exempt
/// (`recall::evidence::Evidence::floor`).
pub const SINGLE_TERM_MIN_COVERAGE: f32 = 0.5;
/// A note agents used before (see [`counts_as_used`]) passes the floor covering this share of
/// the question with at least one informative term as it is, and is returned even for a weak
/// question: past use is evidence that a partial match is the note meant. A note only ever
/// returned, never used, gets nothing.
pub const USED_MIN_COVERAGE: f32 = 0.1;

/// Whether a note's stats say agents used it, apart from any question (more often than they
/// found it wrong). Uses tied to a question count through that question's terms only.
/// `untied_used`: uses tied to no question; `wrong_count`: times it was said to be wrong.
pub fn counts_as_used(untied_used: u64, wrong_count: u64) -> bool {
    untied_used > wrong_count
}

/// A direct hit is strong (the question has an answer here, see `recall::evidence`) only when it
/// covers at least this share of the question with two informative terms or more, is named by
/// it, or is what feedback says it means: a question whose hits are all weak gets its best few.
pub const STRONG_COVERAGE: f32 = 0.45;
/// Every strong hit seeds the walk, but the notes it reaches are returned only when some strong
/// hit vouches for them: it covers this share of the question, matches [`NEIGHBOUR_WORDS`] of
/// its informative terms, is named by it or is what feedback says it means. Two shared words
/// are a coincidence as often as not (a question on another subject in words the memory also
/// uses: "feed" and "canary", "git" and "merge"); the hit itself may answer, the notes around
/// it then have nothing to go on. Lower brings the neighbourhoods of such coincidences; higher
/// drops linked notes of paraphrased questions.
pub const NEIGHBOUR_COVERAGE: f32 = 0.65;
/// Informative terms of the question (a common word among them, as coverage counts it) a hit
/// matching less than [`NEIGHBOUR_COVERAGE`] of it must hold to vouch for the notes reached.
pub const NEIGHBOUR_WORDS: usize = 3;
/// When at least this share of a question's information is in words no note holds
/// (`Evidence::unknown_share`: "bakeries", "Tesla", "strength"), what it asks about is likely
/// one of them, and the words it shares with notes are its setting ("build", "table", "per
/// day"): unless a hit covers [`NEIGHBOUR_COVERAGE`] of it, is named by it or is what feedback
/// says it means, it returns [`UNKNOWN_SUBJECT_RESULTS`]. Paraphrases write words no note holds
/// too, but seldom as much of the question. Lower cuts the linked notes of such paraphrases;
/// higher returns the many partial matches of questions on other subjects.
pub const UNKNOWN_SUBJECT_SHARE: f32 = 0.2;
const _: () = assert!(STRONG_COVERAGE < NEIGHBOUR_COVERAGE && NEIGHBOUR_COVERAGE < FULL_COVERAGE);
/// When no hit is named by the question, answers all of it ([`FULL_COVERAGE`]) or is vouched
/// for by feedback, at most this many of the best hits strong by their words are read to see
/// whether they hold two of the question's words together in one passage
/// (`recall::passages`); the first that does settles it. Each check reads one note.
pub const MAX_PASSAGE_CHECKS: usize = 3;
/// A question whose direct hits are all weak returns at most this many (and hits on notes used
/// before): partial matches of a question the memory may have no answer for.
pub const WEAK_QUESTION_RESULTS: usize = 2;
/// A weak question with at least this share of its information in words no note holds
/// (`Evidence::unknown_share`: "sourdough", "leaderboard") asks about them: the words it shares
/// with notes are its setting, and no hit covers much of the rest. It returns
/// [`UNKNOWN_WEAK_RESULTS`] (and hits on notes used before). Answerable weak questions seldom
/// write half of themselves in words the memory lacks; lower cuts the second hit of more
/// paraphrases, higher returns two notes for more questions on other subjects.
pub const UNKNOWN_WEAK_SHARE: f32 = 0.5;
/// What a weak question mostly in words no note holds returns (see [`UNKNOWN_WEAK_SHARE`]).
pub const UNKNOWN_WEAK_RESULTS: usize = 1;
const _: () = assert!(UNKNOWN_SUBJECT_SHARE < UNKNOWN_WEAK_SHARE);
const _: () = assert!(UNKNOWN_WEAK_RESULTS < WEAK_QUESTION_RESULTS);
/// A question whose hits all match only the names it writes, none of its other words, returns
/// at most this many (and hits on notes used before, and notes about those names, see
/// [`NAMED_NOTES_RESULTS`]): it asks about a person, a place or a product the memory knows
/// something the notes do not say.
pub const NAMES_ONLY_RESULTS: usize = 1;
/// Such a question also keeps the notes about those names (whose title, description or tags
/// hold one) among its best this many.
pub const NAMED_NOTES_RESULTS: usize = 2;
/// A question whose strong hits none vouches for their neighbours (see [`NEIGHBOUR_COVERAGE`])
/// returns at most this many (and hits on notes used before): each shares two words or so with
/// the question, as many notes of a memory in another sense do.
pub const ALONE_QUESTION_RESULTS: usize = 3;
/// A question with [`UNKNOWN_SUBJECT_SHARE`] of its information or more in words no note holds,
/// whose hits none answers most of, returns at most this many (and hits on notes used before). One more
/// than [`ALONE_QUESTION_RESULTS`]: its hits may still vouch for their neighbours by the words
/// they share, and a paraphrase in words the notes do not use finds its linked answers there.
pub const UNKNOWN_SUBJECT_RESULTS: usize = 4;
/// A direct hit needs at least this BM25F score (a floor against single weak matches in long
/// notes), unless it holds [`FULL_COVERAGE`] of the question as written. Lower admits weaker
/// matches.
pub const MIN_LEXICAL_SCORE: f32 = 0.5;
/// ... or this share of the idf of the question's rarest word the memory holds, when lower
/// (`Evidence::lexical_floor`): a single match of a word of that idf in a note of average length
/// scores about the idf itself.
pub const LEXICAL_FLOOR_IDF_SHARE: f32 = 0.5;
/// A direct hit needs at least this fraction of the best hit's lexical score: cuts the long tail
/// of one-word matches under a strong hit. Lower returns more, noisier direct hits.
pub const MIN_RELATIVE_LEXICAL: f32 = 0.2;
/// A note agents used before (see [`counts_as_used`]) stays a direct hit down to this fraction
/// of the best hit's score: past use is evidence that a weak match is still the note meant. A
/// note only returned before, never used, gets nothing of it.
pub const MIN_RELATIVE_LEXICAL_USED: f32 = 0.05;
/// With anchors, a lexical hit outside the anchors' neighbourhood needs at least this fraction of
/// the best hit's score: the anchors say what the question is about.
pub const MIN_UNANCHORED_RELATIVE: f32 = 0.5;
/// A direct hit that the walk from another seed also reaches gets this share of that path's
/// score on top: two signals agreeing outrank one.
pub const GRAPH_SUPPORT_WEIGHT: f32 = 0.5;
/// Final results below this score are dropped (`--min-score` overrides it).
pub const DEFAULT_MIN_SCORE: f32 = 0.05;

// ---- Evidence from the question's own words and from feedback ---------------------------------

/// A question whose terms are exactly a note's title (its name, its id, or the id's last path
/// segment when no note's name or whole id is the question; typos allowed) adds this to the
/// note's evidence (the best lexical hit has 1): what a user names, they mean, whatever the
/// priors say.
pub const EXACT_TITLE_BONUS: f32 = 1.0;
/// A direct hit whose id, name, description or tags hold a proper name the question writes
/// (`Maya`, `Porto`; see `recall::evidence::proper_name_words`) has its lexical evidence (the
/// best lexical hit has 1) multiplied by one plus this: the note is about the person, place or
/// product asked about. A share of its own evidence, not a sum: a note far behind the best
/// hit's words is not lifted over it by a name it holds (the place a question is set in, a
/// component it names in passing).
pub const TITLED_NAME_BONUS: f32 = 0.5;
/// A question's first word written as a proper name is (`Joana working hours`) counts as one
/// when at least this percentage of the notes holding it write it with a capital: names are
/// written in lower case only in links and ids, other words at most at a sentence's start or
/// in a heading. Lower takes a first word such as "Deploy" for a name.
pub const START_NAME_CAPITALISED_PERCENT: u64 = 75;
/// A direct hit the question names by the last part of its id written as a phrase among more
/// words (`reference/error-codes` for "error codes list"; see
/// `recall::evidence::names_in_phrase`) has its lexical evidence multiplied by one plus this:
/// the note is about the thing asked about. Less than [`TITLED_NAME_BONUS`]: the phrase is
/// common words more often than a proper name is.
pub const ID_PHRASE_BONUS: f32 = 0.25;
/// Other terms of a question allowed between two terms of a note's id for the question to name
/// it as a phrase (`recall::evidence::names_in_phrase`): "marc language field mapping" names
/// `reference/marc-field-mapping`; the id's words in another order never do.
pub const ID_PHRASE_GAP_TERMS: usize = 1;
/// Lexical hits holding every term of the question in their title fields whose name is read to
/// see whether the question is their title (best first): each check reads a note's record.
pub const TITLE_CHECKS: usize = 8;
/// Other lexical hits matching every term of the question (through a typo or prefix) whose
/// name is read as well, best first: a title the question writes with a typo.
pub const TYPO_TITLE_CHECKS: usize = 3;
/// Lexical hits matching every term of the question whose id is checked against it (those
/// holding every term in their title fields first, then the best; each check tokenizes an id).
pub const ID_CHECKS: usize = 16;
/// Evidence from feedback: a note that past questions sharing all of this question's informative
/// terms were answered with (see `recall::learned`) gets this much (the best lexical hit has 1),
/// less for a share of the terms (see [`learned_share_weight`]).
pub const LEARNED_WEIGHT: f32 = 2.0;

/// How much of its feedback evidence a note keeps when the past questions behind it share only
/// `share` (0..=1, idf-weighted) of this question's informative terms: the share squared, on
/// top of the share the mean already carries. Past questions sharing one or two words of a
/// longer one were mostly about something else (a question about idle sessions in the admin
/// console is not one about who may use the console); weighed linearly, their feedback decided
/// close calls for new questions and lowered MRR on them, while a question asked again, or
/// worded nearly alike, keeps nearly all of it.
pub fn learned_share_weight(share: f32) -> f32 {
    let s = share.clamp(0.0, 1.0);
    s * s
}

/// A note found wrong for past questions with these terms keeps at least this share of its
/// evidence (at full negative affinity over all terms).
pub const WRONG_KEEP: f32 = 0.4;

/// At most this many direct hits seed the graph walk: more widens recall, costs time.
pub const MAX_SEEDS: usize = 24;

// ---- Graph walk ------------------------------------------------------------------------------

/// Default BFS depth from the direct hits.
pub const DEFAULT_DEPTH: u8 = 2;
/// Deepest BFS allowed (a limit on everything).
pub const MAX_DEPTH: u8 = 5;
/// Score kept per hop: lower keeps neighbours further below their seed.
pub const HOP_DECAY: f32 = 0.5;
/// A note the walk reached (not a direct hit) is returned for a question without anchors only
/// when its score is at least this share of the best direct hit's, when that hit answers the
/// whole question (covers [`FULL_COVERAGE`] of it; see [`neighbour_share`]): what two hops over
/// full-weight edges leave of it (one hop over a synthesized edge leaves less). Lower returns
/// more of the walk's tail (whole neighbourhoods for questions that share a word with one note);
/// higher drops notes linked to the answer.
pub const MIN_NEIGHBOUR_SHARE: f32 = HOP_DECAY * HOP_DECAY;
/// When the best direct hit answers only part of the question, the walk's tail needs more of its
/// score, up to this share for a best hit at the [`STRONG_COVERAGE`] bar: one hop over a
/// full-weight edge (which keeps [`HOP_DECAY`]) still passes, two hops or a damped edge do not. A partial match is how off-topic questions find a
/// note, and each neighbour shown for one is noise. Lower keeps more of the tail of partial
/// matches; higher drops linked notes of paraphrased questions.
pub const PARTIAL_NEIGHBOUR_SHARE: f32 = 0.4;
/// A direct hit covering this share of the question answers all of it (see
/// [`neighbour_share`]).
pub const FULL_COVERAGE: f32 = 0.8;

/// The share of the best direct hit's score a note the walk reached needs, for a question whose
/// best direct hit covers `best_coverage` of it (1 when the question names it): from
/// [`PARTIAL_NEIGHBOUR_SHARE`] at [`STRONG_COVERAGE`] down to [`MIN_NEIGHBOUR_SHARE`] at
/// [`FULL_COVERAGE`], linearly.
pub fn neighbour_share(best_coverage: f32) -> f32 {
    let t = ((best_coverage - STRONG_COVERAGE) / (FULL_COVERAGE - STRONG_COVERAGE)).clamp(0.0, 1.0);
    PARTIAL_NEIGHBOUR_SHARE + (MIN_NEIGHBOUR_SHARE - PARTIAL_NEIGHBOUR_SHARE) * t
}
const _: () = assert!(MIN_NEIGHBOUR_SHARE <= PARTIAL_NEIGHBOUR_SHARE);
const _: () = assert!(PARTIAL_NEIGHBOUR_SHARE < HOP_DECAY);
const _: () = assert!(STRONG_COVERAGE < FULL_COVERAGE);
/// Walking an edge against its direction (from its target back to its source) keeps this much of
/// the forward weight: a note that links here is related, a little less than one linked from here.
pub const REVERSE_EDGE_FACTOR: f32 = 0.85;
/// Nodes expanded by one walk at most, best first (cost bound: each expansion reads two edge
/// lists from the store).
pub const MAX_EXPANSIONS: usize = 96;
/// Edges followed from one node at most (a seed follows as many as the recall's limit when that
/// is more): the first of its lists in stored order, declared links before synthesized ones
/// (format-spec/store.md, "Edge value").
pub const MAX_FANOUT: usize = 64;

/// Out-degree up to which an edge's source is not a hub.
pub const HUB_OUT_DEGREE: u32 = 10;

/// Damping of an edge by its source's out-degree, `min(1, sqrt(HUB_OUT_DEGREE / degree))`: a note
/// that links to everything (an index, a map of content) says little about each target.
pub fn hub_damping(source_out_degree: u32) -> f32 {
    if source_out_degree <= HUB_OUT_DEGREE {
        1.0
    } else {
        (HUB_OUT_DEGREE as f32 / source_out_degree as f32).sqrt()
    }
}

/// The walk's weight of one edge followed in its direction: kind, provenance, confidence and hub
/// damping, multiplied in this order (the graph keeps it per edge, computed once; followed
/// backwards it is multiplied by [`REVERSE_EDGE_FACTOR`]).
pub fn edge_weight(
    kind: EdgeKind,
    provenance: Provenance,
    confidence: f32,
    source_out_degree: u32,
) -> f32 {
    edge_kind_weight(kind)
        * provenance_weight(provenance)
        * confidence
        * hub_damping(source_out_degree)
}

/// Weight of an edge kind (facts from the original system). A hand-written link must never rank
/// below an inferred one, so every declared kind outweighs both co-occurrence kinds.
pub fn edge_kind_weight(kind: EdgeKind) -> f32 {
    match kind {
        EdgeKind::References => 1.0,
        EdgeKind::PartOf => 0.9,
        EdgeKind::DerivedFrom => 0.8,
        EdgeKind::Supersedes => 0.7,
        EdgeKind::Contradicts => 0.6,
        EdgeKind::CoOccursSlug => 0.55,
        EdgeKind::CoOccursToken => 0.45,
    }
}

/// Extra factor by provenance: hand-written links at full strength, inferred ones a little less.
pub fn provenance_weight(p: Provenance) -> f32 {
    match p {
        Provenance::Frontmatter | Provenance::InlineLink => 1.0,
        Provenance::Synthesized => 0.9,
    }
}

// ---- Co-occurrence synthesis -----------------------------------------------------------------

/// Synthesized co-occurrence edges kept per note (both kinds together): more adds weak neighbours.
pub const CO_OCCURRENCE_CAP: usize = 5;
/// Minimum TF-IDF cosine for a token co-occurrence edge.
pub const MIN_TOKEN_COSINE: f32 = 0.3;
/// Terms of a note used to find co-occurrence candidates (its highest TF-IDF terms).
pub const CO_OCCURRENCE_PROBE_TERMS: usize = 12;
/// A term in more notes than this is too common to find candidates with: its posting list would
/// make the probe's cost grow with the size of the memory.
pub const CO_OCCURRENCE_MAX_DF: usize = 400;
/// The number of notes a probe term's idf is taken against (`ln(this / df)`): fixed, so that a
/// note's co-occurrence edges do not move with the corpus size (an update would otherwise change
/// every note's edges). Above `CO_OCCURRENCE_MAX_DF`, so every probe term weighs more than zero.
pub const CO_OCCURRENCE_REFERENCE_NOTES: f32 = 1000.0;
/// A term in more than one in this many notes is too common to find candidates with (in a
/// memory of fewer than `CO_OCCURRENCE_MAX_DF` times this many notes, where it is the tighter
/// bound).
pub const CO_OCCURRENCE_MAX_DF_SHARE: u64 = 2;
/// Slug-prefix clusters larger than this are not linked all-to-all (cost and noise bound).
pub const MAX_SLUG_CLUSTER: usize = 12;
/// Confidence of a `derived_from` edge inferred from a project note linking a user note.
pub const SYNTH_DERIVED_CONFIDENCE: f32 = 0.7;
/// Minimum shared leading slug words for a slug cluster (`deploy-canary` / `deploy-rollback`).
pub const SLUG_PREFIX_WORDS: usize = 1;

// ---- Node priors -----------------------------------------------------------------------------
//
// Priors multiply the evidence: `evidence x (1 + usage) x type x ttl x (1 + min(PRIOR_CAP,
// recency + importance))`. Type, ttl, recency and importance decide close calls; a note whose
// evidence leads by more than [`CLEAR_LEAD`] cannot be overturned by them
// (`priors_never_overturn_a_clear_lead`).

/// The largest note-type weight (recall's bound for skipping candidates that cannot enter the top
/// k; `max_type_weight_bounds_every_type` checks it).
pub const MAX_TYPE_WEIGHT: f32 = 1.08;
/// The smallest note-type weight.
pub const MIN_TYPE_WEIGHT: f32 = 0.92;

/// Multiplier by note type, in the original's order (project, feedback, user, index, reference)
/// but a narrow range: notes about the work at hand win close calls against reference material,
/// never a clear lexical lead.
pub fn note_type_weight(t: NoteType) -> f32 {
    match t {
        NoteType::Project => 1.08,
        NoteType::Feedback => 1.04,
        NoteType::User => 1.0,
        NoteType::Index => 0.96,
        NoteType::Reference => 0.92,
        NoteType::Unknown => 1.0,
    }
}

/// Multiplier by note type for a question that asks whether something may be done ("can I ...",
/// "is it okay to ...", "who has to approve ...", see [`asks_permission`]): the rules the
/// agent was given (feedback notes) answer it, so they take the largest weight and every other
/// type the smallest. Within the same bounds as [`note_type_weight`]: still only close calls.
pub fn permission_type_weight(t: NoteType) -> f32 {
    match t {
        NoteType::Feedback => MAX_TYPE_WEIGHT,
        _ => MIN_TYPE_WEIGHT,
    }
}

/// Whether `question` asks whether something may be done: "can I", "could we", "may I" not
/// after a question word ("when can I reach her" asks something else), "should I / we" after no
/// question word ("which clip should I use" asks which), "allowed", "permitted",
/// "permission", "is it ok / okay / fine / alright / acceptable", "need approval / sign-off",
/// "need to ask / approve / sign", or "to / must / who / should approve" or "... sign off"
/// ("who has to approve"). English only, any case.
pub fn asks_permission(question: &str) -> bool {
    let words: Vec<String> = question
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect();
    let at = |i: usize| words.get(i).map_or("", String::as_str);
    const WH: [&str; 7] = ["how", "when", "where", "what", "which", "who", "why"];
    (0..words.len()).any(|i| match at(i) {
        "allowed" | "permitted" | "permission" => true,
        "can" | "could" | "may" => {
            matches!(at(i + 1), "i" | "we") && (i == 0 || !WH.contains(&at(i - 1)))
        }
        // "Should I ..." asks whether to; "which clip should I use" asks which.
        "should" => {
            matches!(at(i + 1), "i" | "we") && !words[..i].iter().any(|w| WH.contains(&w.as_str()))
        }
        "is" => {
            at(i + 1) == "it"
                && matches!(at(i + 2), "ok" | "okay" | "fine" | "alright" | "acceptable")
        }
        "need" | "needs" => {
            matches!(at(i + 1), "approval" | "sign" | "signoff")
                || (at(i + 1) == "to" && matches!(at(i + 2), "ask" | "approve" | "sign"))
        }
        "approve" | "approves" | "sign" => {
            (at(i) != "sign" || at(i + 1) == "off")
                && i > 0
                && matches!(at(i - 1), "to" | "must" | "who" | "should")
        }
        _ => false,
    })
}

/// The most the bonuses (recency, importance) together add, as a share of the evidence.
pub const PRIOR_CAP: f32 = 0.25;
/// An evidence lead larger than this ratio is never overturned by priors: the largest type ratio
/// times the largest bonus, over the ttl factor of an expired note.
pub const CLEAR_LEAD: f32 =
    MAX_TYPE_WEIGHT / MIN_TYPE_WEIGHT * (1.0 + PRIOR_CAP) / TTL_EXPIRED_FACTOR;
// Priors decide only close calls: a lead of two thirds again is always clear.
const _: () = assert!(CLEAR_LEAD < 5.0 / 3.0);

/// Words that ask about what was there before ("the old pool settings", "the previous rate
/// limiter", "our legacy deploy script"): such a question gets a replaced note above the notes
/// replacing it when it finds them about as well (neither leads by [`CLEAR_LEAD`]). Words that
/// also say "the last one" or "before doing" (`previous version`, `before deploying`) are left
/// out: they ask for a rollback or an order of steps as often as for history.
pub const PAST_WORDS: &[&str] = &[
    "old",
    "older",
    "oldest",
    "legacy",
    "original",
    "originally",
    "former",
    "formerly",
    "retired",
    "deprecated",
    "superseded",
    "obsolete",
    "outdated",
];

/// Whether `question` asks about what was there before (one of [`PAST_WORDS`], any case).
pub fn asks_about_the_past(question: &str) -> bool {
    question
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| PAST_WORDS.iter().any(|p| w.eq_ignore_ascii_case(p)))
}

/// Usage reinforcement: a note the agents used apart from any question (fetched it by id, or
/// said so in feedback naming no question) has its evidence multiplied by
/// `1 + min(USAGE_CAP, USAGE_COEF * (ln(1 + used) - ln(1 + wrong)))`. It multiplies evidence,
/// so it lifts only notes this question reached, never one it did not. Uses tied to a question
/// reach ranking through that question's terms (`recall::learned`), and being returned by a
/// recall is not a use: what is shown often does not climb for being shown.
pub const USAGE_COEF: f32 = 0.6;
/// The most usage multiplies evidence by, minus one.
pub const USAGE_CAP: f32 = 1.0;
/// Importance bonus per point (1..=10): importance 10 adds 0.2 of the evidence.
pub const IMPORTANCE_COEF: f32 = 0.02;
/// Half-life of the recency bonus, in days, on max(last use, updated_at).
pub const RECENCY_HALF_LIFE_DAYS: f32 = 90.0;
/// Size of the recency bonus for a note touched (edited or used) today: it breaks ties between
/// near equals.
pub const RECENCY_WEIGHT: f32 = 0.05;
/// Score multiplier once a note's ttl has expired: a stale fact loses close calls and stays
/// findable. Expiry says the note may be out of date, not that it is off the question: like the
/// other priors it never overturns a clear lexical lead ([`CLEAR_LEAD`]).
pub const TTL_EXPIRED_FACTOR: f32 = 0.9;
/// Multiplier when less than [`TTL_WARN_FRACTION`] of the ttl is left.
pub const TTL_NEAR_FACTOR: f32 = 0.95;
// Expired sinks further than close to expiry, which sinks below fresh.
const _: () = assert!(TTL_EXPIRED_FACTOR < TTL_NEAR_FACTOR && TTL_NEAR_FACTOR < 1.0);
/// Fraction of the ttl left under which a note counts as close to expiring.
pub const TTL_WARN_FRACTION: f32 = 0.2;

/// Seconds per day.
pub const DAY_S: i64 = 86_400;
/// Milliseconds per second: usage times are kept in milliseconds (as the events record them),
/// the ranking formulas take seconds.
pub const MS_PER_S: i64 = 1_000;

/// Usage bonus for a note used `used` times and found wrong `wrong` times (0..=USAGE_CAP).
pub fn usage_bonus(used: u64, wrong: u64) -> f32 {
    // Nearly every candidate has no use: no logarithm for them.
    if used <= wrong {
        return 0.0;
    }
    (USAGE_COEF * ((1.0 + used as f32).ln() - (1.0 + wrong as f32).ln())).clamp(0.0, USAGE_CAP)
}

/// The priors' multiplier on a note's evidence: type x ttl x (1 + the capped bonuses).
pub fn prior_factor(type_weight: f32, ttl_factor: f32, bonuses: f32) -> f32 {
    type_weight * ttl_factor * (1.0 + bonuses.clamp(0.0, PRIOR_CAP))
}

/// Importance bonus (0 when unset).
pub fn importance_bonus(importance: u8) -> f32 {
    IMPORTANCE_COEF * f32::from(importance.min(10))
}

/// How far ahead of the clock a note's date or a use may be and still count: clocks of the
/// machines sharing a memory disagree by seconds, a time zone by hours.
pub const FUTURE_TOLERANCE_S: i64 = DAY_S;

/// `t` (Unix seconds) when it is no further ahead of `now_s` than [`FUTURE_TOLERANCE_S`]. A date
/// further ahead (`updated_at: 2062-...`, a clock that ran ahead) says nothing about how recent
/// a note is, and taken as it is, it would be the most recent note until that day comes.
pub fn plausible_time(t: Option<i64>, now_s: i64) -> Option<i64> {
    t.filter(|&t| t <= now_s.saturating_add(FUTURE_TOLERANCE_S))
}

/// Recency bonus for a note last touched at `touched_s` (Unix seconds), seen at `now_s`; none
/// for a time further ahead than [`FUTURE_TOLERANCE_S`].
pub fn recency_bonus(touched_s: Option<i64>, now_s: i64) -> f32 {
    let Some(t) = plausible_time(touched_s, now_s) else {
        return 0.0;
    };
    let age_days = ((now_s - t).max(0) as f32) / DAY_S as f32;
    RECENCY_WEIGHT * 0.5f32.powf(age_days / RECENCY_HALF_LIFE_DAYS)
}

/// TTL multiplier: 1 when fresh or no ttl, smaller when close to or past expiry.
pub fn ttl_factor(ttl_days: Option<u32>, updated_s: Option<i64>, now_s: i64) -> f32 {
    let (Some(ttl), Some(updated)) = (ttl_days, updated_s) else {
        return 1.0;
    };
    let ttl_s = i64::from(ttl) * DAY_S;
    let age_s = now_s - updated;
    if age_s >= ttl_s {
        TTL_EXPIRED_FACTOR
    } else if (ttl_s - age_s) as f32 <= TTL_WARN_FRACTION * ttl_s as f32 {
        TTL_NEAR_FACTOR
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_asking_whether_something_may_be_done_asks_permission() {
        for q in [
            "Can I ship a small fix to production at 9am on Monday?",
            "A customer was overcharged, can I just give them a credit?",
            "Am I allowed to put real sample IDs in a commit message?",
            "Is it okay to log the webhook body while I debug?",
            "is it fine to push the build on Friday",
            "Who has to approve a change to the wording of the reminder?",
            "who needs to sign off a dose rule change",
            "do I need to ask someone before scaling ingestd",
            "things support staff are not permitted to do in the admin panel",
            "Should I knock a pound off the monthly plan for a week?",
            "the test is flaky, should we raise the retry count",
        ] {
            assert!(asks_permission(q), "{q}");
        }
        for q in [
            "What time zone is Priya in and when can I reach her?",
            "How can I run the whole backend on my laptop?",
            "what should I do when the feed goes stale",
            "which fixture clip should I use to test rotation",
            "Is it a known issue that the pool times out?",
            "how to sign the release tag with the team key",
            "capital of Australia",
            "",
        ] {
            assert!(!asks_permission(q), "{q}");
        }
        // Within the bounds every type weight keeps, so priors still decide only close calls.
        for t in [
            NoteType::Project,
            NoteType::Feedback,
            NoteType::User,
            NoteType::Index,
            NoteType::Reference,
            NoteType::Unknown,
        ] {
            let w = permission_type_weight(t);
            assert!((MIN_TYPE_WEIGHT..=MAX_TYPE_WEIGHT).contains(&w), "{t:?}");
        }
        assert!(
            permission_type_weight(NoteType::Feedback) > permission_type_weight(NoteType::Project)
        );
    }

    #[test]
    fn declared_kinds_outrank_inferred_ones() {
        let inferred = [EdgeKind::CoOccursSlug, EdgeKind::CoOccursToken];
        for k in EdgeKind::ALL.into_iter().filter(|k| !inferred.contains(k)) {
            for i in inferred {
                assert!(
                    edge_kind_weight(k) * provenance_weight(Provenance::InlineLink)
                        > edge_kind_weight(i) * provenance_weight(Provenance::Synthesized)
                );
            }
        }
    }

    #[test]
    fn max_type_weight_bounds_every_type() {
        // Recall skips a neighbour whose score under this bound cannot enter the top k.
        for t in NoteType::ALL {
            assert!(note_type_weight(t) <= MAX_TYPE_WEIGHT, "{t:?}");
        }
        assert_eq!(note_type_weight(NoteType::Project), MAX_TYPE_WEIGHT);
    }

    /// A note whose evidence leads by more than CLEAR_LEAD keeps its lead against a note with
    /// every prior in its favour (best type, full bonuses) while it has the worst ones.
    #[test]
    fn priors_never_overturn_a_clear_lead() {
        let best = prior_factor(MAX_TYPE_WEIGHT, 1.0, 100.0);
        let worst = prior_factor(MIN_TYPE_WEIGHT, TTL_EXPIRED_FACTOR, 0.0);
        let lead = CLEAR_LEAD * 1.0001;
        assert!(lead * worst > best, "{lead} x {worst} vs {best}");
        for t in NoteType::ALL {
            assert!(note_type_weight(t) >= MIN_TYPE_WEIGHT, "{t:?}");
        }
    }

    #[test]
    fn bonuses_follow_the_formulas() {
        assert_eq!(usage_bonus(0, 0), 0.0);
        assert!((usage_bonus(2, 0) - USAGE_COEF * 3f32.ln()).abs() < 1e-6);
        assert_eq!(usage_bonus(1000, 0), USAGE_CAP);
        assert_eq!(
            usage_bonus(1, 4),
            0.0,
            "found wrong more often than used: no bonus"
        );
        assert!((importance_bonus(10) - 0.2).abs() < 1e-6);
        assert_eq!(prior_factor(1.0, 1.0, 5.0), 1.0 + PRIOR_CAP);
        assert_eq!(prior_factor(1.0, 0.5, -1.0), 0.5);
        let now = 1_000 * DAY_S;
        assert!((recency_bonus(Some(now - 90 * DAY_S), now) - RECENCY_WEIGHT / 2.0).abs() < 1e-6);
        assert_eq!(recency_bonus(None, now), 0.0);
        assert_eq!(recency_bonus(Some(now + 3600), now), RECENCY_WEIGHT);
        assert_eq!(recency_bonus(Some(now + 2 * DAY_S), now), 0.0);
        assert_eq!(plausible_time(Some(now + 2 * DAY_S), now), None);
        assert_eq!(plausible_time(Some(now - DAY_S), now), Some(now - DAY_S));
        assert_eq!(
            ttl_factor(Some(10), Some(now - 11 * DAY_S), now),
            TTL_EXPIRED_FACTOR
        );
        assert_eq!(
            ttl_factor(Some(10), Some(now - 9 * DAY_S), now),
            TTL_NEAR_FACTOR
        );
        assert_eq!(ttl_factor(Some(10), Some(now - DAY_S), now), 1.0);
        assert_eq!(ttl_factor(None, Some(0), now), 1.0);
    }
}
