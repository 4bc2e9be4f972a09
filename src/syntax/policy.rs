//! A markdown state's transition policy: `allowed_transitions` (R5.6–R5.20).
//!
//! The policy is what keeps a model on the rails of the workflow: it decides
//! whether an emitted (and already resolved) transition may be taken (R5.8), whether
//! the state can move on without the model writing any tag (implicit transitions,
//! R5.11–R5.12), and what the model is told when it got the tag wrong (the
//! reminder, R5.20). All three read the same list of entries, so they live together.
//!
//! Entries are kept exactly as the frontmatter wrote them, string to string,
//! because raymond compares and prints them that way: only `target`, `return`,
//! `next` and `timeout_next` constrain a transition (and `payload` for `result`);
//! every other key is carried along but never compared. The reminder text is
//! sent to the model verbatim, so its shape is raymond's, byte for byte.

use std::collections::BTreeMap;
use std::fmt;

use crate::syntax::tag::{Tag, TagKind};
use crate::text::excerpt::Excerpt;
use crate::text::state_name;

/// The keys of an entry that constrain a transition's targets (R5.8).
const TARGET_KEYS: [&str; 4] = ["target", "return", "next", "timeout_next"];

/// The state extensions an abstract policy target matches (R5.9).
const STATE_EXTENSIONS: [&str; 4] = [".md", ".sh", ".bat", ".ps1"];

/// Longest excerpt of a rejected `<result>` payload quoted in a violation message.
const MAX_PAYLOAD_CHARS: usize = 120;

/// One `allowed_transitions` entry: every key and its (stringified) value. Always
/// has a `tag` when it comes from the frontmatter parser (tagless entries are dropped).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PolicyEntry(pub(crate) BTreeMap<String, String>);

impl PolicyEntry {
    /// The entry's tag name as written (possibly a name Baton does not know).
    pub(crate) fn tag(&self) -> &str {
        self.get("tag").unwrap_or("")
    }

    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// The keys shown as attributes: everything but `tag` and `target`, sorted.
    fn attributes(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().filter(|(key, _)| *key != "tag" && *key != "target").map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether an emitted, resolved tag satisfies this entry (R5.8).
    fn allows(&self, tag: &Tag) -> bool {
        if self.tag() != tag.kind.name() {
            return false;
        }
        if tag.kind == TagKind::Result {
            return match self.get("payload") {
                Some(payload) => tag.payload.as_deref().unwrap_or("").trim() == payload,
                None => true,
            };
        }
        TARGET_KEYS.iter().all(|key| match self.get(key) {
            Some(pattern) => targets_match(pattern, constrained_value(tag, key)),
            None => true,
        })
    }
}

/// How this entry is shown to the model and in messages (R5.20).
impl fmt::Display for PolicyEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = self.tag();
        if tag == "result" {
            return write!(f, "<result>{}</result>", self.get("payload").unwrap_or("..."));
        }
        let attributes: Vec<String> = self
            .attributes()
            .map(
                |(key, value)| {
                    if value.contains('"') { format!("{key}='{value}'") } else { format!("{key}=\"{value}\"") }
                },
            )
            .collect();
        let open = if attributes.is_empty() { tag.to_string() } else { format!("{tag} {}", attributes.join(" ")) };
        let content = if tag == "ask" {
            "[human-facing prompt here]"
        } else {
            // raymond prints `TARGET` for a missing and for an empty target alike.
            self.get("target").filter(|target| !target.is_empty()).unwrap_or("TARGET")
        };
        write!(f, "<{open}>{content}</{tag}>")
    }
}

/// The value of a resolved tag that an entry key constrains. For `<ask>` the
/// target *is* `next`.
fn constrained_value<'a>(tag: &'a Tag, key: &str) -> &'a str {
    match key {
        "target" => &tag.target,
        "next" if tag.kind == TagKind::Ask => tag.attribute("next").unwrap_or(&tag.target),
        _ => tag.attribute(key).unwrap_or(""),
    }
}

