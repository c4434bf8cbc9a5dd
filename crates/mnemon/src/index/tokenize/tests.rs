//! The tokenizer's rules end to end, whichever file holds each: text in, index, slug and query
//! terms out, through [`Tokenizer`]'s methods.

use super::*;

fn idx(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    Tokenizer::new().index_terms(text, &mut out);
    out
}

fn slug(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    Tokenizer::new().slug_terms(text, &mut out);
    out
}

fn q(text: &str) -> QueryTerms {
    Tokenizer::new().query_terms(text)
}

fn qterms(text: &str) -> Vec<String> {
    q(text).terms.into_iter().map(|t| t.term).collect()
}

#[test]
fn tokenizer_is_send_sync_and_its_debug_names_the_stemmer() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Tokenizer>();
    let t = Tokenizer::default();
    assert_eq!(format!("{t:?}"), "Tokenizer { stemmer: \"english\" }");
}

#[test]
fn slug_splits_an_id_on_separators_and_stems_its_words() {
    assert_eq!(
        slug("runbooks/pgbouncer-pool-sizing"),
        ["runbook", "pgbouncer", "pool", "size"]
    );
    assert_eq!(slug("pgbouncer-pool-sizing"), ["pgbouncer", "pool", "size"]);
    assert_eq!(slug("snake_case_id"), ["snake", "case", "id"]);
    assert_eq!(slug("notes/2026.05.v2"), ["note", "2026", "05", "v2"]);
    assert_eq!(slug("Max_Client_Conn"), ["max", "client", "conn"]);
    assert_eq!(slug("//--__.."), Vec::<String>::new());
    assert_eq!(
        slug("设计/数据库"),
        ["设", "设计", "计", "数", "数据", "据", "据库", "库"]
    );
}

#[test]
fn inflections_stem_alike_and_short_digit_or_non_ascii_words_are_kept() {
    assert_eq!(idx("deploying deployed deploys deploy"), ["deploy"; 4]);
    assert_eq!(idx("connections connected connecting"), ["connect"; 3]);
    assert_eq!(idx("running runs"), ["run", "run"]);
    // possessive: apostrophe removed, then the plural stems away
    assert_eq!(
        idx("PgBouncer's pool"),
        ["pgbouncer", "pg", "bouncer", "pool"]
    );
    assert_eq!(idx("don't"), ["dont"]);
    assert_eq!(
        qterms("rock'n'roll O'Brien y'all"),
        ["rocknrol", "obrien", "yall"]
    );
    // short, digit-bearing and non-ASCII words are not stemmed; a word left ASCII once
    // its accents are gone is
    assert_eq!(
        idx("is as v1s ipv4s серверы cafés"),
        ["is", "as", "v1s", "ipv4s", "серверы", "cafe"]
    );
    assert_eq!(qterms("deploying"), idx("deployed"));
}

/// A note written `résumé` was not found by `resume`, and a file name macOS wrote
/// decomposed (`re\u{301}sume\u{301}`) not by the same word typed precomposed.
#[test]
fn accented_unaccented_and_decomposed_spellings_are_one_term() {
    let one = idx("resume");
    for spelling in [
        "résumé",
        "RÉSUMÉ",
        "re\u{301}sume\u{301}",
        "Re\u{301}sume\u{301}",
    ] {
        assert_eq!(idx(spelling), one, "{spelling:?}");
        assert_eq!(qterms(spelling), qterms("resume"), "{spelling:?}");
    }
    assert_eq!(idx("naïve café"), idx("naive cafe"));
    assert_eq!(
        idx("Straße Ærø Łódź Œuvre"),
        ["strass", "aero", "lodz", "oeuvr"]
    );
    // Greek and Cyrillic lose their accents too; letters of their own stay.
    assert_eq!(idx("μνήμη ёлка"), ["μνημη", "елка"]);
    assert_eq!(idx("한글 ऩ"), idx("한글 \u{929}"));
    assert_eq!(idx("\u{929}"), ["\u{929}"], "a nukta letter is kept whole");
}

