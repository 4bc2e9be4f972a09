//! The checks that look at one state at a time: its frontmatter, and each
//! transition it names, resolved the way a run would resolve it.

use std::collections::BTreeSet;

use crate::backend::claude::vocabulary::{MODEL_ALIASES, is_model};
use crate::backend::profile::{all_option_keys, profile};
use crate::ids::BackendName;
use crate::lint::check::Check;
use crate::lint::diagnostic::{Diagnostic, Location};
use crate::lint::source::LintedWorkflow;
use crate::lint::transitions::{Dynamic, StateAnalysis, Transition};
use crate::syntax::scanner::{TagParseError, validate_ask_timeout};
use crate::syntax::tag::TagKind;
use crate::text::state_name;
use crate::text::suggestion::did_you_mean;
use crate::workflow::resolution::{Platform, ResolveError, resolve_in_listing};
use crate::workflow::specifier::{Caller, SpecifierError, WorkflowEntry, resolve_specifier};
use crate::workflow::yaml_scope::STATE_KEYS;

/// The frontmatter keys Baton reads (R5.2), besides the backends' options ([`all_option_keys`]).
const FRONTMATTER_KEYS: [&str; 6] =
    ["allowed_transitions", "model", "effort", "force_implicit", "isolation", "backend"];

/// Tags that take `task` (R3.x): new or inherit, and `reset` only `new`.
const TASK_TAGS: [TagKind; 4] = [TagKind::Reset, TagKind::Fork, TagKind::ResetWorkflow, TagKind::ForkWorkflow];

/// Findings about one state, and the workflows its cross-workflow tags lead to.
pub(crate) struct StateFindings {
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Each cross-workflow tag that resolved: the tag and where it leads.
    pub(crate) followed: Vec<(Transition, WorkflowEntry)>,
}

pub(crate) struct StateChecker<'a> {
    workflow: &'a LintedWorkflow,
    state: &'a StateAnalysis,
    /// Abstract names already reported as ambiguous in this workflow.
    ambiguous_seen: &'a mut BTreeSet<String>,
    findings: StateFindings,
}

impl<'a> StateChecker<'a> {
    pub(crate) fn check(
        workflow: &'a LintedWorkflow,
        state: &'a StateAnalysis,
        ambiguous_seen: &'a mut BTreeSet<String>,
    ) -> StateFindings {
        let mut checker = StateChecker {
            workflow,
            state,
            ambiguous_seen,
            findings: StateFindings { diagnostics: Vec::new(), followed: Vec::new() },
        };
        checker.frontmatter();
        checker.malformed_tags();
        for transition in &state.transitions {
            checker.transition(transition);
        }
        checker.forks();
        checker.script();
        checker.findings
    }

    fn file(&self) -> &str {
        &self.state.text.file
    }

    fn diagnostic(&self, check: Check, at: Location, message: String) -> Diagnostic {
        Diagnostic::new(check, &self.workflow.label, at, message).state(&self.state.text.file)
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.findings.diagnostics.push(diagnostic);
    }

    fn report(&mut self, check: Check, at: Location, message: String) {
        self.push(self.diagnostic(check, at, message));
    }

    fn at_key(&self, path: &[&str]) -> Location {
        self.workflow.at_key(&self.state.text, path)
    }

    /// Where a transition's `key` (`target`, `next`, …) is written.
    fn at(&self, transition: &Transition, key: &str) -> Location {
        self.workflow.at_transition(&self.state.text, transition, key)
    }