/// R5.9: an exact match, or — for a pattern without extension — a target with the
/// same stem and a state extension (any case).
pub(crate) fn targets_match(pattern: &str, target: &str) -> bool {
    if pattern == target {
        return true;
    }
    if !state_name::extension(pattern).is_empty() {
        return false;
    }
    let target_extension = state_name::extension(target);
    state_name::stem(target) == pattern
        && STATE_EXTENSIONS.iter().any(|known| known.eq_ignore_ascii_case(target_extension))
}

/// A state's `allowed_transitions`. An empty list allows everything (R5.7).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Policy {
    pub(crate) entries: Vec<PolicyEntry>,
}

/// Why an emitted transition was refused (R5.10). The messages name the allowed
/// combinations in the same notation as the reminder, so the user (and the log)
/// sees what the model should have written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PolicyViolation {
    /// The tag is in the policy, but no entry for it accepts these targets.
    /// `emitted` reads like "<goto> to `OTHER.md`".
    #[error("transition {emitted} is not allowed; allowed <{tag}> transitions: {}", .allowed.join(", "))]
    Transition { tag: TagKind, emitted: String, allowed: Vec<String> },
    /// `<result>` entries all fix a payload, and this one is none of them.
    #[error("result payload \"{}\" is not allowed; allowed <result> payloads: {}", payload_excerpt(.payload), .allowed.join(", "))]
    ResultPayload { payload: String, allowed: Vec<String> },
    /// No entry has this tag at all. `allowed_tags` is in policy order, without repeats.
    #[error("tag <{tag}> is not allowed; allowed tags: {}", .allowed_tags.join(", "))]
    Tag { tag: TagKind, allowed_tags: Vec<String> },
}

/// A payload as quoted in a violation message.
fn payload_excerpt(payload: &str) -> Excerpt<'_> {
    Excerpt { text: payload, max_chars: MAX_PAYLOAD_CHARS }
}

/// A policy entry naming a state that does not exist: every turn the model obeys
/// it would fail, so the step is refused before the first one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`allowed_transitions` entry {number} (`{entry}`): its `{key}` {source}")]
pub(crate) struct UnresolvableEntry<E: std::error::Error + 'static> {
    /// Counted from 1, in the frontmatter's order.
    pub(crate) number: usize,
    pub(crate) entry: String,
    pub(crate) key: &'static str,
    pub(crate) source: E,
}