/// `CO₂` was the words `co` and `₂` (segmentation breaks at a subscript), so a question
/// writing `CO2` did not meet it, nor `m2` a note writing `m²`.
#[test]
fn digits_written_raised_or_lowered_after_a_letter_are_part_of_its_word() {
    assert_eq!(idx("CO₂ H₂O m² km² H₂SO₄"), idx("CO2 H2O m2 km2 H2SO4"));
    assert_eq!(idx("CO₂ emissions"), ["co2", "emiss"]);
    assert_eq!(qterms("CO₂"), qterms("co2"));
    // After a digit they are an exponent, not part of a number; alone or after CJK, digits.
    assert_eq!(idx("10⁶ 2³"), ["10", "6", "2", "3"]);
    assert_eq!(idx("₂O 数₂x"), ["2", "o", "数", "2", "x"]);
    assert_eq!(idx("x₁₂y"), idx("x12y"));
}

/// `1,000` was the numbers `1` and `000`, so a question asking about `1000` (or `12500`) did
/// not meet a note writing `1,000` (or `12,500`), nor the reverse.
#[test]
fn a_number_written_with_thousands_separators_is_the_number_without_them() {
    assert_eq!(
        idx("1,000 users, 12,500,000 rows and 1000"),
        ["1000", "user", "12500000", "row", "and", "1000"]
    );
    assert_eq!(qterms("12,500"), qterms("12500"));
    assert_eq!(idx("１，０００ é 1,000"), ["1000", "e", "1000"]);
    // Not thousands: a decimal comma, a list, four digits after, five before, a letter
    // before, a group after the decimal point.
    assert_eq!(
        idx("3,14 1,2,3 1,0000 12345,678 v1,000 1,000.250"),
        [
            "3", "14", "1", "2", "3", "1", "0000", "12345", "678", "v1", "000", "1000", "250"
        ]
    );
}

/// `we'll`, `she'll` and `I'd` closed up were the words `well`, `shell` and `id`: a question
/// about shell scripts or ids found every note written in the first person.
#[test]
fn a_contraction_is_dropped_not_closed_up_into_another_word() {
    assert_eq!(
        idx("We'll ask; she’ll go, I'd say they're sure I've I'm CC'D"),
        [
            "we", "ask", "she", "go", "i", "say", "they", "sure", "i", "i", "cc"
        ]
    );
    for (contracted, word) in [("we'll", "well"), ("she'll", "shell"), ("I'd", "id")] {
        assert!(!idx(contracted).contains(&idx(word)[0]), "{contracted}");
    }
    assert_eq!(q("we’ll").terms.len(), 1, "only the stop word is left");
    // Not a contraction: a word going on after it, digits, or letters of a word.
    assert_eq!(
        idx("we'llx we'll2 rock'n'roll y'all ma'am d'Artagnan I'd've"),
        [
            "wellx",
            "well2",
            "rocknrol",
            "yall",
            "maam",
            "dartagnan",
            "artagnan",
            "id"
        ]
    );
    // Whatever follows it: punctuation, CJK, the end of the text.
    assert_eq!(
        idx("we'll.x she’ll数 I'd한 we'll"),
        ["we", "x", "she", "数", "i", "한", "we"]
    );
}

/// Text copied from a PDF writes `ﬁ` and `ﬂ` as one char, and `ﬁrewall` was another word
/// than `firewall`; a Greek word in capitals ends in `Σ`, which was another letter than the
/// `ς` of the word in lower case; `Þorsteinn` and `Kadıköy` were not `Thorsteinn` and
/// `Kadikoy`.
#[test]
fn compatibility_forms_and_letters_without_a_decomposition_fold_to_their_plain_spelling() {
    assert_eq!(
        idx("ﬁrewall ﬂoodgate oﬀshore ﬃx ﬅop"),
        ["firewal", "floodgat", "offshor", "ffix", "stop"]
    );
    assert_eq!(qterms("ﬁrewall"), qterms("firewall"));
    assert_eq!(
        idx("µs 𝐝𝐞𝐩𝐥𝐨𝐲𝐞𝐝 ſtate Ĳssel ǅemal"),
        idx("μs deployed state ijssel džemal")
    );
    assert_eq!(idx("𝐃𝐞𝐩𝐥𝐨𝐲"), ["deploy"]);
    assert_eq!(idx("λόγος ΛΌΓΟΣ λογοϲ"), ["λογοσ"; 3]);
    assert_eq!(
        idx("Þorsteinn Guðrún Kadıköy Ħal ŧ"),
        ["thorsteinn", "gudrun", "kadikoy", "hal", "t"]
    );
    assert_eq!(qterms("Kadıköy"), qterms("Kadikoy"));
    // Superscripts are the digits; a form standing for more than letters and digits stays.
    assert_eq!(idx("x² ₂"), ["x2", "2"]);
    assert_eq!(idx("½ ℃"), ["½"]);
    // Names are folded alike.
    let mut folded = String::new();
    fold_word_into("Þórðarson", &mut folded);
    assert_eq!(folded, "thordarson");
}

