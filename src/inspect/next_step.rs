//! What a stopped agent would do next, exactly as it would be sent (issue 24,
//! `baton status`, `baton logs --next AGENT`): for a prompt state the session it
//! would continue or fork and the rendered prompt (the template filled with the
//! agent's input and variables, or the `--prompt-file` text that replaces it); for
//! a script its command line, working directory and environment.
//!
//! Read-only, like the rest of `inspect`: it opens the workflow and renders with
//! the same functions the executors use (`syntax::template`, the script
//! environment), and never writes a file. Two things are only known when the step
//! starts, and are named as such: the file `{{results}}` / `$BATON_RESULTS` point
//! to after a `<join>`, and `$BATON_INPUT_FILE`.

use std::fmt::Write as _;

use crate::backend::profile::profile;
use crate::executor::agent_variables;
use crate::executor::script::script_environment;
use crate::ids::BackendName;
use crate::model::agent::Agent;
use crate::model::run_state::RunState;
use crate::syntax::template::render;
use crate::text::state_name;
use crate::workflow::manifest::BackendChoice;
use crate::workflow::resolution;
use crate::workflow::state_file::read_prompt;

/// Named where a path is only chosen when the step starts.
const AT_LAUNCH: &str = "(a file written when the step starts)";

/// What `agent` of `run` runs next, in full: a header, then the prompt or the
/// command. `Err` says why it cannot be shown (its workflow or state is broken:
/// the step would fail the same way).
pub(crate) fn describe(run: &RunState, agent: &Agent) -> Result<NextStep, String> {
    let state = &agent.current_state;
    let mut header = String::new();
    let _ = writeln!(header, "agent {} runs {state} next", agent.id);
    if let Some(input) = &agent.pending_result {
        let _ = writeln!(header, "input: {}", quoted(input));
    }
    let workflow = resolution::open(&agent.scope_dir).map_err(|error| error.to_string())?;
    if state_name::is_script(state) {
        let source = workflow.script(state)?;
        let path = match source {
            crate::workflow::scope::ScriptSource::File(path) => path.display().to_string(),
            crate::workflow::scope::ScriptSource::Inline(_) => format!("{AT_LAUNCH} holding {state}'s source"),
        };
        let results = agent.join_results.as_ref().map(|_| std::path::PathBuf::from(AT_LAUNCH));
        let env = script_environment(&run.launch_params.environment, &run.run_id, agent, None, results.as_deref());
        let mut body = String::new();
        let _ = writeln!(body, "command: bash {path}");
        let _ = writeln!(body, "cwd: {}", agent.cwd.display());
        let _ = writeln!(body, "environment (besides baton's own):");
        for (name, value) in &env {
            let _ = writeln!(body, "  {name}={}", quoted(value));
        }
        return Ok(NextStep { header, session: None, text: body });
    }
    let prompt = read_prompt(&workflow, state).map_err(|error| error.to_string())?;
    let run_backend = run.launch_params.backend.unwrap_or_default();
    let (backend, _) = BackendChoice::for_state(&prompt.frontmatter, &workflow, run_backend)?;
    let on = profile(backend);
    let model = prompt
        .frontmatter
        .model
        .clone()
        .or_else(|| run.launch_params.model.clone().filter(|_| backend == run_backend))
        .unwrap_or_else(|| on.default_model.to_string());
    let _ = writeln!(header, "backend: {} (model {model})", on.cli);
    let session = session(run, agent, backend);
    let text = match &agent.prompt_override {
        Some(text) => {
            let _ = writeln!(header, "prompt: replaced by --prompt-file, sent as written, once");
            text.clone()
        }
        None => {
            let mut values = agent_variables(agent, &run.run_id);
            if agent.join_results.is_some() {
                values.insert("results".to_string(), AT_LAUNCH.to_string());
            }
            render(&prompt.body, &values)
        }
    };
    Ok(NextStep { header, session: Some(session), text })
}

/// A stopped agent's next step, in parts: `status` shows the head of `text`,
/// `logs --next` all of it.
pub(crate) struct NextStep {
    pub(crate) header: String,
    /// For a prompt: the conversation it goes to.
    pub(crate) session: Option<String>,
    /// The rendered prompt, or the script's command and environment.
    pub(crate) text: String,
}

impl NextStep {
    /// Everything, for `baton logs --next`.
    pub(crate) fn full(&self) -> String {
        let mut out = self.header.clone();
        if let Some(session) = &self.session {
            let _ = writeln!(out, "session: {session}");
            let _ = writeln!(out, "prompt:");
            for line in self.text.lines() {
                let _ = writeln!(out, "  {line}");
            }
        } else {
            out.push_str(&self.text);
        }
        out
    }
}

/// The conversation the next prompt turn goes to, as the markdown executor chooses it.
fn session(run: &RunState, agent: &Agent, backend: BackendName) -> String {
    let crosses = agent.session_backend.unwrap_or_default() != backend
        && (agent.fork_session_id.is_some() || agent.session_id.is_some());
    match (&agent.fork_session_id, agent.continue_and_fork, &agent.session_id) {
        _ if crosses => "a fresh conversation (the agent's is another backend's)".to_string(),
        (Some(caller), _, _) => format!("forks {caller} (the caller's conversation)"),
        (None, true, _) => "continues the directory's latest conversation, as a fork".to_string(),
        (None, false, Some(session)) if run.borrowed_sessions.contains(session) => {
            format!("forks {session} (borrowed from the run this one reruns)")
        }
        (None, false, Some(session)) => format!("continues {session}"),
        (None, false, None) => "a fresh conversation".to_string(),
    }
}

/// `text` quoted on one line, cut after 200 characters.
fn quoted(text: &str) -> String {
    format!("\"{}\"", crate::text::excerpt::Excerpt { text, max_chars: 200 })
}
