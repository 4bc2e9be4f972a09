//! What a person watching the run sees, on **stderr** (stdout carries only the
//! result, decision A8).
//!
//! One line per thing that happened, prefixed by the agent it is about. When
//! stderr is a terminal each agent gets its own colour, which makes interleaved
//! output from concurrent agents readable; otherwise the text is plain. `--quiet`
//! keeps errors and the final line only.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::events::bus::{EventBus, HandlerError};
use crate::events::{Event, OutputStream};
use crate::ids::{AgentId, RunId};
use crate::model::bound::Bound;
use crate::text::duration::format_duration;
use crate::text::excerpt::Excerpt;

/// How many lines of a result payload the console shows.
const RESULT_PREVIEW_LINES: usize = 5;

const AGENT_COLOURS: [&str; 6] = ["36", "33", "35", "32", "34", "91"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verbosity {
    Normal,
    Quiet,
}

/// Turns events into the console's lines. Shared by the live console (below) and
/// `baton logs`, which replays a trace as the console showed it; it remembers each
/// agent's colour and how its last state ended, so one instance reads one run.
pub(crate) struct ConsoleText {
    verbosity: Verbosity,
    colour: bool,
    colours: HashMap<String, &'static str>,
    /// How each agent's last state ended (`REVIEW.md in 3 ms, $0.0100`), shown with its transition.
    finished: HashMap<AgentId, String>,
    /// Whether a step of this run ran on a backend other than Claude: from then on
    /// every prompt step says its backend, Claude's too (a Claude-only run's
    /// console stays as it always was).
    mixed: bool,
}

pub(crate) struct ConsoleObserver {
    text: Mutex<ConsoleText>,
    sink: Mutex<Box<dyn Write + Send>>,
}

impl ConsoleObserver {
    pub(crate) fn new(sink: Box<dyn Write + Send>, verbosity: Verbosity, colour: bool) -> ConsoleObserver {
        ConsoleObserver { text: Mutex::new(ConsoleText::new(verbosity, colour)), sink: Mutex::new(sink) }
    }

    pub(crate) fn attach(self: Arc<Self>, bus: &EventBus) {
        bus.on_all_passing(Arc::new(move |event: &Event| self.show(event)));
    }

    pub(crate) fn show(&self, event: &Event) -> Result<(), HandlerError> {
        let Some(text) = self.render(event) else { return Ok(()) };
        let mut sink = self.sink.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        sink.write_all(text.as_bytes())?;
        sink.flush()?;
        Ok(())
    }

    /// The lines for `event`, each ending in a newline, or `None` to stay silent.
    pub(crate) fn render(&self, event: &Event) -> Option<String> {
        self.text.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).render(event)
    }
}

impl ConsoleText {
    pub(crate) fn new(verbosity: Verbosity, colour: bool) -> ConsoleText {
        ConsoleText { verbosity, colour, colours: HashMap::new(), finished: HashMap::new(), mixed: false }
    }

    /// `[agent]`, in the agent's own colour when colours are on.
    pub(crate) fn agent(&mut self, agent_id: &str) -> String {
        if !self.colour {
            return format!("[{agent_id}]");
        }
        let next = AGENT_COLOURS[self.colours.len() % AGENT_COLOURS.len()];
        let colour = *self.colours.entry(agent_id.to_string()).or_insert(next);
        format!("\x1b[{colour}m[{agent_id}]\x1b[0m")
    }