#[test]
fn case_and_fullwidth_forms_fold_to_one_term() {
    assert_eq!(
        idx("PgBouncer POOL Pool pool"),
        ["pgbouncer", "pg", "bouncer", "pool", "pool", "pool"]
    );
    assert_eq!(idx("ÉCOLE Straße ΣΟΦΙΑ"), ["ecol", "strass", "σοφια"]);
    // fullwidth ASCII folds to ASCII (and then stems like ASCII)
    assert_eq!(
        idx("ＰｇＢｏｕｎｃｅｒ　Ｐｏｏｌｓ"),
        ["pgbouncer", "pg", "bouncer", "pool"]
    );
    assert_eq!(idx("１２３"), ["123"]);
}

#[test]
fn punctuation_splits_words_and_indexing_keeps_stop_words() {
    assert_eq!(
        idx("In 2026 we had 48 nodes"),
        ["in", "2026", "we", "had", "48", "node"]
    );
    assert_eq!(idx("v1.2"), ["v1", "2"]);
    assert_eq!(idx("3.14 and 3,14"), ["3", "14", "and", "3", "14"]);
    assert_eq!(
        idx("pool_size max_client_conn"),
        ["pool", "size", "max", "client", "conn"]
    );
    assert_eq!(idx("a.b:c/d-e"), ["a", "b", "c", "d", "e"]);
    assert_eq!(
        idx("see `pool_mode = transaction` (docs: https://x.io/pgbouncer)"),
        [
            "see",
            "pool",
            "mode",
            "transact",
            "doc",
            "https",
            "x",
            "io",
            "pgbouncer"
        ]
    );
    // stop words are kept when indexing
    assert_eq!(idx("the of and"), ["the", "of", "and"]);
    // invisible chars do not split, middle dot does
    assert_eq!(idx("con\u{AD}nection a\u{B7}b"), ["connect", "a", "b"]);
    // A zero-width space inside a word (a place to wrap it) is no break either: segmentation
    // breaks there, and `data\u{200B}base` was `data` and `base`.
    assert_eq!(idx("data\u{200B}base"), idx("database"));
    assert_eq!(qterms("con\u{200B}\u{200B}nection"), ["connect"]);
    assert_eq!(idx("Data\u{200B}Base"), ["databas", "data", "base"]);
    assert_eq!(
        idx("data\u{200B} base \u{200B}x y\u{200B}"),
        ["data", "base", "x", "y"]
    );
    assert_eq!(idx("data\u{200B}数据"), ["data", "数", "数据", "据"]);
}

#[test]
fn cjk_runs_index_as_unigrams_and_bigrams_broken_by_punctuation() {
    assert_eq!(
        idx("数据库连接"),
        ["数", "数据", "据", "据库", "库", "库连", "连", "连接", "接"]
    );
    assert_eq!(idx("池"), ["池"]);
    // punctuation breaks runs
    assert_eq!(idx("数据，库。池"), ["数", "数据", "据", "库", "池"]);
    assert_eq!(idx("연결 풀"), ["연", "연결", "결", "풀"]);
    assert_eq!(idx("データ"), ["デ", "デー", "ー", "ータ", "タ"]);
}

#[test]
fn cjk_queries_are_deduplicated_bigrams_and_never_a_prefix() {
    let r = q("数据库连接");
    assert_eq!(
        r.terms.iter().map(|t| t.term.as_str()).collect::<Vec<_>>(),
        ["数据", "据库", "库连", "连接"]
    );
    assert!(r.terms.iter().all(|t| t.cjk && t.surface == t.term));
    assert!(!r.last_is_prefix);
    assert_eq!(qterms("池"), ["池"]);
    assert!(!q("池").last_is_prefix);
    // deduplicated
    assert_eq!(qterms("数据数据"), ["数据", "据数"]);
}

