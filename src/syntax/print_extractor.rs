//! Streaming extraction of `<print>…</print>` bodies (R3.48–R3.49).
//!
//! Output arrives in chunks (script stdout and stderr reads, Claude assistant text
//! blocks) and a pair may straddle a chunk boundary, so the extractor carries the
//! unfinished tail from one chunk to the next. The rules are raymond's: the opener
//! is exactly `<print>` (no attributes), the first `</print>` after it closes it,
//! and there is no nesting. Prints are only reported here; they stay in the text
//! that the tag scanner reads (R3.50).

use crate::text::char_floor;

const OPEN: &str = "<print>";
const CLOSE: &str = "</print>";

/// The longest print body reported whole. raymond buffers a print without limit;
/// Baton keeps this much of a longer one and reports it, when it closes, cut with
/// a marker that says how long it was (`… [print cut: N bytes in all]`), so a
/// stream that opens a print and never closes it cannot exhaust memory, and a
/// huge print is not lost without a word.
const MAX_PRINT_BYTES: usize = 1024 * 1024;

/// A print longer than [`MAX_PRINT_BYTES`] that has not closed yet.
#[derive(Debug, Clone)]
struct Overflow {
    /// The first [`MAX_PRINT_BYTES`] of the body (cut on a character boundary).
    kept: String,
    /// Body bytes seen so far, not counting `tail`.
    seen: usize,
    /// The last few bytes, which may be the start of a `</print>`.
    tail: String,
}

/// Incremental `<print>` extraction for one output stream.
#[derive(Debug, Default, Clone)]
pub(crate) struct PrintExtractor {
    /// Carried to the next chunk: an unclosed print from its `<print>` onward, or a
    /// tail that may be the start of `<print>` (such as `<pri`).
    pending: String,
    /// While `pending` is an unclosed print: where the search for `</print>` resumes.
    /// The bytes before it were searched already, which keeps many small chunks linear.
    close_search_from: usize,
    /// Set while an oversized print is open: then `pending` is empty.
    overflow: Option<Overflow>,
}

impl PrintExtractor {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Feed the next chunk; returns the inner text of every complete
    /// `<print>…</print>` pair now available, in order.
    pub(crate) fn push(&mut self, chunk: &str) -> Vec<String> {
        let mut prints = Vec::new();
        let mut chunk = chunk;
        let rest;
        if let Some(mut overflow) = self.overflow.take() {
            let text = std::mem::take(&mut overflow.tail) + chunk;
            let Some(close) = text.find(CLOSE) else {
                let keep_from = tail_start(&text);
                overflow.seen += keep_from;
                overflow.tail = text[keep_from..].to_string();
                self.overflow = Some(overflow);
                return prints;
            };
            prints.push(cut_marker(&overflow.kept, overflow.seen + close));
            rest = text[close + CLOSE.len()..].to_string();
            chunk = &rest;
        }
        self.pending.push_str(chunk);
        let mut position = 0;
        loop {
            let Some(open) = self.pending[position..].find(OPEN).map(|i| position + i) else {
                let start = partial_opener_start(&self.pending, position);
                self.pending.drain(..start);
                self.close_search_from = 0;
                return prints;
            };
            let body = open + OPEN.len();
            let search_from = body.max(self.close_search_from);
            let Some(close) = self.pending[search_from..].find(CLOSE).map(|i| search_from + i) else {
                self.keep_unclosed_print(open);
                return prints;
            };
            prints.push(reported(&self.pending[body..close]));
            position = close + CLOSE.len();
            self.close_search_from = 0;
        }
    }

    fn keep_unclosed_print(&mut self, open: usize) {
        self.pending.drain(..open);
        if self.pending.len() > OPEN.len() + MAX_PRINT_BYTES {
            // Keep the head to report and only enough of the end to find `</print>`.
            let body = &self.pending[OPEN.len()..];
            let tail_from = tail_start(body);
            let overflow = Overflow {
                kept: body[..char_floor(body, MAX_PRINT_BYTES)].to_string(),
                seen: tail_from,
                tail: body[tail_from..].to_string(),
            };
            self.overflow = Some(overflow);
            self.pending.clear();
            self.close_search_from = 0;
            return;
        }
        // A `</print>` may begin in the last few bytes and end in the next chunk.
        self.close_search_from = tail_start(&self.pending);
    }
}