    fn frontmatter(&mut self) {
        let state: &'a StateAnalysis = self.state;
        if let Some(error) = &state.frontmatter_error {
            let at = match error.block_position() {
                Some((line, column)) if !self.workflow.is_yaml() => Location {
                    file: self.workflow.file_of(self.file()),
                    line: Some(line + 1),
                    column: Some(column.unwrap_or(1)),
                },
                _ => self.at_key(&[error.key().unwrap_or("allowed_transitions")]),
            };
            self.report(Check::FrontmatterParseError, at, error.message_without_position());
        }
        let Some(frontmatter) = &state.frontmatter else {
            self.unknown_fields(&[]);
            return;
        };
        let (name, options) = match self.workflow.backend_of(frontmatter) {
            Ok(chosen) => chosen,
            Err(problem) => {
                // A broken manifest is reported once, as `invalid-manifest`; the
                // state's own `backend` is this state's finding.
                let own = frontmatter.backend.as_deref().map(BackendName::parse);
                if matches!(own, Some(Err(_))) || self.workflow.manifest_problem().is_none() {
                    let at = self.at_key(&["backend"]);
                    let found = frontmatter.backend.clone().unwrap_or_default();
                    self.push(self.diagnostic(Check::UnknownBackend, at, problem).found(&found));
                }
                (own.and_then(Result::ok).unwrap_or_default(), frontmatter.options.clone())
            }
        };
        let backend = profile(name);
        let sorted = backend.sort_options(&options);
        self.unknown_fields(&sorted.unknown);
        for (key, why) in &sorted.ignored {
            let at = self.at_key(&[key]);
            let message = format!("`{key}` is {why}");
            self.push(self.diagnostic(Check::BackendOptionIgnored, at, message).found(key));
        }
        if let Err(error) = (backend.check_options)(&options) {
            let at = self.at_key(&[error.key()]);
            self.report(Check::FrontmatterParseError, at, format!("Invalid YAML frontmatter: {error}"));
        }
        if name != BackendName::Claude {
            if let Some(model) = frontmatter.model.as_deref()
                && let Some(message) = backend.model_problem(model)
            {
                let at = self.at_key(&["model"]);
                self.push(self.diagnostic(Check::InvalidModel, at, message).found(model));
            }
            if let Some(effort) = frontmatter.effort.as_deref()
                && let Some(message) = backend.effort_problem(effort)
            {
                let suggestion = did_you_mean(effort, backend.efforts.iter().copied()).map(str::to_string);
                let message = format!("{message}{}", hint(suggestion.as_deref()));
                let at = self.at_key(&["effort"]);
                self.push(self.diagnostic(Check::InvalidEffort, at, message).found(effort).suggestion(suggestion));
            }
            self.frontmatter_policy(frontmatter);
            return;
        }
        if let Some(model) = frontmatter.model.as_deref().filter(|model| !is_model(model)) {
            let suggestion = did_you_mean(model, MODEL_ALIASES).map(str::to_string);
            let owner = backend
                .owner_of(model)
                .filter(|_| suggestion.is_none())
                .map(|owner| format!("; it is a {} model: `backend: {owner}`?", profile(owner).cli))
                .unwrap_or_default();
            let message = format!(
                "model `{model}` is not a Claude Code model (an alias such as opus, sonnet or haiku, or a full name \
                 such as `claude-sonnet-4-5`){}{owner}",
                hint(suggestion.as_deref()),
            );
            let at = self.at_key(&["model"]);
            self.push(self.diagnostic(Check::InvalidModel, at, message).found(model).suggestion(suggestion));
        }
        // Claude Code takes a comma-separated list of fallback models.
        let fallback = crate::backend::claude::options::ClaudeOptions::from_values(&options)
            .ok()
            .and_then(|options| options.fallback_model)
            .unwrap_or_default();
        let fallbacks = fallback.split(',').map(str::trim);
        for model in fallbacks.filter(|model| !model.is_empty() && !is_model(model)) {
            let suggestion = did_you_mean(model, MODEL_ALIASES).map(str::to_string);
            let message = format!(
                "fallback model `{model}` is not a Claude Code model (an alias such as opus, sonnet or haiku, or a \
                 full name such as `claude-sonnet-4-5`){}",
                hint(suggestion.as_deref())
            );
            let at = self.at_key(&["fallback_model"]);
            self.push(self.diagnostic(Check::InvalidModel, at, message).found(model).suggestion(suggestion));
        }
        let efforts = backend.efforts;
        if let Some(effort) = frontmatter.effort.as_deref().filter(|effort| !efforts.contains(effort)) {
            let suggestion = did_you_mean(effort, efforts.iter().copied()).map(str::to_string);
            let message = format!(
                "effort `{effort}` is not a Claude Code effort level ({}){}",
                efforts.join(", "),
                hint(suggestion.as_deref())
            );
            let at = self.at_key(&["effort"]);
            self.push(self.diagnostic(Check::InvalidEffort, at, message).found(effort).suggestion(suggestion));
        }
        self.frontmatter_policy(frontmatter);
    }

