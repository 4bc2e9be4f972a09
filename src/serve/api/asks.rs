//! `/api/v1/…/asks`: the questions runs wait on, and their answers — as text, or
//! with files uploaded into the asking agent's task folder (`asks/<ask_id>/`, where
//! an ask's `display_files` are staged too, R3.29). A live run this daemon drives
//! gets the answer on its stdin and goes on without stopping; any other run is
//! resumed with it, as `baton answer` would.

use std::path::{Path as FilePath, PathBuf};

use axum::Json;
use axum::extract::{FromRequest, Multipart, Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::model::agent::{AgentStatus, PendingAsk};
use crate::model::run_state::RunState;
use crate::serve::api::runs::resume;
use crate::serve::api::{ApiError, Body, Shared, known_run};
use crate::serve::supervisor::{ResumeOptions, shell_quote};
use crate::store::lock::RunLock;
use crate::transition::ask_timeout::deadline;

/// Uploads an ask does not cap itself: files, bytes per file, bytes in all.
pub(crate) const MAX_FILES: usize = 10;
pub(crate) const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
pub(crate) const MAX_TOTAL_BYTES: u64 = 25 * 1024 * 1024;

fn ask_entry(run_id: &str, agent_id: &str, ask: &PendingAsk) -> Value {
    let slots: Vec<Value> = slots(ask).into_iter().map(|(name, mime)| json!({"name": name, "mime": mime})).collect();
    // What the daemon takes: the ask's caps, within its own.
    let bucket = (ask.mode() == "bucket").then(|| {
        let caps = caps(ask);
        json!({
            "max_count": caps.files,
            "max_size": caps.file_bytes,
            "max_total_size": caps.total_bytes,
            "mime": list_attribute(ask, "upload_mime"),
        })
    });
    json!({
        "run_id": run_id,
        "ask_id": ask.id,
        "agent_id": agent_id,
        "prompt": ask.prompt,
        "next_state": ask.next,
        "asked_at": ask.asked_at,
        "timeout": ask.timeout,
        "deadline": deadline(ask).map(|at| at.to_string()),
        "timeout_next": ask.timeout_next,
        "mode": ask.mode(),
        "slots": slots,
        "bucket": bucket,
        "display_files": ask.display_files(),
    })
}

fn asks_of(run: &RunState) -> Vec<Value> {
    run.agents
        .iter()
        .filter(|agent| agent.status == AgentStatus::Asking)
        .filter_map(|agent| agent.ask.as_ref().map(|ask| ask_entry(&run.run_id, &agent.id, ask)))
        .collect()
}

pub(super) async fn list_for_run(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    known_run(&app.store, &run_id)?;
    let run = app.store.load(&run_id)?;
    Ok(Json(json!({"asks": asks_of(&run)})))
}

pub(super) async fn list_all(State(app): State<Shared>) -> Json<Value> {
    let runs = tokio::task::block_in_place(|| app.store.list_in_order());
    let asks: Vec<Value> = runs.into_iter().filter_map(|(_, run)| run.ok()).flat_map(|run| asks_of(&run)).collect();
    Json(json!({"asks": asks}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TextAnswer {
    text: String,
}

/// A file name from an upload: one plain name, nothing a path could be made of.
pub(crate) fn safe_file_name(name: &str) -> Result<&str, ApiError> {
    let bad = name.is_empty()
        || name.len() > 255
        || name.starts_with('.')
        || name.chars().any(|c| c == '/' || c == '\\' || c.is_control());
    if bad {
        return Err(ApiError::bad_request(format!(
            "file name `{}` is not allowed: one name, no `/` or `\\`, no leading `.`, no control characters",
            name.escape_debug()
        )));
    }
    Ok(name)
}

struct Caps {
    files: usize,
    file_bytes: u64,
    total_bytes: u64,
}

fn caps(ask: &PendingAsk) -> Caps {
    let number = |name: &str| ask.files.get(name).and_then(|value| value.trim().parse::<u64>().ok());
    Caps {
        files: number("upload_max_count")
            .map_or(MAX_FILES, |count| usize::try_from(count).unwrap_or(MAX_FILES).min(MAX_FILES)),
        file_bytes: number("upload_max_size").unwrap_or(MAX_FILE_BYTES).min(MAX_FILE_BYTES),
        total_bytes: number("upload_max_total_size").unwrap_or(MAX_TOTAL_BYTES).min(MAX_TOTAL_BYTES),
    }
}

fn too_large(message: String) -> ApiError {
    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, message)
}

/// A comma-separated attribute of `ask`, its items trimmed and lower-cased.
fn list_attribute(ask: &PendingAsk, name: &str) -> Vec<String> {
    ask.files
        .get(name)
        .map(|value| {
            value.split(',').map(|item| item.trim().to_ascii_lowercase()).filter(|item| !item.is_empty()).collect()
        })
        .unwrap_or_default()
}

/// The ask's upload slots (`name[:mime|mime]`, R3.29): each name and its media types.
fn slots(ask: &PendingAsk) -> Vec<(String, Vec<String>)> {
    let Some(slots) = ask.files.get("upload_slots") else { return Vec::new() };
    slots
        .split(',')
        .map(str::trim)
        .filter(|slot| !slot.is_empty())
        .map(|slot| {
            let (name, types) = slot.split_once(':').unwrap_or((slot, ""));
            let types =
                types.split('|').map(|kind| kind.trim().to_ascii_lowercase()).filter(|kind| !kind.is_empty()).collect();
            (name.trim().to_string(), types)
        })
        .collect()
}

/// Whether a part of `content_type` may be uploaded where `allowed` media types are
/// taken (none listed: any). `image/*` takes every image type.
fn type_allowed(content_type: &str, allowed: &[String]) -> bool {
    if allowed.is_empty() {
        return true;
    }
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    allowed.iter().any(|kind| match kind.strip_suffix("/*") {
        Some(family) => essence.split('/').next() == Some(family),
        None => *kind == essence,
    })
}

/// Read a multipart answer: its `text` field, and its files saved under `dir`.
async fn read_multipart(
    form: Multipart,
    ask: &PendingAsk,
    dir: &FilePath,
) -> Result<(String, Vec<(PathBuf, u64)>), ApiError> {
    // Files are written beside, then moved in only when the whole answer is good:
    // a refused answer leaves nothing behind.
    let staging = dir.join(".staging");
    let read = read_into(form, ask, dir, &staging).await;
    let _ = tokio::fs::remove_dir_all(&staging).await;
    read
}

async fn read_into(
    mut form: Multipart,
    ask: &PendingAsk,
    dir: &FilePath,
    staging: &FilePath,
) -> Result<(String, Vec<(PathBuf, u64)>), ApiError> {
    let caps = caps(ask);
    let slots = slots(ask);
    let slot_names: Vec<&str> = slots.iter().map(|(name, _)| name.as_str()).collect();
    let bucket_mime = list_attribute(ask, "upload_mime");
    let mode = ask.mode();
    let mut text = String::new();
    let mut saved: Vec<(String, u64)> = Vec::new();
    let mut total = 0u64;
    let failed = |error: axum::extract::multipart::MultipartError| {
        if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large(format!("the upload is larger than this daemon takes ({MAX_TOTAL_BYTES} bytes in all)"))
        } else {
            ApiError::bad_request(format!("cannot read the form: {error}"))
        }
    };
    while let Some(mut field) = form.next_field().await.map_err(failed)? {
        let field_name = field.name().unwrap_or_default().to_string();
        if field_name == "text" && field.file_name().is_none() {
            text = field.text().await.map_err(failed)?;
            continue;
        }
        let allowed_types = match mode {
            "slots" => slots.iter().find(|(name, _)| *name == field_name).map(|(_, types)| types),
            "bucket" if field_name == "files" => Some(&bucket_mime),
            _ => None,
        };
        let Some(allowed_types) = allowed_types else {
            return Err(ApiError::bad_request(match mode {
                "slots" => format!("`{field_name}` is none of this ask's upload slots: {}", slot_names.join(", ")),
                "bucket" => format!("files go in the `files` field, not `{field_name}`"),
                _ => "this ask takes a text answer, no files".to_string(),
            }));
        };
        let name = safe_file_name(field.file_name().unwrap_or(&field_name))?.to_string();
        let content_type = field.content_type().unwrap_or("application/octet-stream").to_string();
        if !type_allowed(&content_type, allowed_types) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("`{name}` is {content_type}; this ask takes {}", allowed_types.join(", ")),
            ));
        }
        let name = if mode == "slots" { field_name.clone() } else { name };
        if saved.len() == caps.files {
            return Err(too_large(format!("at most {} files may be uploaded to this ask", caps.files)));
        }
        if saved.iter().any(|(kept, _)| *kept == name) {
            return Err(ApiError::bad_request(format!("the file `{name}` was given twice")));
        }
        tokio::fs::create_dir_all(staging).await.map_err(|error| ApiError::internal(error.to_string()))?;
        let mut file = tokio::fs::File::create(staging.join(&name))
            .await
            .map_err(|error| ApiError::internal(error.to_string()))?;
        let mut size = 0u64;
        while let Some(chunk) = field.chunk().await.map_err(failed)? {
            size += chunk.len() as u64;
            total += chunk.len() as u64;
            if size > caps.file_bytes || total > caps.total_bytes {
                drop(file);
                return Err(too_large(if size > caps.file_bytes {
                    format!("`{name}` is larger than {} bytes, the most one file may be", caps.file_bytes)
                } else {
                    format!("the files are larger than {} bytes in all, the most this ask takes", caps.total_bytes)
                }));
            }
            file.write_all(&chunk).await.map_err(|error| ApiError::internal(error.to_string()))?;
        }
        file.flush().await.map_err(|error| ApiError::internal(error.to_string()))?;
        saved.push((name, size));
    }
    let mut kept = Vec::new();
    for (name, size) in saved {
        let path = dir.join(&name);
        tokio::fs::rename(staging.join(&name), &path).await.map_err(|error| ApiError::internal(error.to_string()))?;
        kept.push((path, size));
    }
    Ok((text, kept))
}

