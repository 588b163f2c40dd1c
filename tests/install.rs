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
    assert!(
        prompt[1].ends_with("rollgraph-hook claude")
            || prompt[1].ends_with("rollgraph hook claude"),
        "{prompt:?}"
    );
    // Every event has a timeout.
    for (event, groups) in v["hooks"].as_object().into_iter().flatten() {
        for g in groups.as_array().into_iter().flatten() {
            for h in g["hooks"].as_array().into_iter().flatten() {
                if h["command"]
                    .as_str()
                    .is_some_and(|c| c.contains("rollgraph"))
                {
                    assert!(h["timeout"].as_u64().is_some(), "{event}: no timeout");
                }
            }
        }
    }
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
    // What a team commits names the binaries, not this machine's paths.
    assert_eq!(
        commands(&read(&project), "UserPromptSubmit"),
        ["rollgraph-hook claude"]
    );
    assert_eq!(mcp["mcpServers"]["rollgraph"]["command"], "rollgraph");
    let tmp = env.dir.path().display().to_string();
    for f in [&project, &env.project.join(".mcp.json")] {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        assert!(
            !text.contains(&tmp),
            "{} names a local path:\n{text}",
            f.display()
        );
    }

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

/// Writes `text` to `path`, creating its directory.
fn put(path: &std::path::Path, text: &str) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn codex_install_round_trip_keeps_the_users_hooks_and_config() {
    let env = TestEnv::new();
    let codex = env.home.join(".codex");
    let hooks = codex.join("hooks.json");
    let config = codex.join("config.toml");
    let original_hooks = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-me", "timeout": 3}]}]}});
    let original_config =
        "# mine\nmodel = \"gpt-5-codex\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n";
    put(
        &hooks,
        &serde_json::to_string_pretty(&original_hooks).unwrap_or_default(),
    );
    put(&config, original_config);

    let out = env.run(&["install", "codex"], b"");
    assert!(out.status.success(), "{out:?}");
    let v = read(&hooks);
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
        "PostCompact",
        "SessionEnd",
        "Stop",
    ] {
        let ours: Vec<String> = commands(&v, event)
            .into_iter()
            .filter(|c| c.contains("rollgraph"))
            .collect();
        assert_eq!(ours.len(), 1, "{event}: {v}");
        assert!(ours[0].ends_with(" codex"), "{ours:?}");
    }
    assert_eq!(commands(&v, "Stop")[0], "notify-me");
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    let parsed: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(
        parsed["mcp_servers"]["rollgraph"]["args"],
        toml::Value::Array(vec!["mcp".into()])
    );
    assert_eq!(
        parsed["mcp_servers"]["github"]["command"].as_str(),
        Some("gh-mcp")
    );
    assert!(text.starts_with("# mine\n"), "{text}");

    // Idempotent.
    let out = env.run(&["install", "codex"], b"");
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&config).unwrap_or_default(), text);

    let out = env.run(&["uninstall", "codex"], b"");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(&hooks), original_hooks);
    assert_eq!(
        std::fs::read_to_string(&config)
            .unwrap_or_default()
            .trim_end(),
        original_config.trim_end()
    );

    // A project install is portable.
    let out = env.run(&["install", "codex", "--project"], b"");
    assert!(out.status.success(), "{out:?}");
    let v = read(&env.project.join(".codex/hooks.json"));
    assert_eq!(commands(&v, "UserPromptSubmit"), ["rollgraph-hook codex"]);
    let text = std::fs::read_to_string(env.project.join(".codex/config.toml")).unwrap_or_default();
    assert!(text.contains("command = \"rollgraph\""), "{text}");
    let out = env.run(&["uninstall", "codex", "--project"], b"");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(&env.project.join(".codex/hooks.json")), json!({}));
}

#[test]
fn gemini_install_round_trip_keeps_the_users_settings() {
    let env = TestEnv::new();
    let settings = env.home.join(".gemini/settings.json");
    let original = json!({
        "theme": "GitHub",
        "mcpServers": {"other": {"command": "other-mcp"}},
        "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 1000}]}],
                  "BeforeAgent": [{"hooks": [{"type": "command", "command": "mine.sh"}]}]}
    });
    put(
        &settings,
        &serde_json::to_string_pretty(&original).unwrap_or_default(),
    );
    let out = env.run(&["install", "gemini"], b"");
    assert!(out.status.success(), "{out:?}");
    let v = read(&settings);
    for (event, ms) in [
        ("SessionStart", 5000),
        ("BeforeAgent", 5000),
        ("AfterAgent", 5000),
        ("PreCompress", 5000),
        ("SessionEnd", 2000),
    ] {
        let group = v["hooks"][event]
            .as_array()
            .into_iter()
            .flatten()
            .find(|g| {
                g["hooks"][0]["command"]
                    .as_str()
                    .is_some_and(|c| c.ends_with(" gemini"))
            })
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            group["hooks"][0]["timeout"], ms,
            "{event}: timeouts are milliseconds"
        );
    }
    assert_eq!(commands(&v, "BeforeAgent")[0], "mine.sh");
    assert_eq!(v["mcpServers"]["rollgraph"]["args"], json!(["mcp"]));
    assert_eq!(v["mcpServers"]["other"], original["mcpServers"]["other"]);
    assert_eq!(v["theme"], "GitHub");
    let out = env.run(&["install", "gemini"], b"");
    assert!(String::from_utf8_lossy(&out.stdout).contains("already up to date"));
    let out = env.run(&["uninstall", "gemini"], b"");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(&settings), original);

    let out = env.run(&["install", "gemini", "--project"], b"");
    assert!(out.status.success(), "{out:?}");
    let v = read(&env.project.join(".gemini/settings.json"));
    assert_eq!(commands(&v, "BeforeAgent"), ["rollgraph-hook gemini"]);
    assert_eq!(v["mcpServers"]["rollgraph"]["command"], "rollgraph");
}

#[test]
fn the_packaged_hooks_run_the_slim_binary_with_timeouts() {
    let root = crate::common::repo();
    for (file, unit_min) in [
        ("plugin/hooks/hooks.json", 1),
        ("gemini-extension/hooks/hooks.json", 1000),
    ] {
        let v = read(&root.join(file));
        let events = v["hooks"].as_object().cloned().unwrap_or_default();
        assert!(!events.is_empty(), "{file}");
        for (event, groups) in events {
            for g in groups.as_array().into_iter().flatten() {
                for h in g["hooks"].as_array().into_iter().flatten() {
                    let c = h["command"].as_str().unwrap_or_default();
                    assert!(c.contains("/bin/rollgraph-hook\""), "{file} {event}: {c}");
                    assert!(
                        h["timeout"].as_u64().is_some_and(|t| t >= unit_min),
                        "{file} {event}"
                    );
                }
            }
        }
    }
    let ext = read(&root.join("gemini-extension/gemini-extension.json"));
    assert_eq!(ext["name"], "rollgraph");
    assert_eq!(ext["mcpServers"]["rollgraph"]["args"], json!(["mcp"]));
    assert!(
        ext["mcpServers"]["rollgraph"]["command"]
            .as_str()
            .is_some_and(|c| c.starts_with("${extensionPath}"))
    );
}