    /// `force_implicit` and `allowed_transitions`.
    fn frontmatter_policy(&mut self, frontmatter: &crate::syntax::frontmatter::StateFrontmatter) {
        let policy = frontmatter.policy.as_ref();
        if frontmatter.force_implicit && !policy.is_some_and(|policy| policy.can_use_implicit()) {
            let entries = policy.map_or(0, |policy| policy.entries.len());
            let message = format!(
                "`force_implicit: true` needs exactly one `allowed_transitions` entry that is a `result` with a \
                 `payload` or another tag (not `ask`) with a `target`; this state has {entries} {}",
                if entries == 1 { "entry that is neither" } else { "entries" }
            );
            let at = self.at_key(&["force_implicit"]);
            self.report(Check::ForceImplicitInvalid, at, message);
        }
        if let Some(policy) = policy {
            if policy.can_use_implicit() && !frontmatter.force_implicit {
                let message = format!(
                    "the only allowed transition, `{}`, is taken when the agent emits no tag",
                    policy.entries[0]
                );
                let at = self.at_key(&["allowed_transitions"]);
                self.report(Check::ImplicitTransition, at, message);
            }
            for (index, entry) in policy.entries.iter().enumerate() {
                if entry.tag() == "ask" && entry.get("next").is_none_or(str::is_empty) {
                    let message = format!(
                        "`allowed_transitions` entry {} (`tag: ask`) has no `next`: the state the agent goes to once answered",
                        index + 1
                    );
                    let at = self.at_key(&["allowed_transitions", &index.to_string(), "tag"]);
                    self.report(Check::MissingAskNext, at, message);
                }
                // The entry is the example the agent is shown (R5.20): a timeout it could
                // not use would be copied into every `<ask>` the agent writes.
                if entry.tag() == "ask"
                    && let Err(error) = validate_ask_timeout(&entry.0)
                {
                    let message = format!("`allowed_transitions` entry {} (`tag: ask`): {error}", index + 1);
                    let key = match error {
                        TagParseError::AskTimeoutNextPathSeparator { .. } => "timeout_next",
                        _ => "timeout",
                    };
                    let at = self.at_key(&["allowed_transitions", &index.to_string(), key]);
                    self.report(Check::InvalidAskTimeout, at, message);
                }
            }
            if policy.entries.len() > 1 {
                self.unused_entries(policy);
            }
        }
        for (index, tag) in &self.state.unknown_policy_tags {
            let names = TagKind::ALL.map(TagKind::name);
            let suggestion = did_you_mean(tag, names).map(str::to_string);
            let message = format!(
                "`allowed_transitions` entry {} has `tag: {tag}`, which is no transition tag{}",
                index + 1,
                hint(suggestion.as_deref())
            );
            let at = self.at_key(&["allowed_transitions", &index.to_string(), "tag"]);
            self.push(self.diagnostic(Check::InvalidTag, at, message).found(tag).suggestion(suggestion));
        }
    }

    /// The keys no backend knows: `unknown` of a prompt's frontmatter, or a YAML
    /// workflow's own finding for its state.
    fn unknown_fields(&mut self, unknown: &[String]) {
        let (fields, known): (Vec<(String, Location)>, &[&str]) = match self.workflow.unknown_state_keys(self.file()) {
            Some(keys) => (keys, STATE_KEYS),
            None => (unknown.iter().map(|field| (field.clone(), self.at_key(&[field]))).collect(), &FRONTMATTER_KEYS),
        };
        for (field, at) in fields {
            let suggestion = did_you_mean(&field, known.iter().copied().chain(all_option_keys())).map(str::to_string);
            let message = format!("unknown field `{field}`, ignored at run time{}", hint(suggestion.as_deref()));
            self.push(self.diagnostic(Check::UnknownField, at, message).found(&field).suggestion(suggestion));
        }
    }

    /// R5.18 re-prompts list every entry, but the prompt itself is what the agent
    /// reads first: an entry it never mentions is one the agent does not know of.
    fn unused_entries(&mut self, policy: &crate::syntax::policy::Policy) {
        let state: &'a StateAnalysis = self.state;
        let body = state.text.body();
        for (index, entry) in policy.entries.iter().enumerate() {
            let Some(target) = entry.get("target").filter(|target| !target.is_empty()) else { continue };
            let named = TagKind::from_name(entry.tag()).is_some();
            if !named
                || matches!(entry.tag(), "result" | "ask")
                || body.contains(state_name::strip_state_extension(target))
            {
                continue;
            }
            let message = format!(
                "`allowed_transitions` entry {} allows `<{}>` to `{target}`, but the prompt never mentions `{target}`",
                index + 1,
                entry.tag()
            );
            let at = self.at_key(&["allowed_transitions", &index.to_string(), "target"]);
            self.push(self.diagnostic(Check::UnusedAllowedTransition, at, message).found(target));
        }
    }

