//! `coherence project`: build the project plan from flags (and the settings of a resumed run),
//! run it (`project::run`), print the summary and pick the exit code.

use std::path::Path;

use anyhow::anyhow;

use crate::cli::ProjectArgs;
use crate::error::{CliError, Exit, UsageContext};
use crate::project::results::ProjectResults;
use crate::project::{self, ProjectError, ProjectPlan, ProjectSettings, Task};
use crate::run_folder::{new_run_dir, RunHeader};

use super::flags::{
    client_options, endpoint_specs, parse_params, refuse_keys_in_params, with_keys, Sampled,
};
use super::stdout::print;

pub fn project(args: &ProjectArgs, argv: Vec<String>) -> Result<Exit, CliError> {
    let plan = plan(args, argv)?;
    let rt = super::runtime()?;
    let results = rt.block_on(project::run(&plan)).map_err(|e| match e {
        ProjectError::Run(e) => CliError::from(e),
        ProjectError::Sandbox(e) => CliError::usage(anyhow!(e)),
        ProjectError::Report(e) => CliError::output(e),
    })?;
    print(&summary(&plan.dir, &results))?;
    Ok(exit_for(&results))
}

/// The plan from flags, starting from the settings of `--resume DIR` when given.
fn plan(args: &ProjectArgs, argv: Vec<String>) -> Result<ProjectPlan, CliError> {
    let previous = match &args.resume {
        Some(dir) => Some(ProjectSettings::read(dir).map_err(CliError::unreadable)?),
        None => None,
    };
    let base = previous
        .as_ref()
        .map(|p| p.endpoints.clone())
        .unwrap_or_default();
    let specs = endpoint_specs(&args.endpoints, base).usage_err()?;
    if specs.is_empty() {
        return Err(CliError::usage(anyhow!(
            "name at least one endpoint with --endpoint NAME=URL"
        )));
    }
    let projects = args
        .projects
        .clone()
        .or_else(|| previous.as_ref().map(|p| p.projects.clone()))
        .unwrap_or_else(|| project::task::projects_dir(None));
    let ids = if !args.tasks.is_empty() {
        args.tasks.clone()
    } else if let Some(p) = &previous {
        p.tasks.clone()
    } else {
        project::task_ids(&projects).map_err(|e| CliError::usage(anyhow!(e)))?
    };
    let tasks: Vec<Task> = ids
        .iter()
        .map(|id| project::load_task(&projects, id))
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::usage(anyhow!(e)))?;
    let base_params = previous
        .as_ref()
        .map(|p| p.params.clone())
        .unwrap_or_default();
    let params = parse_params(&args.params, base_params, Sampled::Greedy).usage_err()?;
    let max_tokens = args
        .max_tokens
        .or(previous.as_ref().and_then(|p| p.max_tokens));
    let client = client_options(&args.client).usage_err()?;
    let endpoints = with_keys(specs).usage_err()?;
    refuse_keys_in_params(&params, &endpoints).usage_err()?;
    let names: Vec<&str> = endpoints.iter().map(|e| e.spec.name.as_str()).collect();
    let dir = args
        .resume
        .clone()
        .or_else(|| args.out.clone())
        .unwrap_or_else(|| new_run_dir(Some("project"), &names));
    let header = RunHeader::begin(
        previous.map(|p| p.header),
        crate::run::redacted_argv(argv, &endpoints),
    );
    Ok(ProjectPlan {
        dir,
        projects,
        tasks,
        endpoints,
        max_tokens,
        params,
        client,
        header,
        quiet: args.quiet,
    })
}

/// 3 when an answer is missing, else 1 when any answer is not playable, else 0.
fn exit_for(results: &ProjectResults) -> Exit {
    if !results.complete {
        Exit::Incomplete
    } else if results
        .tasks
        .iter()
        .any(|t| t.answers.values().any(|a| !a.playable))
    {
        Exit::GateFailed
    } else {
        Exit::Success
    }
}

fn summary(dir: &Path, results: &ProjectResults) -> String {
    let mut out = String::new();
    for task in &results.tasks {
        for name in &results.endpoints {
            let line = match task.answers.get(name) {
                Some(a) => {
                    let r = a.requirements;
                    let playable = if a.playable {
                        "playable"
                    } else {
                        "not playable"
                    };
                    let error = a
                        .runtime_error
                        .as_deref()
                        .map(|e| format!("; first error: {e}"))
                        .unwrap_or_default();
                    let failed = a
                        .request_error
                        .as_deref()
                        .map(|e| format!("; request failed: {e}"))
                        .unwrap_or_default();
                    format!(
                        "{}: {} met, {} partial, {} missing of {}; {playable}{error}{failed}",
                        task.id, r.met, r.partial, r.missing, r.total
                    )
                }
                None => format!("{}: no answer (run interrupted)", task.id),
            };
            out.push_str(&format!("{name} {line}\n"));
        }
    }
    let report = project::folder(dir).file(project::REPORT);
    out.push_str(&format!("report: {}\n", report.display()));
    out
}
