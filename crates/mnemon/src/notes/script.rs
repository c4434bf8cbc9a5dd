//! Which characters belong to scripts written without spaces between words: the tokenizer cuts
//! their runs into bigrams, the near-duplicate sketch reads each character as a word.

/// Han, Hiragana, Katakana, Hangul, Bopomofo (and a few ideographic marks such as `々` `〇`).
#[inline]
pub fn is_cjk(c: char) -> bool {
    let u = c as u32;
    if u < 0x1100 {
        return false;
    }
    matches!(u,
        0x1100..=0x11FF     // Hangul Jamo
        | 0x2E80..=0x2FDF   // CJK Radicals Supplement, Kangxi Radicals
        | 0x3005..=0x3007   // 々 〆 〇
        | 0x3021..=0x3029   // Hangzhou numerals
        | 0x3031..=0x3035   // vertical kana repeat marks
        | 0x3038..=0x303C
        | 0x3041..=0x309F   // Hiragana
        | 0x30A0..=0x30FF   // Katakana
        | 0x3105..=0x312F   // Bopomofo
        | 0x3131..=0x318F   // Hangul Compatibility Jamo
        | 0x31A0..=0x31BF   // Bopomofo Extended
        | 0x31F0..=0x31FF   // Katakana Phonetic Extensions
        | 0x3400..=0x4DBF   // CJK Extension A
        | 0x4E00..=0x9FFF   // CJK Unified Ideographs
        | 0xA960..=0xA97F   // Hangul Jamo Extended-A
        | 0xAC00..=0xD7AF   // Hangul Syllables
        | 0xD7B0..=0xD7FF   // Hangul Jamo Extended-B
        | 0xF900..=0xFAFF   // CJK Compatibility Ideographs
        | 0xFF66..=0xFF9F   // Halfwidth Katakana
        | 0xFFA0..=0xFFDC   // Halfwidth Hangul
        | 0x1B000..=0x1B16F // Kana Supplement / Extended-A
        | 0x20000..=0x323AF // CJK Extensions B..H, Compatibility Supplement
    )
}