impl Policy {
    /// The first entry whose state names `resolve` refuses (it resolves a name in
    /// the workflow and says why it cannot; the caller reads the workflow, this
    /// module only reads the policy). Targets with `{{…}}` are rendered per turn
    /// and cross-workflow targets name workflows, so neither is checked here.
    pub(crate) fn unresolvable_entry<E: std::error::Error + 'static>(
        &self,
        resolve: impl Fn(&str) -> Result<(), E>,
    ) -> Option<UnresolvableEntry<E>> {
        self.entries.iter().enumerate().find_map(|(index, entry)| {
            let cross_workflow = TagKind::from_name(entry.tag()).is_some_and(TagKind::is_cross_workflow);
            TARGET_KEYS.iter().find_map(|key| {
                let value = entry.get(key)?;
                if (cross_workflow && *key == "target") || value.contains("{{") || entry.tag() == "result" {
                    return None;
                }
                let source = resolve(value).err()?;
                Some(UnresolvableEntry { number: index + 1, entry: entry.to_string(), key, source })
            })
        })
    }

    /// No entries: every transition is allowed and no reminder is possible (R5.7, R5.18).
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// R5.8: `tag` (already resolved) must satisfy at least one entry with its tag name.
    pub(crate) fn validate(&self, tag: &Tag) -> Result<(), PolicyViolation> {
        if self.is_empty() || self.entries.iter().any(|entry| entry.allows(tag)) {
            return Ok(());
        }
        let same_tag: Vec<String> =
            self.entries.iter().filter(|entry| entry.tag() == tag.kind.name()).map(PolicyEntry::to_string).collect();
        if same_tag.is_empty() {
            let mut allowed_tags: Vec<String> = Vec::new();
            for entry in &self.entries {
                if !allowed_tags.iter().any(|seen| seen == entry.tag()) {
                    allowed_tags.push(entry.tag().to_string());
                }
            }
            return Err(PolicyViolation::Tag { tag: tag.kind, allowed_tags });
        }
        if tag.kind == TagKind::Result {
            let payload = tag.payload.as_deref().unwrap_or("").trim().to_string();
            return Err(PolicyViolation::ResultPayload { payload, allowed: same_tag });
        }
        Err(PolicyViolation::Transition { tag: tag.kind, emitted: describe_emitted(tag), allowed: same_tag })
    }

    /// R5.11: exactly one entry, and it is either `result` with a `payload`, or any
    /// other tag except `ask` with a `target`.
    pub(crate) fn can_use_implicit(&self) -> bool {
        match self.entries.as_slice() {
            [entry] => match entry.tag() {
                "result" => entry.get("payload").is_some(),
                "ask" => false,
                _ => entry.get("target").is_some(),
            },
            _ => false,
        }
    }

    /// R5.12: the transition taken when the model emits no tag, or `None` when
    /// [`Policy::can_use_implicit`] does not hold or the entry's tag is not a known tag.
    ///
    /// A non-empty `input` is passed through `render` (R3.41: the caller renders it
    /// with the emitting state's own variables). Targets are not resolved here.
    pub(crate) fn implicit_tag(&self, render: impl Fn(&str) -> String) -> Option<Tag> {
        if !self.can_use_implicit() {
            return None;
        }
        let entry = self.entries.first()?;
        let kind = TagKind::from_name(entry.tag())?;
        if kind == TagKind::Result {
            let payload = entry.get("payload").map(str::to_string);
            return Some(Tag {
                kind,
                target: String::new(),
                attributes: BTreeMap::new(),
                payload,
                ignored: Vec::new(),
            });
        }
        let attributes = entry
            .attributes()
            .map(|(key, value)| {
                let value = if key == "input" && !value.is_empty() { render(value) } else { value.to_string() };
                (key.to_string(), value)
            })
            .collect();
        Some(Tag {
            kind,
            target: entry.get("target").unwrap_or("").to_string(),
            attributes,
            payload: None,
            ignored: Vec::new(),
        })
    }

    /// The reminder appended to the base prompt when the model must try again (R5.20).
    /// It starts with a newline, so no separator is added by the caller (R5.19).
    /// Meaningful only for a non-empty policy (R5.18).
    pub(crate) fn reminder(&self) -> String {
        let mut lines = vec![
            String::new(),
            "---".to_string(),
            "REMINDER: Emit exactly one of these tags (target names are literal, not placeholders):".to_string(),
            String::new(),
        ];
        lines.extend(self.entries.iter().enumerate().map(|(index, entry)| format!("{}. {entry}", index + 1)));
        lines.extend([String::new(), "Emit exactly one of the above tags.".to_string(), "---".to_string()]);
        lines.join("\n")
    }
}