    fn malformed_tags(&mut self) {
        let state: &'a StateAnalysis = self.state;
        for (offset, kind, error) in &state.malformed {
            let check = match error {
                TagParseError::MissingAskNext => Check::MissingAskNext,
                TagParseError::InvalidAskTimeout { .. } | TagParseError::AskTimeoutNextPathSeparator { .. } => {
                    Check::InvalidAskTimeout
                }
                _ => Check::InvalidTag,
            };
            let message = format!("{error}; a run stops if the agent emits this `<{kind}>`");
            let at = self.workflow.at_offset(&self.state.text, *offset);
            self.report(check, at, message);
        }
    }

    fn transition(&mut self, transition: &Transition) {
        let kind = transition.kind;
        if kind.is_cross_workflow() {
            self.cross_workflow(transition);
        } else if !transition.target.is_empty() {
            self.local_name(transition, "target", &transition.target.clone(), Check::MissingTarget);
        }
        for key in ["next", "timeout_next"] {
            let applies = match key {
                "next" => kind.is_fork_family(),
                _ => kind == TagKind::Ask,
            };
            if let Some(name) = transition.attribute(key).filter(|name| applies && !name.is_empty()) {
                self.local_name(transition, key, name, Check::MissingTarget);
            }
        }
        if matches!(kind, TagKind::Call | TagKind::Function | TagKind::CallWorkflow | TagKind::FunctionWorkflow) {
            match transition.attribute("return").filter(|name| !name.is_empty()) {
                Some(name) => self.local_name(transition, "return", name, Check::MissingReturn),
                None => {
                    let message = format!(
                        "{} has no `return` attribute: the state the `<result>` of `{}` comes back to",
                        transition.subject(),
                        transition.target
                    );
                    let at = self.at(transition, "return");
                    self.report(Check::MissingReturn, at, message);
                }
            }
        }
        if kind == TagKind::Ask && transition.attributes.contains_key("cd") {
            let message =
                format!("{} does not take a `cd` attribute: the agent stays where it is", transition.subject());
            let at = self.at(transition, "cd");
            self.report(Check::UnsupportedCdAttribute, at, message);
        }
        self.task(transition);
        self.isolation(transition);
    }

    /// `isolation` on a fork is `worktree` (or empty, or `none`): any other value
    /// pauses the parent at run time (`docs/isolation.md`).
    fn isolation(&mut self, transition: &Transition) {
        if !matches!(transition.kind, TagKind::Fork | TagKind::ForkWorkflow) {
            return;
        }
        let Some(value) = transition.attribute("isolation") else { return };
        if matches!(value, "" | "none" | "worktree") {
            return;
        }
        let suggestion = did_you_mean(value, ["worktree", "none"]).map(str::to_string);
        let message = format!(
            "{} has isolation=\"{value}\"; expected `worktree` (or `none`){}",
            transition.subject(),
            hint(suggestion.as_deref())
        );
        let at = self.at(transition, "isolation");
        self.push(self.diagnostic(Check::InvalidIsolationValue, at, message).found(value).suggestion(suggestion));
    }

    fn task(&mut self, transition: &Transition) {
        let Some(value) = transition.attribute("task") else { return };
        let subject = transition.subject();
        let at = self.at(transition, "task");
        if !TASK_TAGS.contains(&transition.kind) {
            let message =
                format!("{subject} does not take a `task` attribute; only reset, fork and their -workflow forms do");
            self.report(Check::UnsupportedTaskAttribute, at, message);
        } else if value != "new" && value != "inherit" {
            let suggestion = did_you_mean(value, ["new", "inherit"]).map(str::to_string);
            let message =
                format!("{subject} has task=\"{value}\"; expected `new` or `inherit`{}", hint(suggestion.as_deref()));
            self.push(self.diagnostic(Check::InvalidTaskValue, at, message).found(value).suggestion(suggestion));
        } else if value == "inherit" && matches!(transition.kind, TagKind::Reset | TagKind::ResetWorkflow) {
            let message = format!("{subject} does not take task=\"inherit\": a reset keeps its task folder already");
            self.report(Check::UnsupportedTaskAttribute, at, message);
        }
    }

