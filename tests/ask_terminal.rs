//! `--on-ask prompt`: a question answered at a real terminal (a pseudo-terminal from
//! util-linux `script(1)`) while the other agents keep running (issue 10, item 3).

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::conformance::common::{emit, say, with_wait_for};
use crate::support::Test;

/// `baton ARGS` in a pseudo-terminal; what the terminal shows is collected.
struct Terminal {
    child: Child,
    screen: Arc<Mutex<String>>,
}

impl Terminal {
    fn start(test: &Test, args: &str) -> Terminal {
        let command = format!("'{}' {args}", env!("CARGO_BIN_EXE_baton"));
        let mut child = Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .current_dir(test.root())
            .env("NO_COLOR", "1")
            .env("BATON_SYNC_IN_MEMORY", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("script(1) from util-linux");
        let screen = Arc::new(Mutex::new(String::new()));
        let mut stdout = child.stdout.take().expect("stdout");
        let sink = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = stdout.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                sink.lock().expect("screen").push_str(&String::from_utf8_lossy(&buffer[..read]));
            }
        });
        Terminal { child, screen }
    }

    fn screen(&self) -> String {
        self.screen.lock().expect("screen").clone()
    }

    /// Wait (up to 15 s) until the terminal shows `text`.
    fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while !self.screen().contains(text) {
            assert!(Instant::now() < deadline, "the terminal never showed {text:?}:\n{}", self.screen());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn type_line(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        stdin.write_all(format!("{line}\n").as_bytes()).expect("type");
        stdin.flush().expect("flush");
    }

    fn finish(mut self) -> (i32, String) {
        let status = self.child.wait().expect("wait");
        std::thread::sleep(Duration::from_millis(50));
        (status.code().unwrap_or(-1), self.screen())
    }
}

#[test]
fn a_question_is_answered_at_the_terminal_while_another_agent_keeps_running() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<fork next="ASK">W</fork>"#))
        .file("W.sh", &with_wait_for("wait_for go.flag\ntouch worker.done\necho '<result>worker</result>'\n"))
        .file("ASK.sh", &emit(r#"<ask next="GOT">Which colour?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"));
    let mut terminal = Terminal::start(&test, "run wf --run-id t --on-ask prompt");
    terminal.wait_for("asks: Which colour?");
    // The worker runs only now, while the question waits.
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !test.root().join("worker.done").exists() {
        assert!(Instant::now() < deadline, "the worker did not run while the question waited");
        std::thread::sleep(Duration::from_millis(20));
    }
    terminal.type_line("teal");
    let (status, screen) = terminal.finish();
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("answer=teal"), "{screen}");
}

#[test]
fn an_unanswered_question_counts_down_and_goes_to_timeout_next() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT" timeout="2s" timeout_next="LATE">Quick?</ask>"#))
        .file("GOT.sh", &emit("<result>answered</result>"))
        .file("LATE.sh", &say("<result>too late [$BATON_INPUT]</result>"));
    let terminal = Terminal::start(&test, "run wf --run-id t --on-ask prompt");
    terminal.wait_for("asks: Quick?");
    terminal.wait_for("too late []");
    let (status, screen) = terminal.finish();
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("still waiting for an answer ("), "a visible countdown:\n{screen}");
}

/// With its input closed, a terminal cannot answer: the run stops to ask as under
/// `--on-ask pause` (exit 2, the question as JSON), to be answered with `baton answer`.
#[test]
fn closing_the_terminals_input_falls_back_to_pause() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT">Anyone?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"));
    let terminal = Terminal::start(&test, "run wf --run-id t --on-ask prompt");
    terminal.wait_for("asks: Anyone?");
    let (status, screen) = terminal.finish();
    assert_eq!(status, 2, "{screen}");
    assert!(screen.contains(r#""prompt":"Anyone?""#), "{screen}");
}

/// A run that stopped to ask (`--on-ask pause`) can be resumed with the question
/// asked at the terminal instead of answered on the command line.
#[test]
fn a_run_stopped_at_an_ask_is_answered_at_the_terminal_on_resume() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT">Colour?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"));
    let args: Vec<String> = ["run", "wf", "--run-id", "t", "--on-ask", "pause", "-q"].map(String::from).to_vec();
    let paused = test.command(&args).output().expect("baton");
    assert_eq!(paused.status.code(), Some(2), "{}", String::from_utf8_lossy(&paused.stderr));
    let mut terminal = Terminal::start(&test, "resume t --on-ask prompt");
    terminal.wait_for("asks: Colour?");
    terminal.type_line("teal");
    let (status, screen) = terminal.finish();
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("answer=teal"), "{screen}");
}
