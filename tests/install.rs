//! `rollgraph install claude` / `uninstall claude` on a temp HOME.

use serde_json::{Value, json};

use crate::hookenv::TestEnv;

fn read(path: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_default()).unwrap_or(Value::Null)
}

fn backups(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("settings.json.rollgraph-bak-"))
        .collect();
    v.sort();
    v
}

fn commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["command"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn install_is_idempotent_keeps_other_hooks_and_uninstall_restores() {
    let env = TestEnv::new();
    let dir = env.home.join(".claude");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let settings = dir.join("settings.json");
    let original = json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(cargo test:*)"]},
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/my-prompt-hook"}]}],
                  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard"}]}]}
    });
    std::fs::write(
        &settings,
        serde_json::to_vec_pretty(&original).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));

    let out = env.run(&["install", "claude"], b"");
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("claude mcp add --scope user rollgraph"),
        "{stdout}"
    );
    let v = read(&settings);
    assert_eq!(v["model"], "opus");
    assert_eq!(v["permissions"], original["permissions"]);
    assert_eq!(v["hooks"]["PreToolUse"], original["hooks"]["PreToolUse"]);
    let prompt = commands(&v, "UserPromptSubmit");
    assert_eq!(prompt.len(), 2, "{prompt:?}");
    assert_eq!(prompt[0], "~/bin/my-prompt-hook");
    assert!(prompt[1].ends_with("rollgraph hook claude"), "{prompt:?}");
    for event in [
        "SessionStart",
        "PreCompact",
        "PostCompact",
        "SessionEnd",
        "Stop",
    ] {
        assert_eq!(commands(&v, event).len(), 1, "{event}");
    }
    assert_eq!(
        v["hooks"]["SessionStart"][0]["matcher"],
        "startup|resume|clear|compact"
    );
    assert_eq!(v["hooks"]["UserPromptSubmit"][1]["hooks"][0]["timeout"], 5);
    let baks = backups(&dir);
    assert_eq!(baks.len(), 1);
    assert_eq!(
        read(&dir.join(&baks[0])),
        original,
        "the backup is the original"
    );

    // Twice changes nothing and makes no second backup.
    let text = std::fs::read(&settings).unwrap_or_default();
    let out = env.run(&["install", "claude"], b"");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("already up to date"));
    assert_eq!(std::fs::read(&settings).unwrap_or_default(), text);
    assert_eq!(backups(&dir).len(), 1);

    let out = env.run(&["uninstall", "claude"], b"");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(&settings), original);
}

#[test]
fn install_into_a_fresh_home_and_a_project() {
    let env = TestEnv::new();
    let out = env.run(&["install", "claude"], b"");
    assert!(out.status.success(), "{out:?}");
    let user = env.home.join(".claude/settings.json");
    assert_eq!(commands(&read(&user), "UserPromptSubmit").len(), 1);
    assert!(
        backups(&env.home.join(".claude")).is_empty(),
        "nothing to back up"
    );

    let out = env.run(&["install", "claude", "--project"], b"");
    assert!(out.status.success(), "{out:?}");
    let project = env.project.join(".claude/settings.json");
    assert_eq!(commands(&read(&project), "Stop").len(), 1);
    let mcp = read(&env.project.join(".mcp.json"));
    assert_eq!(
        mcp["mcpServers"]["rollgraph"]["args"],
        json!(["mcp"]),
        "{mcp}"
    );

    let out = env.run(&["uninstall", "claude", "--project"], b"");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(&project), json!({}));
    assert_eq!(
        read(&env.project.join(".mcp.json")),
        json!({"mcpServers": {}})
    );
    // The user's install is untouched by the project's uninstall.
    assert_eq!(commands(&read(&user), "UserPromptSubmit").len(), 1);
}

#[test]
fn a_broken_settings_file_is_left_alone() {
    let env = TestEnv::new();
    let dir = env.home.join(".claude");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("settings.json"), b"{ not json").unwrap_or_else(|e| panic!("{e}"));
    let out = env.run(&["install", "claude"], b"");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not valid JSON"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read(dir.join("settings.json")).unwrap_or_default(),
        b"{ not json"
    );
}