/// The inner text of every complete `<print>…</print>` pair in `text`, in order.
#[cfg(test)]
pub(crate) fn extract_prints(text: &str) -> Vec<String> {
    PrintExtractor::new().push(text)
}

/// A print body as reported: whole, or cut to [`MAX_PRINT_BYTES`] with a marker.
fn reported(body: &str) -> String {
    if body.len() <= MAX_PRINT_BYTES {
        body.to_owned()
    } else {
        cut_marker(&body[..char_floor(body, MAX_PRINT_BYTES)], body.len())
    }
}

fn cut_marker(kept: &str, total: usize) -> String {
    format!("{kept}… [print cut: {total} bytes in all]")
}

/// Where the last `CLOSE.len() - 1` bytes of `text` start (on a char boundary):
/// the most of a `</print>` that can end a chunk without being complete.
fn tail_start(text: &str) -> usize {
    char_floor(text, text.len().saturating_sub(CLOSE.len() - 1))
}

/// Where the longest suffix of `text[from..]` that is a proper prefix of `<print>`
/// starts, or `text.len()` when there is none.
fn partial_opener_start(text: &str, from: usize) -> usize {
    let earliest = text.len().saturating_sub(OPEN.len() - 1).max(from);
    // Byte comparison: a suffix starting inside a multi-byte character begins with a
    // continuation byte, which never equals `<`, so only char boundaries can match.
    (earliest..text.len()).find(|&start| OPEN.as_bytes().starts_with(&text.as_bytes()[start..])).unwrap_or(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stream(chunks: &[&str]) -> Vec<String> {
        let mut extractor = PrintExtractor::new();
        chunks.iter().flat_map(|chunk| extractor.push(chunk)).collect()
    }

    #[test]
    fn r3_48_extracts_raw_inner_text_in_order() {
        assert_eq!(extract_prints("a<print> hi\n</print>b<print></print>c<print>x</print>"), [" hi\n", "", "x"]);
    }

    #[test]
    fn r3_48_attributes_are_not_recognised() {
        assert!(extract_prints(r#"<print id="1">x</print> <PRINT>y</PRINT>"#).is_empty());
    }

    #[test]
    fn r3_48_first_closing_tag_ends_the_print() {
        assert_eq!(extract_prints("<print>a</print>b</print>"), ["a"]);
        assert_eq!(extract_prints("<print>a<print>b</print>"), ["a<print>b"]);
    }

    #[test]
    fn r3_48_unclosed_print_is_not_emitted() {
        assert!(extract_prints("<print>never closed").is_empty());
    }

    #[test]
    fn r3_49_opener_split_across_chunks() {
        assert_eq!(stream(&["<pri", "nt>x</print>"]), ["x"]);
    }

    #[test]
    fn r3_49_closer_split_across_chunks() {
        assert_eq!(stream(&["<print>x</pr", "int> after"]), ["x"]);
    }

    #[test]
    fn r3_49_one_char_at_a_time() {
        let text = "é<p<print>日本</print>--<print>🎉</pri</print><print";
        let chunks: Vec<String> = text.chars().map(String::from).collect();
        let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
        assert_eq!(stream(&chunks), ["日本", "🎉</pri"]);
    }

    #[test]
    fn r3_49_unclosed_then_closed_later() {
        let mut extractor = PrintExtractor::new();
        assert!(extractor.push("<print>abc").is_empty());
        assert!(extractor.push("").is_empty());
        assert!(extractor.push("def").is_empty());
        assert_eq!(extractor.push("ghi</print>tail<print>j</print>"), ["abcdefghi", "j"]);
    }

    #[test]
    fn r3_49_partial_opener_before_a_real_one() {
        assert_eq!(extract_prints("<p<print>a</print>"), ["a"]);
        assert_eq!(stream(&["<p", "<print>a</print>"]), ["a"]);
        assert_eq!(stream(&["<pri", "x<print>y</print>"]), ["y"]);
    }

    #[test]
    fn r3_49_only_a_possible_opener_is_kept() {
        let mut extractor = PrintExtractor::new();
        extractor.push(&"plain output ".repeat(1000));
        assert!(extractor.pending.is_empty());
        extractor.push("done <prin");
        assert_eq!(extractor.pending, "<prin");
    }

    /// Regression: a `<print>` over 1 MiB was dropped without a word. It is
    /// reported cut, with a marker, and only its head is ever held in memory.
    #[test]
    fn an_oversized_print_is_reported_cut_with_a_marker() {
        let mut extractor = PrintExtractor::new();
        assert!(extractor.push("<print>").is_empty());
        assert!(extractor.push(&"a".repeat(MAX_PRINT_BYTES)).is_empty());
        for _ in 0..2 {
            assert!(extractor.push(&"a".repeat(MAX_PRINT_BYTES)).is_empty());
            assert!(extractor.pending.is_empty(), "the body is not buffered");
        }
        assert!(extractor.push("</pr").is_empty());
        let expected = format!("{}… [print cut: {} bytes in all]", "a".repeat(MAX_PRINT_BYTES), 3 * MAX_PRINT_BYTES);
        assert_eq!(extractor.push("int><print>ok</print>"), [expected, "ok".to_string()]);
    }

    #[test]
    fn a_complete_oversized_print_is_cut_the_same_way() {
        let body = "é".repeat(MAX_PRINT_BYTES / 2 + 1);
        let cut = format!("{}… [print cut: {} bytes in all]", "é".repeat(MAX_PRINT_BYTES / 2), body.len());
        let text = format!("<print>{body}</print>");
        assert_eq!(extract_prints(&text), std::slice::from_ref(&cut));
        let (head, rest) = text.split_at(MAX_PRINT_BYTES + 1);
        assert_eq!(stream(&[head, rest]), [cut]);
    }

    /// Splits `text` at the char boundaries picked by `cuts`.
    fn split<'a>(text: &'a str, cuts: &[usize]) -> Vec<&'a str> {
        let boundaries: Vec<usize> = text.char_indices().map(|(index, _)| index).chain([text.len()]).collect();
        let mut points: Vec<usize> =
            cuts.iter().map(|cut| boundaries[cut % boundaries.len()]).chain([0, text.len()]).collect();
        points.sort_unstable();
        points.windows(2).map(|pair| &text[pair[0]..pair[1]]).collect()
    }

    const FRAGMENTS: &[&str] =
        &["<print>", "</print>", "<pri", "nt>", "</pr", "int>", "<", "/", ">", "p", "x", " ", "\n", "é", "日本", "🎉"];

    proptest! {
        #[test]
        fn streaming_matches_whole_text(
            text in crate::syntax::fragment_soup(FRAGMENTS),
            cuts in prop::collection::vec(any::<usize>(), 0..12),
        ) {
            prop_assert_eq!(stream(&split(&text, &cuts)), extract_prints(&text));
        }

        #[test]
        fn streaming_arbitrary_text_matches_whole_text(
            text in any::<String>(),
            cuts in prop::collection::vec(any::<usize>(), 0..12),
        ) {
            prop_assert_eq!(stream(&split(&text, &cuts)), extract_prints(&text));
        }

        #[test]
        fn pending_never_exceeds_an_unclosed_print(text in crate::syntax::fragment_soup(FRAGMENTS)) {
            let mut extractor = PrintExtractor::new();
            extractor.push(&text);
            prop_assert!(extractor.pending.len() < OPEN.len() || extractor.pending.starts_with(OPEN));
        }
    }
}
