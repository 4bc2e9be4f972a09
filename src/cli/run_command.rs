//! `baton run <WORKFLOW>`: create a run and execute it.

use std::path::{Path, PathBuf};

use super::CliError;
use super::arguments::RunArguments;
use super::execute::{
    RunToExecute, apply_launch_options, check_budget, check_engine, engine_for_new_run, execute, limits, timeout_of,
};
use crate::cli::config::Config;
use crate::cli::lint_command::finding;
use crate::ids::{AgentId, RunId, StateName};
use crate::lint::check::Severity;
use crate::model::agent::Agent;
use crate::model::run_state::{LaunchParams, NewRun, RunState};
use crate::process::watchdog::Watchdog;
use crate::store::runs::{RunStore, StoreError};
use crate::transition::task_folder::TaskFolders;
use crate::workflow::ask_scan::find_ask;
use crate::workflow::manifest::{InputMode, Manifest};
use crate::workflow::remote::{self, REGISTRY_DIR};
use crate::workflow::resolution::entry_point;
use crate::workflow::target::{self, WorkflowTargetError, clean_lexically, is_url};

/// `baton run` lints first: a workflow with lint errors would fail (or go wrong)
/// after spending money, so it is refused before any step, with the errors. A
/// workflow lint cannot read is left to the run, which says why.
fn refuse_lint_errors(target: &target::WorkflowTarget, workflow: &str) -> Result<(), CliError> {
    let scope = &target.scope_dir;
    let start = Some(target.initial_state.as_str());
    let Ok(found) = crate::lint::lint_from(scope, &crate::lint::shown(scope), start) else { return Ok(()) };
    let errors: Vec<String> = found
        .iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .map(|diagnostic| format!("  {}", finding(diagnostic)))
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    Err(CliError::LintErrors { workflow: workflow.to_string(), count: errors.len(), findings: errors.join("\n") })
}

pub(crate) async fn run(
    store: RunStore,
    config: &Config,
    arguments: RunArguments,
    cwd: PathBuf,
    watchdog: Watchdog,
) -> Result<i32, CliError> {
    let scope_url = is_url(&arguments.workflow).then(|| arguments.workflow.clone());
    let target = match &scope_url {
        Some(url) => {
            let copy = remote::fetch(url, &store.baton_dir().join(REGISTRY_DIR))?;
            let initial_state = entry_point(&copy).map_err(WorkflowTargetError::from)?;
            target::WorkflowTarget { scope_dir: copy, initial_state }
        }
        None => target::interpret(&arguments.workflow, &cwd)?,
    };
    // The manifest's own error first: it is the workflow's one problem that needs no
    // lint to word it (lint reports it too, as `invalid-manifest`).
    let manifest = Manifest::of(&target.scope_dir)?;
    if !arguments.no_lint {
        refuse_lint_errors(&target, &arguments.workflow)?;
    }
    let workflow = arguments.workflow.clone();
    let cwd = match &manifest {
        Some(manifest) => check_manifest(manifest, &workflow, &target.scope_dir, &arguments, cwd)?,
        None => cwd,
    };
    if !arguments.execution.on_ask.unwrap_or_default().lets_agents_ask()
        && let Some(found) = find_ask(&target.scope_dir)
    {
        let reason = match found.state {
            None => "`requires_human_input: true` in its manifest".to_string(),
            Some(state) if found.workflow == target.scope_dir => format!("state `{state}` allows <ask>"),
            Some(state) => format!("state `{state}` of `{}`, which it calls, allows <ask>", found.workflow.display()),
        };
        return Err(CliError::NeedsHumanInput { workflow, reason });
    }
    let default_budget = manifest.as_ref().and_then(|manifest| manifest.default_budget);
    let budget_usd = check_budget(arguments.budget)?.or(default_budget).or(config.budget).unwrap_or(0.0);
    let timeout = timeout_of(arguments.execution.timeout, None, config)?;
    let mut launch_params = LaunchParams { timeout_seconds: arguments.execution.timeout, ..LaunchParams::default() };
    apply_launch_options(&arguments.execution, &mut launch_params, config)?;
    engine_for_new_run(&arguments.execution, &mut launch_params, config)?;
    super::breakpoints::apply_breakpoints(&arguments.execution, &mut launch_params, &target.scope_dir)?;
    // Before the run exists: a server that cannot run it leaves nothing behind.
    check_engine(&launch_params).await?;
    launch_params.environment = manifest.map(|manifest| manifest.environment_now()).unwrap_or_default();
    let limits = limits(&arguments.execution, &launch_params, config)?;
    let run_id = match arguments.run_id {
        Some(id) => {
            let id = RunId::parse(&id).map_err(StoreError::from)?;
            if store.exists(&id) {
                return Err(StoreError::AlreadyExists { run_id: id.to_string() }.into());
            }
            id
        }
        None => RunId::from(store.new_run_id()),
    };
    let task_folder = TaskFolders::new(store.baton_dir(), &run_id).folder_for(&AgentId::main(), 0);
    let mut main =
        Agent::main(StateName::from(target.initial_state.as_str()), target.scope_dir.clone(), cwd.clone(), task_folder);
    main.pending_result = arguments.input;
    main.scope_url = scope_url.clone();
    main.continue_and_fork = arguments.continue_session;
    let state = RunState::new(NewRun {
        run_id,
        scope_dir: target.scope_dir,
        scope_url,
        initial_state: target.initial_state.into(),
        launch_cwd: cwd,
        budget_usd,
        main,
        launch_params,
    });
    let created = store.create(&state)?;
    let run = RunToExecute::created(state, created, Vec::new());
    execute(store, run, &arguments.execution, config, timeout, limits, watchdog).await
}

/// What a workflow's manifest asks of its launch (R13.1, `docs/decisions.md`,
/// "Manifests"); returns the directory its agents start in.
fn check_manifest(
    manifest: &Manifest,
    workflow: &str,
    scope: &Path,
    arguments: &RunArguments,
    cwd: PathBuf,
) -> Result<PathBuf, CliError> {
    let workflow = workflow.to_string();
    match (manifest.input_mode, &arguments.input) {
        (InputMode::Required, None) => {
            return Err(CliError::InputRequired { workflow, label: manifest.input_label.clone() });
        }
        (InputMode::None, Some(_)) => return Err(CliError::InputNotTaken { workflow }),
        _ => {}
    }
    let Some(directory) = &manifest.working_directory else { return Ok(cwd) };
    // Relative to the workflow: its directory, or the directory holding its file.
    let base = if scope.is_dir() { scope } else { scope.parent().unwrap_or(scope) };
    let path = clean_lexically(&base.join(directory));
    if !path.is_dir() {
        return Err(CliError::WorkingDirectory { path });
    }
    Ok(path)
}