#[test]
fn a_word_with_case_humps_is_indexed_whole_and_in_parts() {
    assert_eq!(
        idx("scaleDownDelaySecondsAfterScaleOut"),
        [
            "scaledowndelaysecondsafterscaleout",
            "scale",
            "down",
            "delay",
            "second",
            "after",
            "scale",
            "out"
        ]
    );
    assert_eq!(idx("HTTPServer"), ["httpserver", "http", "server"]);
    assert_eq!(idx("utf8String"), ["utf8string", "utf8", "string"]);
    assert_eq!(idx("S3Bucket"), ["s3bucket", "s3", "bucket"]);
    // A number and the letters glued after it are parts whatever their case: `500ms` was
    // one word where `500MB` had the parts `500` and `mb`.
    assert_eq!(idx("500ms"), ["500ms", "500", "ms"]);
    assert_eq!(
        idx("500MB 500mb"),
        ["500mb", "500", "mb", "500mb", "500", "mb"]
    );
    assert_eq!(
        idx("128Gb 10k 3f9a2c1 2fa"),
        ["128gb", "128", "gb", "10k", "10", "3f9a2c1", "2fa", "fa"]
    );
    assert_eq!(idx("500mS"), ["500ms", "500"]);
    let unit = q("timeout 500ms");
    let parts: Vec<&str> = unit.terms[1]
        .parts
        .iter()
        .map(|p| p.term.as_str())
        .collect();
    assert_eq!(parts, ["500", "ms"]);
    // a one-letter part is dropped; a word in one case has no parts
    assert_eq!(idx("iPhone"), ["iphon", "phone"]);
    assert_eq!(idx("HTTP http Http"), ["http", "http", "http"]);
    // at most MAX_PARTS parts; the humps after the last are ignored
    let long = idx("aaBbCcDdEeFfGgHhIiJjKk");
    assert_eq!(long.len(), 1 + MAX_PARTS, "{long:?}");
    assert_eq!(long[MAX_PARTS], "hhiijjkk");
    // a query keeps the whole word and its parts aside
    let q = q("maxClientConn pool");
    let t: Vec<&str> = q.terms.iter().map(|t| t.term.as_str()).collect();
    assert_eq!(t, ["maxclientconn", "pool"]);
    let parts: Vec<&str> = q.terms[0].parts.iter().map(|p| p.term.as_str()).collect();
    assert_eq!(parts, ["max", "client", "conn"]);
    assert!(q.terms[1].parts.is_empty());
    // stop words are not parts
    let q = super::Tokenizer::new().query_terms("MySQL");
    let parts: Vec<&str> = q.terms[0].parts.iter().map(|p| p.term.as_str()).collect();
    assert_eq!(parts, ["sql"]);
}

#[test]
fn a_change_of_script_splits_a_word() {
    assert_eq!(
        idx("PgBouncer连接池配置"),
        [
            "pgbouncer",
            "pg",
            "bouncer",
            "连",
            "连接",
            "接",
            "接池",
            "池",
            "池配",
            "配",
            "配置",
            "置"
        ]
    );
    // Hangul is glued to Latin by segmentation; split on the script change
    assert_eq!(idx("redis연결pool"), ["redi", "연", "연결", "결", "pool"]);
    let r = q("PgBouncer连接池配置");
    assert_eq!(
        r.terms
            .iter()
            .map(|t| (t.term.as_str(), t.cjk))
            .collect::<Vec<_>>(),
        [
            ("pgbouncer", false),
            ("连接", true),
            ("接池", true),
            ("池配", true),
            ("配置", true)
        ]
    );
    assert!(!r.last_is_prefix);
    assert_eq!(qterms("连接池pool"), ["连接", "接池", "pool"]);
    assert!(q("连接池pool").last_is_prefix);
}