    /// `text` in the SGR colour `code` when colours are on.
    pub(crate) fn emphasis(&self, text: &str, code: &str) -> String {
        if self.colour { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }

    /// The lines for `event`, each ending in a newline, or `None` to stay silent.
    pub(crate) fn render(&mut self, event: &Event) -> Option<String> {
        let quiet = self.verbosity == Verbosity::Quiet;
        let line = match event {
            Event::WorkflowStarted { .. } if quiet => return None,
            Event::WorkflowStarted { run_id, scope_dir, initial_state, resumed, rerun_of, .. } => {
                let verb = if *resumed { "resumed" } else { "started" };
                let origin = match rerun_of {
                    Some(origin) if !*resumed => format!(", a rerun of {} from step {}", origin.run_id, origin.commit),
                    _ => String::new(),
                };
                format!("run {run_id} {verb}: {} ({initial_state}){origin}", scope_dir.display())
            }
            Event::WorkflowCompleted { run_id, total_cost_usd, steps, duration_ms, .. } => format!(
                "{} run {run_id} completed: {steps} {}, ${total_cost_usd:.4}, {:.2} s",
                self.emphasis("done:", "32"),
                plural(*steps, "step"),
                *duration_ms as f64 / 1000.0
            ),
            Event::WorkflowPaused { run_id, bound: Some(bound), .. } => {
                format!("{} run {run_id}: {}", self.emphasis("paused:", "33"), bound_reached(bound, run_id))
            }
            Event::WorkflowPaused { run_id, paused_agent_count, .. } => format!(
                "{} run {run_id}: {paused_agent_count} {} paused; continue with `baton resume {run_id}`",
                self.emphasis("paused:", "33"),
                plural(*paused_agent_count as u64, "agent"),
            ),
            Event::WorkflowStopping { signal, bound, running_steps, grace_ms, .. } => {
                let cause = match (signal, bound) {
                    (Some(signal), _) => signal.clone(),
                    (None, Some(Bound::Steps { max })) => format!("the step limit of {max} was reached"),
                    (None, Some(Bound::Time { limit })) => {
                        format!("the time limit of {} was reached", format_duration(*limit))
                    }
                    (None, None) => String::from("stopping"),
                };
                let waiting = if *running_steps == 0 {
                    String::from("no steps are running")
                } else {
                    // A second signal stops running steps at once; only a signal has a second.
                    let now = if *running_steps == 1 { "it" } else { "them" };
                    let hint = if signal.is_some() {
                        format!(" (press Ctrl-C again to stop {now} now)")
                    } else {
                        String::new()
                    };
                    format!(
                        "waiting up to {} for {running_steps} running {} to finish{hint}",
                        duration(*grace_ms),
                        plural(*running_steps as u64, "step"),
                    )
                };
                format!("{} {cause}: launching no new steps; {waiting}", self.emphasis("stopping:", "33"))
            }
            Event::WorkflowWaiting { run_id, until, wait_seconds } => format!(
                "{} run {run_id}: every agent hit a usage limit; waiting {} until {until} (Ctrl-C stops; `baton resume {run_id}` continues later)",
                self.emphasis("waiting:", "33"),
                format_duration(std::time::Duration::from_secs(*wait_seconds))
            ),
            Event::WorkflowResuming { run_id } => format!("{} run {run_id}", self.emphasis("resuming:", "32")),
            Event::WorkflowThrottled { run_id, max_running_steps, open_file_limit } => format!(
                "{} run {run_id}: at most {max_running_steps} {} run at once under the open-file limit of \
                 {open_file_limit} (raise it with `ulimit -n`); the others wait their turn",
                self.emphasis("note:", "33"),
                plural(*max_running_steps as u64, "step"),
            ),
            Event::WorkflowInterrupted { run_id, signal } => format!(
                "{} run {run_id} stopped by {signal}; continue with `baton resume {run_id}`",
                self.emphasis("interrupted:", "33")
            ),
            Event::RunFailed { run_id, agent_id, state, error } => {
                let place = match (agent_id, state) {
                    (Some(agent_id), Some(state)) => format!("agent {agent_id} at {state}: "),
                    (Some(agent_id), None) => format!("agent {agent_id}: "),
                    (None, _) => String::new(),
                };
                format!(
                    "{} run {run_id} failed: {place}{}\ncontinue after fixing it with `baton resume {run_id}`",
                    self.emphasis("error:", "31"),
                    indent_continuation(error)
                )
            }
            Event::ErrorOccurred { agent_id, error_type, message, .. } if error_type.is_warning() => {
                format!("{} {} {}", self.agent(agent_id), self.emphasis("warning:", "33"), indent_continuation(message))
            }
            Event::ErrorOccurred { agent_id, message, is_retryable, retry_count, max_retries, .. } => {
                if *is_retryable {
                    format!(
                        "{} {} {} (attempt {retry_count} of {max_retries} failed)",
                        self.agent(agent_id),
                        self.emphasis("error:", "31"),
                        indent_continuation(message)
                    )
                } else if quiet {
                    return None;
                } else {
                    format!(
                        "{} {} {}",
                        self.agent(agent_id),
                        self.emphasis("error:", "31"),
                        indent_continuation(message)
                    )
                }
            }
            Event::WorkflowAsking { run_id, agent_id, ask_id, pending_count } => {
                let more = if *pending_count > 0 { format!(" ({pending_count} more waiting)") } else { String::new() };
                format!(
                    "{} run {run_id}: {agent_id} waits for an answer to {ask_id}{more}; answer with `baton answer {run_id} TEXT`",
                    self.emphasis("asking:", "33")
                )
            }
            Event::AskWaiting { agent_id, seconds_left } => format!(
                "{} still waiting for an answer ({} left; type it, then Enter)",
                self.agent(agent_id),
                duration(seconds_left * 1000)
            ),
            Event::AgentAsking { agent_id, prompt, .. } => {
                format!(
                    "{} {} {}",
                    self.agent(agent_id),
                    self.emphasis("asks:", "33"),
                    indent_continuation(prompt.trim())
                )
            }
            Event::JoinWaiting { agent_id, workers, next_state, timeout_ms } => {
                // A timeout is written as the workflow wrote it (`2h`), not as a measured time.
                let within = timeout_ms
                    .map(|ms| format!(" (at most {})", format_duration(std::time::Duration::from_millis(ms))))
                    .unwrap_or_default();
                let names: Vec<&str> = workers.iter().map(|worker| &**worker).collect();
                let whom = if names.is_empty() { "no workers".to_string() } else { names.join(", ") };
                format!("{} joins {whom}{within}, then {next_state}", self.agent(agent_id))
            }
            Event::JoinCompleted { agent_id, next_state, workers, timed_out } => {
                let outcomes: Vec<String> =
                    workers.iter().map(|worker| format!("{} {}", worker.agent_id, worker.status.as_str())).collect();
                let how = if *timed_out { "join timed out" } else { "joined" };
                let outcomes = if outcomes.is_empty() { "no workers".to_string() } else { outcomes.join(", ") };
                format!("{} {how} ({outcomes}) -> {next_state}", self.agent(agent_id))
            }
            Event::AgentPaused { agent_id, state, reason, message } => {
                format!("{} paused at {state} ({reason}): {}", self.agent(agent_id), indent_continuation(message))
            }
            Event::AgentEdited { agent_id, state, field, before, after, by, user } => {
                let shown = |text: &Option<String>| match text {
                    Some(text) => format!("\"{}\"", Excerpt { text, max_chars: 60 }),
                    None => "(none)".to_string(),
                };
                let who = user.as_ref().map(|user| format!(" ({user})")).unwrap_or_default();
                format!(
                    "{} edited before {state} by {by}{who}: {} {} -> {}",
                    self.agent(agent_id),
                    field.as_str(),
                    shown(before),
                    shown(after)
                )
            }
            _ if quiet => return None,
            Event::ControlIgnored { line, reason } => {
                format!("{} control line ignored ({reason}): {}", self.emphasis("note:", "33"), first_line(line, 100))
            }
            Event::StateStarted { agent_id, state, attempt, .. } => {
                let retry = if *attempt > 1 { format!(" (attempt {attempt})") } else { String::new() };
                format!("{} > {state}{retry}", self.agent(agent_id))
            }
            Event::StepRanOn { agent_id, worker, .. } => format!("{}   on worker {worker}", self.agent(agent_id)),
            Event::StateCompleted { agent_id, state, duration_ms, cost_usd, .. } => {
                let cost = if *cost_usd > 0.0 { format!(", ${cost_usd:.4}") } else { String::new() };
                self.finished.insert(agent_id.clone(), format!("{state} in {}{cost}", duration(*duration_ms)));
                return None;
            }
            Event::TransitionOccurred { recovered: true, .. } => return None,
            Event::TransitionOccurred { agent_id, from_state, transition_type, to_state, metadata, .. } => {
                let Some(to) = to_state else { return None };
                let finished = self.finished.remove(agent_id).unwrap_or_else(|| from_state.to_string());
                // A join has not moved the agent yet: say where it will go (`docs/join.md`).
                let to = match metadata.get("join") {
                    Some(next) => format!("{next} once its workers end"),
                    None => to.to_string(),
                };
                let mut line = format!("{} < {finished}: {transition_type} -> {to}", self.agent(agent_id));
                for key in ["return", "workers", "input"] {
                    if let Some(value) = metadata.get(key) {
                        line.push_str(&format!(" {key}={}", quote_preview(value)));
                    }
                }
                line
            }
            Event::AgentSpawned { parent_agent_id, new_agent_id, initial_state } => {
                format!("{} spawned by {parent_agent_id} at {initial_state}", self.agent(new_agent_id))
            }
            Event::AgentTerminated { agent_id, result } => {
                let finished = self.finished.remove(agent_id).map(|f| format!(" < {f}:")).unwrap_or_default();
                format!("{}{finished} terminated with result: {}", self.agent(agent_id), preview(result))
            }
            Event::PrintOutput { agent_id, content, stream } => {
                let marker = if *stream == OutputStream::Stderr { "print (stderr)" } else { "print" };
                format!("{} {marker}: {}", self.agent(agent_id), indent_continuation(content))
            }
            Event::ToolInvocation { agent_id, tool_name, detail } => {
                format!("{}   tool {tool_name} {}", self.agent(agent_id), first_line(detail, 100))
            }
            Event::ToolError { agent_id, message } => {
                format!("{}   tool error: {}", self.agent(agent_id), first_line(message, 160))
            }
            Event::ProgressMessage { agent_id, message } => {
                format!("{}   {}", self.agent(agent_id), first_line(message, 120))
            }
            Event::ClaudeInvocationStarted { agent_id, is_reminder: true, reminder_attempt, .. } => {
                format!(
                    "{}   reminder {reminder_attempt}: asking again for exactly one allowed tag",
                    self.agent(agent_id)
                )
            }
            Event::ClaudeInvocationStarted { agent_id, backend, model, .. }
                if self.mixed || *backend != crate::ids::BackendName::Claude =>
            {
                self.mixed = true;
                format!("{}   {}", self.agent(agent_id), on_backend(*backend, model))
            }
            Event::ClaudeInvocationStarted { .. }
            | Event::ClaudeStreamOutput { .. }
            | Event::PromptRendered { .. }
            | Event::ScriptOutput { .. } => return None,
        };
        Some(format!("{line}\n"))
    }
}

/// Which backend and model a prompt step runs on: `on codex (model gpt-5)`, or
/// `on pi (its default model)` when the state names none (the console, `baton logs`).
pub(crate) fn on_backend(backend: crate::ids::BackendName, model: &str) -> String {
    if model.is_empty() { format!("on {backend} (its default model)") } else { format!("on {backend} (model {model})") }
}

/// The first line of `text`, cut to `limit` characters.
fn first_line(text: &str, limit: usize) -> String {
    let line = text.trim().lines().next().unwrap_or("");
    if line.chars().count() <= limit {
        line.to_string()
    } else {
        format!("{}…", line.chars().take(limit).collect::<String>())
    }
}

/// Which bound paused run `run_id`, and how to continue it (the console and `baton status`).
pub(crate) fn bound_reached(bound: &Bound, run_id: &RunId) -> String {
    match bound {
        Bound::Steps { max } => {
            format!("step limit of {max} reached; continue with `baton resume {run_id} --max-steps <more>`")
        }
        Bound::Time { limit } => format!(
            "time limit of {} reached; continue with `baton resume {run_id} --time-limit <longer>`",
            format_duration(*limit)
        ),
    }
}

fn plural(count: u64, noun: &str) -> String {
    if count == 1 { noun.to_string() } else { format!("{noun}s") }
}

fn duration(milliseconds: u64) -> String {
    if milliseconds < 1000 { format!("{milliseconds} ms") } else { format!("{:.2} s", milliseconds as f64 / 1000.0) }
}

/// Multi-line text continues on indented lines so it stays attached to its prefix.
fn indent_continuation(text: &str) -> String {
    text.trim_end_matches('\n').replace('\n', "\n    ")
}

/// The first lines of a result payload.
fn preview(text: &str) -> String {
    let trimmed = text.trim();
    let lines: Vec<&str> = trimmed.lines().collect();
    if lines.len() <= RESULT_PREVIEW_LINES {
        return indent_continuation(trimmed);
    }
    let shown = lines[..RESULT_PREVIEW_LINES].join("\n");
    format!("{}\n    … ({} more lines)", indent_continuation(&shown), lines.len() - RESULT_PREVIEW_LINES)
}

/// A short, quoted, single-line form of an attribute value.
fn quote_preview(value: &str) -> String {
    const LIMIT: usize = 60;
    let single_line = value.replace('\n', "⏎");
    if single_line.chars().count() <= LIMIT {
        return format!("{single_line:?}");
    }
    let cut: String = single_line.chars().take(LIMIT).collect();
    format!("{:?}…", cut)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::events::error_kind::ErrorKind;

    fn observer(colour: bool, verbosity: Verbosity) -> ConsoleObserver {
        ConsoleObserver::new(Box::new(std::io::sink()), verbosity, colour)
    }

    fn started(agent: &str) -> Event {
        Event::StateStarted {
            agent_id: agent.into(),
            state: "A.sh".into(),
            state_type: crate::events::StateType::Script,
            step: 1,
            attempt: 1,
        }
    }

    #[test]
    fn each_agent_keeps_its_own_colour_on_a_terminal() {
        let console = observer(true, Verbosity::Normal);
        assert_eq!(console.render(&started("main")).unwrap(), "\x1b[36m[main]\x1b[0m > A.sh\n");
        assert_eq!(console.render(&started("main_w1")).unwrap(), "\x1b[33m[main_w1]\x1b[0m > A.sh\n");
        assert_eq!(console.render(&started("main")).unwrap(), "\x1b[36m[main]\x1b[0m > A.sh\n");
    }

    fn invocation(backend: crate::ids::BackendName, model: &str, reminder: u32) -> Event {
        Event::ClaudeInvocationStarted {
            agent_id: "main".into(),
            state: "A.md".into(),
            backend,
            model: model.into(),
            session_id: None,
            is_fork: false,
            is_reminder: reminder > 0,
            reminder_attempt: reminder,
        }
    }

    #[test]
    fn a_step_on_another_backend_says_so_and_then_every_step_does() {
        use crate::ids::BackendName;
        let console = observer(false, Verbosity::Normal);
        // A Claude-only run reads as it always has.
        assert_eq!(console.render(&invocation(BackendName::Claude, "sonnet", 0)), None);
        assert_eq!(
            console.render(&invocation(BackendName::Codex, "gpt-5", 0)).as_deref(),
            Some("[main]   on codex (model gpt-5)\n")
        );
        assert_eq!(
            console.render(&invocation(BackendName::Codex, "gpt-5", 1)).as_deref(),
            Some("[main]   reminder 1: asking again for exactly one allowed tag\n")
        );
        assert_eq!(
            console.render(&invocation(BackendName::Claude, "sonnet", 0)).as_deref(),
            Some("[main]   on claude (model sonnet)\n")
        );
        assert_eq!(
            console.render(&invocation(BackendName::Pi, "", 0)).as_deref(),
            Some("[main]   on pi (its default model)\n")
        );
        assert_eq!(observer(false, Verbosity::Quiet).render(&invocation(BackendName::Pi, "", 0)), None);
    }

    #[test]
    fn plain_text_when_not_a_terminal() {
        assert_eq!(observer(false, Verbosity::Normal).render(&started("main")).unwrap(), "[main] > A.sh\n");
    }

    #[test]
    fn retries_show_the_attempt_and_duration_joins_the_transition() {
        let console = observer(false, Verbosity::Normal);
        let mut retry = started("main");
        if let Event::StateStarted { attempt, .. } = &mut retry {
            *attempt = 2;
        }
        assert_eq!(console.render(&retry).unwrap(), "[main] > A.sh (attempt 2)\n");
        let completed = Event::StateCompleted {
            agent_id: "main".into(),
            state: "A.sh".into(),
            step: 1,
            cost_usd: 0.0123,
            total_cost_usd: 0.0123,
            session_id: None,
            duration_ms: 1500,
            tokens: None,
        };
        assert_eq!(console.render(&completed), None);
        let transition = Event::TransitionOccurred {
            agent_id: "main".into(),
            from_state: "A.sh".into(),
            to_state: Some("B.sh".into()),
            transition_type: "call".into(),
            metadata: BTreeMap::from([("return".to_string(), "R.sh".to_string())]),
            commit: 3,
            recovered: false,
        };
        assert_eq!(
            console.render(&transition).unwrap(),
            "[main] < A.sh in 1.50 s, $0.0123: call -> B.sh return=\"R.sh\"\n"
        );
    }

    #[test]
    fn long_results_are_cut_to_their_first_lines() {
        let console = observer(false, Verbosity::Normal);
        let event = Event::AgentTerminated { agent_id: "main".into(), result: "1\n2\n3\n4\n5\n6\n7\n".into() };
        assert_eq!(
            console.render(&event).unwrap(),
            "[main] terminated with result: 1\n    2\n    3\n    4\n    5\n    … (2 more lines)\n"
        );
    }

    #[test]
    fn quiet_hides_progress_but_not_failures() {
        let console = observer(false, Verbosity::Quiet);
        assert_eq!(console.render(&started("main")), None);
        let failed = Event::RunFailed {
            run_id: "r".into(),
            agent_id: Some("main".into()),
            state: Some("A.sh".into()),
            error: "boom".into(),
        };
        assert_eq!(
            console.render(&failed).unwrap(),
            "error: run r failed: agent main at A.sh: boom\ncontinue after fixing it with `baton resume r`\n"
        );
    }

    #[test]
    fn a_bound_stop_offers_no_second_ctrl_c() {
        let console = observer(false, Verbosity::Normal);
        let stopping = |signal: Option<&str>, bound| Event::WorkflowStopping {
            run_id: "r".into(),
            signal: signal.map(str::to_string),
            bound,
            running_steps: 2,
            grace_ms: 30_000,
        };
        assert_eq!(
            console.render(&stopping(None, Some(Bound::Steps { max: 7 }))).unwrap(),
            "stopping: the step limit of 7 was reached: launching no new steps; waiting up to 30.00 s for 2 running \
             steps to finish\n"
        );
        assert_eq!(
            console.render(&stopping(Some("SIGTERM"), None)).unwrap(),
            "stopping: SIGTERM: launching no new steps; waiting up to 30.00 s for 2 running steps to finish (press \
             Ctrl-C again to stop them now)\n"
        );
    }

    /// Regression: an unknown frontmatter key was printed as `error:` though the
    /// step goes on.
    #[test]
    fn an_unknown_frontmatter_field_is_a_warning() {
        let event = Event::ErrorOccurred {
            agent_id: "main".into(),
            error_type: ErrorKind::UnknownField,
            message: "START.md: ignoring unrecognized frontmatter field(s): modle".into(),
            state: "START.md".into(),
            is_retryable: false,
            retry_count: 0,
            max_retries: 0,
        };
        assert_eq!(
            observer(false, Verbosity::Normal).render(&event).unwrap(),
            "[main] warning: START.md: ignoring unrecognized frontmatter field(s): modle\n"
        );
    }
}