    /// Check that `name`, written as `key` of `transition`, names a state here.
    fn local_name(&mut self, transition: &Transition, key: &str, name: &str, check: Check) {
        let Err(error) = self.workflow.resolve(name) else { return };
        // How the name is written: a tag's content, or an attribute.
        let what = match key {
            "target" if transition.kind != TagKind::Ask => format!("target `{name}`"),
            "target" => format!("next=\"{name}\""),
            _ => format!("{key}=\"{name}\""),
        };
        let subject = transition.subject();
        let at = self.at(transition, key);
        match error {
            ResolveError::NotFound { suggestion, .. } => {
                let message =
                    format!("{subject} {what} is not a state of this workflow{}", hint(suggestion.as_deref()));
                self.push(self.diagnostic(check, at, message).found(name).suggestion(suggestion));
            }
            ResolveError::Ambiguous { files, .. } => {
                if self.ambiguous_seen.insert(name.to_string()) {
                    let message = format!(
                        "{subject} {what} is ambiguous: {} exist; write the file name with its extension",
                        both(&files)
                    );
                    self.push(self.diagnostic(Check::AmbiguousStateResolution, at, message).found(name));
                }
            }
            other => {
                let message = format!("{subject} {what}: {other}");
                self.push(self.diagnostic(check, at, message).found(name));
            }
        }
    }

    fn cross_workflow(&mut self, transition: &Transition) {
        if transition.target.is_empty() {
            return;
        }
        match resolve_specifier(&transition.target, Caller::local(&self.workflow.scope)) {
            Ok(entry) => self.findings.followed.push((transition.clone(), entry)),
            // A remote workflow is fetched when a run reaches it, and a fetched one names
            // others relative to its URL; lint stays offline.
            Err(SpecifierError::Remote { .. } | SpecifierError::FromRemote { .. }) => {}
            Err(error) => {
                let message = format!("{} names no workflow: {error}", transition.subject());
                let at = self.at(transition, "target");
                self.push(self.diagnostic(Check::MissingTarget, at, message).found(&transition.target));
            }
        }
    }

    fn forks(&mut self) {
        let state: &'a StateAnalysis = self.state;
        let transitions = &state.transitions;
        let Some(first_fork) = transitions.iter().find(|transition| transition.kind.is_fork_family()) else { return };
        let nexts: Vec<&Transition> = transitions
            .iter()
            .filter(|transition| transition.kind.is_fork_family() && transition.attribute("next").is_some())
            .collect();
        // A `<join>` continues the forking agent too, once its workers ended (`docs/join.md`).
        let has_goto = transitions.iter().any(|transition| matches!(transition.kind, TagKind::Goto | TagKind::Join));
        if nexts.is_empty() && !has_goto {
            let message = format!(
                "{} has no `next` attribute and the state shows no `<goto>` or `<join>`: the forking agent has nowhere \
                 to continue",
                first_fork.subject()
            );
            let at = self.at(first_fork, "next");
            self.report(Check::MissingForkNext, at, message);
        }
        let Some(first) = nexts.first() else { return };
        let first_next = first.attribute("next").unwrap_or_default().to_string();
        if let Some(other) = nexts.iter().find(|transition| transition.attribute("next") != Some(first_next.as_str())) {
            let other_next = other.attribute("next").unwrap_or_default().to_string();
            let first_at = self.at(first, "next");
            let message = format!(
                "the fork tags disagree on `next`: `{other_next}` here, `{first_next}` at line {}; the forking agent continues at one state",
                first_at.line.unwrap_or(1)
            );
            let at = self.at(other, "next");
            self.push(self.diagnostic(Check::ForkNextMismatch, at, message).found(&other_next));
        }
    }

    fn script(&mut self) {
        let state: &'a StateAnalysis = self.state;
        let message = match &state.dynamic {
            None => return,
            Some(Dynamic::NoLiteralTag) => (
                self.workflow.at_offset(&self.state.text, 0),
                "the script prints no transition tag literally; where it goes is decided at run time and cannot be checked"
                    .to_string(),
            ),
            Some(Dynamic::Computed { offset, source }) => (
                self.workflow.at_offset(&self.state.text, *offset),
                format!("`{source}` is built at run time; its target cannot be checked before the script runs"),
            ),
        };
        let (at, message) = message;
        self.report(Check::ScriptStateNoStaticAnalysis, at, message);
    }
}

impl LintedWorkflow {
    /// Resolve state name `name` here, as a run would (R1.6–R1.16).
    pub(crate) fn resolve(&self, name: &str) -> Result<String, ResolveError> {
        // R1.16: in a YAML workflow an extension is dropped and the name searched as abstract.
        let name = if self.is_yaml() { state_name::strip_state_extension(name) } else { name };
        resolve_in_listing(&self.all_files, &self.label, name, Platform::CURRENT)
    }
}

/// `both A and B`, `all of A, B and C`.
fn both(files: &[String]) -> String {
    match files {
        [first, second] => format!("both {first} and {second}"),
        [init @ .., last] => format!("all of {} and {last}", init.join(", ")),
        [] => String::new(),
    }
}

fn hint(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |suggestion| format!("; did you mean `{suggestion}`?"))
}