#[test]
fn queries_drop_stop_words_unless_only_stop_words_are_left() {
    let r = q("How do I size the PgBouncer connection pool?");
    assert_eq!(
        r.terms
            .iter()
            .map(|t| (t.term.as_str(), t.surface.as_str()))
            .collect::<Vec<_>>(),
        [
            ("size", "size"),
            ("pgbouncer", "pgbouncer"),
            ("connect", "connection"),
            ("pool", "pool")
        ]
    );
    assert!(!r.last_is_prefix);
    // only stop words: keep them
    assert_eq!(qterms("what is this?"), ["what", "is", "this"]);
    assert_eq!(qterms("The the THE"), ["the"]);
    // dedup by normalised term, first surface wins
    let r = q("deploying deployed");
    assert_eq!(r.terms.len(), 1);
    assert_eq!(r.terms[0].surface, "deploying");
    assert!(!r.last_is_prefix);
}

#[test]
fn only_an_unfinished_last_query_word_is_a_prefix() {
    let r = q("connection poo");
    assert_eq!(qterms("connection poo"), ["connect", "poo"]);
    assert!(r.last_is_prefix);
    assert_eq!(r.terms[1].surface, "poo");
    assert!(!q("connection pool ").last_is_prefix);
    assert!(!q("connection pool.").last_is_prefix);
    assert!(!q("connection pool?").last_is_prefix);
    assert!(q("pool").last_is_prefix);
    assert!(q("max_cli").last_is_prefix);
    // single char: no
    assert!(!q("connection p").last_is_prefix);
    // trailing stop word is dropped -> the last kept term is complete
    assert!(!q("pgbouncer for").last_is_prefix);
    // only stop words: the last one may still be a prefix
    assert!(q("how to").last_is_prefix);
    // last word duplicates an earlier term: not the last term, so no prefix
    assert!(!q("pool size pool").last_is_prefix);
    // CJK never
    assert!(!q("连接").last_is_prefix);
    assert!(!q("").last_is_prefix);
}

#[test]
fn terms_are_cut_to_max_term_bytes_on_a_char_boundary() {
    let long = "a".repeat(200);
    assert_eq!(idx(&long), ["a".repeat(MAX_TERM_BYTES)]);
    // multi-byte: 1 + 31 * 2 = 63 bytes, the next 'ж' would exceed 64
    let long = format!("x{}", "ж".repeat(199));
    let terms = idx(&long);
    assert_eq!(terms, [format!("x{}", "ж".repeat(31))]);
    assert_eq!(terms[0].len(), 63);
    let r = q(&long);
    assert_eq!(r.terms[0].term, terms[0]);
    assert_eq!(r.terms[0].surface, terms[0]);
    assert!(r.last_is_prefix);
    // every term of a long mixed word respects the limit
    let long = "Internationalization".repeat(10);
    assert!(idx(&long).iter().all(|t| t.len() <= MAX_TERM_BYTES));
}

#[test]
fn a_query_keeps_its_first_max_query_terms_terms() {
    let text: String = (0..100).map(|i| format!("w{i} ")).collect();
    let r = q(&text);
    assert_eq!(r.terms.len(), MAX_QUERY_TERMS);
    assert_eq!(r.terms[0].term, "w0");
    assert_eq!(r.terms[MAX_QUERY_TERMS - 1].term, "w31");
    assert_eq!(r.read_to, text.find(" w32"), "read up to the end of w31");
    let text: String = (0..100).map(|i| format!("w{i} ")).collect::<String>() + "w99x";
    assert!(!q(&text).last_is_prefix);
    // Repeated words and stop words are no terms left out.
    let text = "the w0 and w1 ".repeat(50);
    assert_eq!(q(&text).read_to, None);
    // A question of stop words only is searched by them: past the 32nd, cut there.
    let stops: Vec<&str> = "a about above after again against all am an and any are as at be \
        because been before being below between both but by could did do does doing during \
        each few for from further had has"
        .split_whitespace()
        .collect();
    assert!(stops.iter().all(|w| is_stop_word(w)) && stops.len() > MAX_QUERY_TERMS);
    let text = stops.join(" ");
    let r = q(&text);
    assert_eq!(r.terms.len(), MAX_QUERY_TERMS);
    let cut = r.read_to.expect("cut");
    // The part read holds the same terms, none left out.
    let read = q(&text[..cut]);
    assert_eq!(read.terms, r.terms);
    assert_eq!(read.read_to, None);
    assert!(cut < text.len() && text[cut..].starts_with(' '), "{cut}");
    // CJK: each character pair is a term; the cut falls inside the run.
    let run: String = (0x4E00u32..0x4E40).filter_map(char::from_u32).collect();
    let r = q(&run);
    assert_eq!(r.terms.len(), MAX_QUERY_TERMS);
    let read = r.read_to.expect("cut");
    assert!(read < run.len() && run.is_char_boundary(read), "{read}");
}

