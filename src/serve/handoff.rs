//! `baton answer` (and `resume --input`) for a run a live `baton serve` drives: the
//! daemon's child holds the run, so the CLI cannot resume it; it hands the answer to
//! the daemon over its API instead, found through `.baton/serve/address` (written by
//! a running daemon) and authorised with the token beside it. A daemon that is gone
//! (a stale address) is not an answer: the caller goes on as if there were none.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::supervisor::served_record;
use crate::serve::token::TOKEN_FILE;
use crate::store::runs::RunStore;

/// Where a running daemon says it listens.
pub(crate) const ADDRESS_FILE: &str = "address";

/// Why the daemon did not take the answer.
#[derive(Debug, thiserror::Error)]
#[error("baton serve at {url} drives run `{run_id}` and refused the answer: {message}")]
pub(crate) struct HandoffError {
    url: String,
    run_id: String,
    message: String,
}

/// Give `text` (for ask `ask`, else the first waiting) to the daemon that drives
/// `run_id`; the daemon's URL when it took it, `None` when no live daemon drives it.
pub(crate) fn answer_through_daemon(
    store: &RunStore,
    run_id: &str,
    ask: Option<&str>,
    text: &str,
) -> Result<Option<String>, HandoffError> {
    let serve_dir = store.baton_dir().join("serve");
    if !served_record(&serve_dir, run_id).is_file() {
        return Ok(None);
    }
    let (Some(url), Some(token)) =
        (read_trimmed(&serve_dir.join(ADDRESS_FILE)), read_trimmed(&serve_dir.join(TOKEN_FILE)))
    else {
        return Ok(None);
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into();
    let refused = |message: String| HandoffError { url: url.clone(), run_id: run_id.to_string(), message };
    let call = |method: &str, path: &str, body: Option<Value>| -> Option<(u16, Value)> {
        let target = format!("{url}/api/v1{path}");
        let bearer = format!("Bearer {token}");
        let response = match body {
            Some(body) => agent
                .post(&target)
                .header("Authorization", &bearer)
                .content_type("application/json")
                .send(body.to_string()),
            None if method == "GET" => agent.get(&target).header("Authorization", &bearer).call(),
            None => return None,
        };
        let mut response = response.ok()?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        Some((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    };
    let ask_id = match ask {
        Some(ask) => ask.to_string(),
        None => {
            // A daemon that does not answer is gone: no handoff.
            let Some((200, asks)) = call("GET", &format!("/runs/{run_id}/asks"), None) else { return Ok(None) };
            match asks["asks"][0]["ask_id"].as_str() {
                Some(ask_id) => ask_id.to_string(),
                None => return Err(refused("no agent of the run is waiting for input".to_string())),
            }
        }
    };
    let Some((status, reply)) = call("POST", &format!("/runs/{run_id}/asks/{ask_id}"), Some(json!({"text": text})))
    else {
        return Ok(None);
    };
    if status == 202 {
        return Ok(Some(url));
    }
    Err(refused(reply["error"].as_str().map_or_else(|| format!("HTTP {status}"), str::to_string)))
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().trim_end_matches('/').to_string())
        .filter(|text| !text.is_empty())
}