pub(super) async fn answer(
    State(app): State<Shared>,
    Path((run_id, ask_id)): Path<(String, String)>,
    request: Request,
) -> Result<impl IntoResponse, ApiError> {
    known_run(&app.store, &run_id)?;
    let run = app.store.load(&run_id)?;
    let Some(agent) = run
        .agents
        .iter()
        .find(|agent| agent.status == AgentStatus::Asking && agent.ask.as_ref().is_some_and(|ask| ask.id == ask_id))
    else {
        return Err(ApiError::not_found(format!("run `{run_id}` has no ask `{ask_id}` waiting")));
    };
    let Some(ask) = agent.ask.clone() else { return Err(ApiError::not_found("no ask")) };
    let is_form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("multipart/form-data"));
    let (mut text, files) = if is_form {
        let form =
            Multipart::from_request(request, &()).await.map_err(|error| ApiError::bad_request(error.body_text()))?;
        let dir = agent.task_folder.join("asks").join(&ask_id);
        read_multipart(form, &ask, &dir).await?
    } else {
        let Body(answer) = Body::<TextAnswer>::from_request(request, &()).await?;
        (answer.text, Vec::new())
    };
    if !files.is_empty() {
        text.push_str("\n\nUploaded files:\n");
        for (path, size) in &files {
            text.push_str(&format!("- {} ({size} bytes)\n", path.display()));
        }
    }
    // After `--`, an answer that starts with `-` is not read as a flag.
    let separator = if text.starts_with('-') { "-- " } else { "" };
    let command = format!("baton answer {run_id} --ask {} {separator}{}", shell_quote(&ask_id), shell_quote(&text));
    if app.supervisor.drives(&run_id) {
        app.supervisor
            .send(&run_id, &json!({"answer": {"ask_id": ask_id, "text": text}}))
            .await
            .map_err(|error| ApiError::conflict(error.to_string()))?;
        return Ok((StatusCode::ACCEPTED, Json(json!({"delivered": "live", "command": command}))));
    }
    if let Some(pid) = RunLock::holder(&app.store.run_dir(&run_id)) {
        return Err(ApiError::conflict(format!(
            "run `{run_id}` is driven by another baton (pid {pid}), which takes answers at its own terminal"
        )));
    }
    let options = ResumeOptions { answer: Some((ask_id, text)), ..ResumeOptions::default() };
    resume(&app, &run, &options).await?;
    Ok((StatusCode::ACCEPTED, Json(json!({"delivered": "resumed", "command": command}))))
}