#[test]
fn text_without_words_gives_no_terms() {
    for s in [
        "",
        "   ",
        "\n\t ",
        "!?.,;:-_/()[]{}",
        "— … «»",
        "👍🎉",
        "。、！",
    ] {
        assert!(idx(s).is_empty(), "{s:?}");
        assert!(slug(s).is_empty(), "{s:?}");
        let r = q(s);
        assert!(r.terms.is_empty(), "{s:?}");
        assert!(!r.last_is_prefix, "{s:?}");
    }
}

#[test]
fn ascii_and_unicode_paths_agree() {
    // the same ASCII words give the same terms when the chunk contains non-ASCII text
    assert_eq!(
        idx("pool_size=v1.2 don't"),
        ["pool", "size", "v1", "2", "dont"]
    );
    assert_eq!(
        idx("pool_size=v1.2 don't—ж"),
        ["pool", "size", "v1", "2", "dont", "ж"]
    );
    assert_eq!(idx("pool_size=v1.2—ж"), ["pool", "size", "v1", "2", "ж"]);
}

/// [`Tokenizer::query_terms_into`] gives the terms of [`Tokenizer::query_terms`], one buffer
/// reused across texts.
#[test]
fn query_terms_into_gives_the_terms_of_query_terms() {
    let tok = Tokenizer::new();
    let mut list = TermList::default();
    let long: String = (0..40).map(|i| format!("word{i} ")).collect();
    let texts = [
        "runbooks/postgres-connection-pooling",
        "2025-07-08-maintenance-overran-slurmdb",
        "how-to-deploy",
        "the-of-and",
        "",
        "---",
        "ElastiCache maxClientConn MySQL",
        "写放大 成本 写放大",
        "deploy deploy Deploys",
        "Tomás café naïve",
        long.as_str(),
        "a b c",
    ];
    for text in texts {
        let want: Vec<String> = tok
            .query_terms(text)
            .terms
            .into_iter()
            .map(|t| t.term)
            .collect();
        tok.query_terms_into(text, &mut list);
        let got: Vec<&str> = list.iter().collect();
        assert_eq!(got, want, "{text:?}");
        assert_eq!(list.len(), want.len());
        assert_eq!(list.is_empty(), want.is_empty());
    }
}

proptest::proptest! {
    #[test]
    fn query_terms_into_agrees_on_any_text(text in "\\PC{0,80}", ids in "[a-zA-Z0-9_/. -]{0,60}") {
        let tok = Tokenizer::new();
        let mut list = TermList::default();
        for t in [text.as_str(), ids.as_str()] {
            let want: Vec<String> = tok.query_terms(t).terms.into_iter().map(|t| t.term).collect();
            tok.query_terms_into(t, &mut list);
            proptest::prop_assert_eq!(list.iter().collect::<Vec<_>>(), want);
        }
    }

    /// Recall looks for a question naming a note by its name or id only among notes whose
    /// index holds every query term in that field (`LexHit::in_name`, `LexHit::in_id`): each
    /// query term of a name is one of the name's index terms, each of an id one of the id's
    /// slug terms.
    #[test]
    fn query_terms_of_a_title_are_its_fields_index_terms(
        name in "\\PC{0,60}",
        id in "[a-zA-Z0-9_/.-]{0,30}([ÀÉéüß中文]{0,3}[a-zA-Z0-9_/.-]{0,20})?",
    ) {
        let tok = Tokenizer::new();
        let mut list = TermList::default();
        let mut held = Vec::new();
        tok.index_terms(&name, &mut held);
        tok.query_terms_into(&name, &mut list);
        for t in list.iter() {
            proptest::prop_assert!(held.iter().any(|h| h == t), "{:?}: {:?} not in {:?}", name, t, held);
        }
        held.clear();
        tok.slug_terms(&id, &mut held);
        tok.query_terms_into(&id, &mut list);
        for t in list.iter() {
            proptest::prop_assert!(held.iter().any(|h| h == t), "{:?}: {:?} not in {:?}", id, t, held);
        }
    }
}