/// "<goto> to `X.md`", "<call> to `X.md` with return=`R.md`", "<ask> with next=`N.md`".
fn describe_emitted(tag: &Tag) -> String {
    let mut text = format!("<{}>", tag.kind);
    let mut constraints = Vec::new();
    if tag.kind == TagKind::Ask {
        constraints.push(format!("next=`{}`", constrained_value(tag, "next")));
    } else {
        text.push_str(&format!(" to `{}`", tag.target));
        for key in ["return", "next"] {
            if let Some(value) = tag.attribute(key) {
                constraints.push(format!("{key}=`{value}`"));
            }
        }
    }
    if let Some(value) = tag.attribute("timeout_next") {
        constraints.push(format!("timeout_next=`{value}`"));
    }
    if !constraints.is_empty() {
        text.push_str(" with ");
        text.push_str(&constraints.join(", "));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pairs: &[(&str, &str)]) -> PolicyEntry {
        PolicyEntry(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    fn policy(entries: &[&[(&str, &str)]]) -> Policy {
        Policy { entries: entries.iter().map(|pairs| entry(pairs)).collect() }
    }

    fn tag(kind: TagKind, target: &str, attributes: &[(&str, &str)]) -> Tag {
        Tag::new(kind, target, attributes.iter().copied())
    }

    fn result(payload: &str) -> Tag {
        Tag {
            kind: TagKind::Result,
            target: String::new(),
            attributes: BTreeMap::new(),
            payload: Some(payload.into()),
            ignored: Vec::new(),
        }
    }

    fn violation(policy: &Policy, tag: &Tag) -> String {
        match policy.validate(tag) {
            Ok(()) => panic!("{tag:?} was allowed by {policy:?}"),
            Err(violation) => violation.to_string(),
        }
    }

    #[test]
    fn r5_7_empty_policy_allows_everything() {
        let empty = Policy::default();
        assert!(empty.is_empty());
        assert_eq!(empty.validate(&tag(TagKind::Call, "ANY.md", &[("return", "X.md")])), Ok(()));
        assert_eq!(empty.validate(&result("whatever")), Ok(()));
    }

    #[test]
    fn r5_8_goto_target_must_match() {
        let p = policy(&[&[("tag", "goto"), ("target", "NEXT")]]);
        assert_eq!(p.validate(&tag(TagKind::Goto, "NEXT.md", &[])), Ok(()));
        assert_eq!(
            violation(&p, &tag(TagKind::Goto, "OTHER.md", &[])),
            "transition <goto> to `OTHER.md` is not allowed; allowed <goto> transitions: <goto>NEXT</goto>"
        );
    }

    #[test]
    fn r5_8_entry_without_target_accepts_any_target() {
        let p = policy(&[&[("tag", "goto")]]);
        assert_eq!(p.validate(&tag(TagKind::Goto, "ANYWHERE.sh", &[])), Ok(()));
    }

    #[test]
    fn r5_8_return_next_and_timeout_next_are_checked() {
        let p = policy(&[
            &[("tag", "call"), ("target", "RESEARCH"), ("return", "SUMMARIZE.md")],
            &[("tag", "fork"), ("next", "JOIN")],
            &[("tag", "ask"), ("next", "REVIEW"), ("timeout_next", "GIVE_UP")],
        ]);
        assert_eq!(p.validate(&tag(TagKind::Call, "RESEARCH.md", &[("return", "SUMMARIZE.md")])), Ok(()));
        assert_eq!(
            violation(&p, &tag(TagKind::Call, "RESEARCH.md", &[("return", "OTHER.md")])),
            "transition <call> to `RESEARCH.md` with return=`OTHER.md` is not allowed; allowed <call> transitions: \
             <call return=\"SUMMARIZE.md\">RESEARCH</call>"
        );
        assert_eq!(p.validate(&tag(TagKind::Fork, "W.md", &[("next", "JOIN.sh")])), Ok(()));
        assert_eq!(
            violation(&p, &tag(TagKind::Fork, "W.md", &[("next", "JOIN.txt")])),
            "transition <fork> to `W.md` with next=`JOIN.txt` is not allowed; allowed <fork> transitions: \
             <fork next=\"JOIN\">TARGET</fork>"
        );
        let ask =
            |next: &str, timeout_next: &str| tag(TagKind::Ask, next, &[("next", next), ("timeout_next", timeout_next)]);
        assert_eq!(p.validate(&ask("REVIEW.md", "GIVE_UP.md")), Ok(()));
        assert_eq!(
            violation(&p, &ask("REVIEW.md", "OTHER.md")),
            "transition <ask> with next=`REVIEW.md`, timeout_next=`OTHER.md` is not allowed; allowed <ask> \
             transitions: <ask next=\"REVIEW\" timeout_next=\"GIVE_UP\">[human-facing prompt here]</ask>"
        );
    }

    #[test]
    fn r5_8_missing_constrained_attribute_fails_the_entry() {
        let p = policy(&[&[("tag", "call"), ("return", "SUMMARIZE")]]);
        assert_eq!(
            violation(&p, &tag(TagKind::Call, "RESEARCH.md", &[])),
            "transition <call> to `RESEARCH.md` is not allowed; allowed <call> transitions: \
             <call return=\"SUMMARIZE\">TARGET</call>"
        );
    }

    #[test]
    fn r5_8_ask_target_stands_for_next() {
        let p = policy(&[&[("tag", "ask"), ("next", "REVIEW")]]);
        // A tag whose `next` lives only in `target` (as the scanner guarantees for ask) still matches.
        assert_eq!(p.validate(&tag(TagKind::Ask, "REVIEW.md", &[])), Ok(()));
    }

    #[test]
    fn r5_8_other_attributes_are_never_compared() {
        let p = policy(&[&[("tag", "goto"), ("target", "NEXT"), ("input", "{{input}}"), ("cd", "x")]]);
        assert_eq!(p.validate(&tag(TagKind::Goto, "NEXT.md", &[])), Ok(()));
        assert_eq!(p.validate(&tag(TagKind::Goto, "NEXT.md", &[("input", "other"), ("cd", "y")])), Ok(()));
    }

    #[test]
    fn r5_8_any_matching_entry_is_enough() {
        let p = policy(&[&[("tag", "goto"), ("target", "A")], &[("tag", "goto"), ("target", "B.md")]]);
        assert_eq!(p.validate(&tag(TagKind::Goto, "B.md", &[])), Ok(()));
        assert_eq!(
            violation(&p, &tag(TagKind::Goto, "B.sh", &[])),
            "transition <goto> to `B.sh` is not allowed; allowed <goto> transitions: <goto>A</goto>, <goto>B.md</goto>"
        );
    }

    #[test]
    fn r5_8_result_without_payload_accepts_anything() {
        let p = policy(&[&[("tag", "result")]]);
        assert_eq!(p.validate(&result("  anything at all\n")), Ok(()));
        let no_payload = Tag { payload: None, ..result("") };
        assert_eq!(p.validate(&no_payload), Ok(()));
    }

    #[test]
    fn r5_8_result_ignores_target_keys() {
        let p = policy(&[&[("tag", "result"), ("target", "X")]]);
        assert_eq!(p.validate(&result("done")), Ok(()));
    }

    #[test]
    fn s16_33_result_payload_is_trimmed_and_case_sensitive() {
        let p = policy(&[&[("tag", "result"), ("payload", "YES")], &[("tag", "result"), ("payload", "NO")]]);
        assert_eq!(p.validate(&result(" YES ")), Ok(()));
        assert_eq!(p.validate(&result("\nNO\n")), Ok(()));
        assert_eq!(
            violation(&p, &result("yes")),
            "result payload \"yes\" is not allowed; allowed <result> payloads: <result>YES</result>, <result>NO</result>"
        );
    }

    #[test]
    fn r5_8_result_entry_payload_is_not_trimmed() {
        let p = policy(&[&[("tag", "result"), ("payload", " YES")]]);
        assert_eq!(
            violation(&p, &result(" YES")),
            "result payload \"YES\" is not allowed; allowed <result> payloads: <result> YES</result>"
        );
    }

    #[test]
    fn r5_10_rejected_payload_is_escaped_and_cut() {
        let p = policy(&[&[("tag", "result"), ("payload", "OK")]]);
        let long = format!("line\n{}", "z".repeat(200));
        let expected_excerpt = format!("line\\n{}…", "z".repeat(MAX_PAYLOAD_CHARS - 5));
        assert_eq!(
            violation(&p, &result(&long)),
            format!(
                "result payload \"{expected_excerpt}\" is not allowed; allowed <result> payloads: <result>OK</result>"
            )
        );
    }

    #[test]
    fn r5_10_tag_not_in_policy() {
        let p =
            policy(&[&[("tag", "goto"), ("target", "A")], &[("tag", "result")], &[("tag", "goto"), ("target", "B")]]);
        assert_eq!(
            violation(&p, &tag(TagKind::Call, "A.md", &[])),
            "tag <call> is not allowed; allowed tags: goto, result"
        );
        assert_eq!(
            violation(&p, &tag(TagKind::CallWorkflow, "../wf/", &[("return", "A.md")])),
            "tag <call-workflow> is not allowed; allowed tags: goto, result"
        );
    }

    #[test]
    fn r5_9_targets_match() {
        assert!(targets_match("NEXT", "NEXT"));
        assert!(targets_match("NEXT", "NEXT.md"));
        assert!(targets_match("NEXT", "NEXT.sh"));
        assert!(targets_match("NEXT", "NEXT.BAT"));
        assert!(targets_match("NEXT", "NEXT.Ps1"));
        assert!(!targets_match("NEXT", "NEXT.txt"));
        assert!(!targets_match("NEXT", "NEXTER.md"));
        assert!(!targets_match("NEXT", "next.md"));
        assert!(targets_match("NEXT.md", "NEXT.md"));
        assert!(!targets_match("NEXT.md", "NEXT.sh"));
        assert!(!targets_match("NEXT.md", "NEXT"));
        assert!(!targets_match("NEXT.md", "NEXT.MD"));
        // `v1.2` has the extension `.2`, so it is explicit and only matches itself.
        assert!(!targets_match("v1.2", "v1.2.md"));
        assert!(targets_match("v1.2", "v1.2"));
        assert!(targets_match("../wf/", "../wf/"));
        assert!(!targets_match("", "X.md"));
        assert!(targets_match("", ".md"));
    }

    #[test]
    fn r5_11_can_use_implicit() {
        assert!(policy(&[&[("tag", "goto"), ("target", "NEXT")]]).can_use_implicit());
        assert!(policy(&[&[("tag", "call-workflow"), ("target", "../wf/"), ("return", "R")]]).can_use_implicit());
        assert!(policy(&[&[("tag", "result"), ("payload", "DONE")]]).can_use_implicit());
        assert!(policy(&[&[("tag", "result"), ("payload", "")]]).can_use_implicit());
        assert!(!policy(&[&[("tag", "goto")]]).can_use_implicit());
        assert!(!policy(&[&[("tag", "ask"), ("target", "N"), ("next", "N")]]).can_use_implicit());
        assert!(!Policy::default().can_use_implicit());
        assert!(
            !policy(&[&[("tag", "goto"), ("target", "A")], &[("tag", "goto"), ("target", "B")]]).can_use_implicit()
        );
    }

    #[test]
    fn s16_32_result_without_payload_is_never_implicit() {
        let p = policy(&[&[("tag", "result")]]);
        assert!(!p.can_use_implicit());
        assert_eq!(p.implicit_tag(str::to_string), None);
    }

    #[test]
    fn s16_31_single_goto_is_implicit_and_other_target_is_a_violation() {
        let p = policy(&[&[("tag", "goto"), ("target", "NEXT")]]);
        assert_eq!(p.implicit_tag(str::to_string), Some(tag(TagKind::Goto, "NEXT", &[])));
        assert!(p.validate(&tag(TagKind::Goto, "OTHER.md", &[])).is_err());
    }

    #[test]
    fn r5_12_implicit_tag_carries_every_other_key_and_renders_input() {
        let p =
            policy(&[&[("tag", "call"), ("target", "C"), ("return", "R"), ("input", "{{input}}!"), ("cd", "{{x}}")]]);
        let rendered = p.implicit_tag(|text| text.replace("{{input}}", "hello"));
        assert_eq!(rendered, Some(tag(TagKind::Call, "C", &[("return", "R"), ("input", "hello!"), ("cd", "{{x}}")])));
    }

    #[test]
    fn r5_12_empty_input_is_not_rendered() {
        let p = policy(&[&[("tag", "goto"), ("target", "N"), ("input", "")]]);
        let implicit = p.implicit_tag(|_| "rendered".to_string());
        assert_eq!(implicit, Some(tag(TagKind::Goto, "N", &[("input", "")])));
    }

    #[test]
    fn r5_12_implicit_result_uses_the_payload() {
        let p = policy(&[&[("tag", "result"), ("payload", "DONE"), ("input", "ignored")]]);
        let expected = Tag {
            kind: TagKind::Result,
            target: String::new(),
            attributes: BTreeMap::new(),
            payload: Some("DONE".into()),
            ignored: Vec::new(),
        };
        assert_eq!(p.implicit_tag(|_| "rendered".to_string()), Some(expected));
    }

    #[test]
    fn r5_12_unknown_tag_name_gives_no_implicit_tag() {
        let p = policy(&[&[("tag", "await"), ("target", "N")]]);
        assert!(p.can_use_implicit());
        assert_eq!(p.implicit_tag(str::to_string), None);
    }

    #[test]
    fn r5_20_reminder_golden() {
        let p = policy(&[
            &[("tag", "call"), ("target", "RESEARCH.md"), ("return", "SUMMARIZE.md")],
            &[("tag", "goto"), ("target", "NEXT")],
            &[("tag", "goto")],
            &[("tag", "result")],
            &[("tag", "result"), ("payload", "DONE"), ("extra", "hidden")],
            &[("tag", "fork"), ("target", "W"), ("next", "J"), ("item", "say \"hi\""), ("cd", "sub")],
            &[("tag", "ask"), ("next", "REVIEW"), ("timeout", "1h")],
            &[("tag", "ask")],
            &[("tag", "reset"), ("target", "")],
        ]);
        let expected = "\n\
---\n\
REMINDER: Emit exactly one of these tags (target names are literal, not placeholders):\n\
\n\
1. <call return=\"SUMMARIZE.md\">RESEARCH.md</call>\n\
2. <goto>NEXT</goto>\n\
3. <goto>TARGET</goto>\n\
4. <result>...</result>\n\
5. <result>DONE</result>\n\
6. <fork cd=\"sub\" item='say \"hi\"' next=\"J\">W</fork>\n\
7. <ask next=\"REVIEW\" timeout=\"1h\">[human-facing prompt here]</ask>\n\
8. <ask>[human-facing prompt here]</ask>\n\
9. <reset>TARGET</reset>\n\
\n\
Emit exactly one of the above tags.\n\
---";
        assert_eq!(p.reminder(), expected);
    }

    #[test]
    fn r5_20_reminder_spec_example() {
        let p = policy(&[&[("tag", "call"), ("target", "RESEARCH.md"), ("return", "SUMMARIZE.md")]]);
        assert!(p.reminder().contains("\n1. <call return=\"SUMMARIZE.md\">RESEARCH.md</call>\n"));
        assert!(p.reminder().starts_with("\n---\nREMINDER: "));
        assert!(p.reminder().ends_with("\n\nEmit exactly one of the above tags.\n---"));
    }

    #[test]
    fn s16_34_reprompt_is_base_prompt_plus_reminder() {
        let p = policy(&[&[("tag", "goto"), ("target", "NEXT")]]);
        let reprompt = format!("Do the work.{}", p.reminder());
        assert_eq!(
            reprompt,
            "Do the work.\n---\nREMINDER: Emit exactly one of these tags (target names are literal, not placeholders):\n\n\
             1. <goto>NEXT</goto>\n\nEmit exactly one of the above tags.\n---"
        );
    }

    #[test]
    fn policy_entry_accessors() {
        let e = entry(&[("tag", "goto"), ("target", "N")]);
        assert_eq!(e.tag(), "goto");
        assert_eq!(e.get("target"), Some("N"));
        assert_eq!(e.get("next"), None);
        assert_eq!(PolicyEntry::default().tag(), "");
    }
}