/// `GET …/asks/{ask_id}/files/{name}`: a file a waiting ask shows (`display_files`),
/// as staged in the agent's task folder. Only the names the ask lists are served,
/// and always as a download, never as a page of this origin.
pub(super) async fn display_file(
    State(app): State<Shared>,
    Path((run_id, ask_id, name)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    known_run(&app.store, &run_id)?;
    let run = app.store.load(&run_id)?;
    let waiting = run.agents.iter().find_map(|agent| {
        let ask = agent.ask.as_ref().filter(|ask| ask.id == ask_id && agent.status == AgentStatus::Asking)?;
        Some((agent, ask))
    });
    let Some((agent, ask)) = waiting else {
        return Err(ApiError::not_found(format!("run `{run_id}` has no ask `{ask_id}` waiting")));
    };
    if !ask.display_files().iter().any(|file| file.name == name) {
        return Err(ApiError::not_found(format!("ask `{ask_id}` shows no file `{name}`")));
    }
    let path = agent.task_folder.join("asks").join(&ask_id).join(safe_file_name(&name)?);
    let bytes = tokio::fs::read(&path)
        .await
        .map_err(|error| ApiError::not_found(format!("cannot read {}: {error}", path.display())))?;
    let disposition = format!("attachment; filename=\"{}\"", name.replace(['"', '\\'], "_"));
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/octet-stream"));
    if let Ok(value) = header::HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_are_matched_by_essence_and_family() {
        let allowed = vec!["application/pdf".to_string(), "image/*".to_string()];
        assert!(type_allowed("application/pdf", &allowed));
        assert!(type_allowed("Application/PDF; name=x", &allowed));
        assert!(type_allowed("image/png", &allowed));
        assert!(!type_allowed("text/plain", &allowed));
        assert!(!type_allowed("imagex/png", &allowed));
        assert!(type_allowed("text/plain", &[]), "no list takes anything");
    }

    #[test]
    fn file_names_that_could_be_paths_are_refused() {
        for bad in ["", "../x", "a/b", "a\\b", ".env", "a\u{0}b", "line\nbreak"] {
            assert!(safe_file_name(bad).is_err(), "{bad:?} was taken");
        }
        for good in ["report.pdf", "日本.txt", "a b.png"] {
            assert_eq!(safe_file_name(good).ok(), Some(good));
        }
    }
}
