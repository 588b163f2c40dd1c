//! `rollgraph install claude [--project]` / `rollgraph uninstall claude`:
//! hooks in Claude Code's `settings.json` for people who don't use plugins.
//!
//! Install adds one command hook per event we use (SessionStart with the
//! startup|resume|clear|compact matcher, UserPromptSubmit, PreCompact,
//! PostCompact, SessionEnd, Stop), keeps every other key and hook, is
//! idempotent (a second run changes nothing; an entry pointing at an older
//! binary is updated in place) and copies the original file to
//! `settings.json.rollgraph-bak-<timestamp>` before it changes it. Uninstall
//! removes only our entries. With `--project` the MCP server is registered
//! in the project's `.mcp.json`; for the user scope the `claude mcp add`
//! command is printed rather than editing `~/.claude.json`, which Claude
//! Code rewrites while it runs.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

/// Install the hooks.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The host.
    #[arg(value_enum)]
    pub host: InstallHost,
    /// This project's `.claude/settings.json` (and `.mcp.json`) instead of the user's settings.
    #[arg(long)]
    pub project: bool,
    /// The rollgraph binary the hooks run (default: this binary).
    #[arg(long)]
    pub binary: Option<PathBuf>,
}

/// Hosts `install` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InstallHost {
    /// Claude Code.
    Claude,
}

/// The events we hook, with their matcher and timeout (seconds).
const EVENTS: &[(&str, Option<&str>, Option<u64>)] = &[
    (
        "SessionStart",
        Some("startup|resume|clear|compact"),
        Some(5),
    ),
    ("UserPromptSubmit", None, Some(5)),
    ("PreCompact", None, None),
    ("PostCompact", None, None),
    ("SessionEnd", None, None),
    ("Stop", None, None),
];

fn settings_path(project: bool) -> Result<PathBuf> {
    if project {
        return Ok(std::env::current_dir()?
            .join(".claude")
            .join("settings.json"));
    }
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d).join("settings.json"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("HOME is not set")?;
    Ok(PathBuf::from(home).join(".claude").join("settings.json"))
}

fn shell_quote(p: &Path) -> String {
    let s = p.display().to_string();
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The hook command for a binary.
pub fn hook_command(binary: &Path) -> String {
    format!("{} hook claude", shell_quote(binary))
}

/// Whether a hook command is one of ours (any rollgraph binary, any path).
pub fn is_ours(command: &str) -> bool {
    let Some(rest) = command.trim().strip_suffix("hook claude") else {
        return false;
    };
    let program = rest.trim().trim_matches(|c| c == '\'' || c == '"');
    Path::new(program)
        .file_name()
        .and_then(|f| f.to_str())
        .is_some_and(|f| f.starts_with("rollgraph"))
}

fn group_is_ours(group: &Value) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hs| {
            hs.iter().any(|h| {
                h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(is_ours)
            })
        })
}

/// Adds our hooks to a settings document; returns whether it changed.
pub fn add_hooks(settings: &mut Value, command: &str) -> Result<bool> {
    let Some(root) = settings.as_object_mut() else {
        bail!("settings.json is not a JSON object");
    };
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        bail!("settings.json: \"hooks\" is not an object");
    };
    let mut changed = false;
    for (event, matcher, timeout) in EVENTS {
        let groups = hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(groups) = groups.as_array_mut() else {
            bail!("settings.json: hooks.{event} is not an array");
        };
        let mut hook = json!({"type": "command", "command": command});
        if let Some(t) = timeout {
            hook["timeout"] = json!(t);
        }
        let mut group = json!({});
        if let Some(m) = matcher {
            group["matcher"] = json!(m);
        }
        group["hooks"] = json!([hook]);
        match groups.iter_mut().find(|g| group_is_ours(g)) {
            Some(existing) if *existing == group => {}
            Some(existing) => {
                *existing = group;
                changed = true;
            }
            None => {
                groups.push(group);
                changed = true;
            }
        }
    }
    Ok(changed)
}

/// Removes our hooks (and nothing else); returns whether it changed.
pub fn remove_hooks(settings: &mut Value) -> bool {
    let Some(root) = settings.as_object_mut() else {
        return false;
    };
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(groups) = hooks.get_mut(&event).and_then(Value::as_array_mut) else {
            continue;
        };
        for g in groups.iter_mut() {
            if let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = hs.len();
                hs.retain(|h| {
                    !h.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(is_ours)
                });
                changed |= hs.len() != before;
            }
        }
        let before = groups.len();
        groups.retain(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|hs| !hs.is_empty())
        });
        changed |= groups.len() != before;
        if groups.is_empty() && changed {
            hooks.remove(&event);
        }
    }
    if hooks.is_empty() && changed {
        root.remove("hooks");
    }
    changed
}

fn read_settings(path: &Path) -> Result<(Value, bool)> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok((json!({}), true)),
        Ok(text) => {
            let v: Value = serde_json::from_str(&text).with_context(|| {
                format!("{} is not valid JSON; not touching it", path.display())
            })?;
            Ok((v, true))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((json!({}), false)),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Copies `path` aside before its first change; returns the backup's path.
fn backup(path: &Path) -> Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".rollgraph-bak-{stamp}"));
    let bak = PathBuf::from(name);
    std::fs::copy(path, &bak)
        .with_context(|| format!("backing up {} to {}", path.display(), bak.display()))?;
    Ok(bak)
}

fn write_settings(path: &Path, v: &Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(v)?;
    text.push('\n');
    rollgraph_engine::store::write_atomic(path, text.as_bytes())?;
    Ok(())
}

/// Edits one JSON file with `edit`, backing it up first when it changes.
fn edit_file(
    path: &Path,
    edit: impl FnOnce(&mut Value) -> Result<bool>,
) -> Result<Option<Option<PathBuf>>> {
    let (mut v, existed) = read_settings(path)?;
    if !edit(&mut v)? {
        return Ok(None);
    }
    let bak = if existed { Some(backup(path)?) } else { None };
    write_settings(path, &v)?;
    Ok(Some(bak))
}

fn binary(args: &InstallArgs) -> Result<PathBuf> {
    match &args.binary {
        Some(b) => Ok(b.clone()),
        None => std::env::current_exe().context("locating this binary"),
    }
}

fn report(what: &str, path: &Path, outcome: Option<Option<PathBuf>>) -> String {
    match outcome {
        None => format!("{what}: {} already up to date\n", path.display()),
        Some(None) => format!("{what}: wrote {}\n", path.display()),
        Some(Some(bak)) => format!(
            "{what}: updated {} (backup: {})\n",
            path.display(),
            bak.display()
        ),
    }
}

/// `rollgraph install claude`.
pub fn run_install(args: InstallArgs) -> Result<()> {
    let bin = binary(&args)?;
    let command = hook_command(&bin);
    let path = settings_path(args.project)?;
    let mut out = report(
        "hooks",
        &path,
        edit_file(&path, |v| add_hooks(v, &command))?,
    );
    if args.project {
        let mcp = std::env::current_dir()?.join(".mcp.json");
        let server = json!({"command": bin.display().to_string(), "args": ["mcp"]});
        let outcome = edit_file(&mcp, |v| {
            let Some(root) = v.as_object_mut() else {
                bail!(".mcp.json is not a JSON object")
            };
            let servers = root.entry("mcpServers").or_insert_with(|| json!({}));
            let Some(servers) = servers.as_object_mut() else {
                bail!(".mcp.json: mcpServers is not an object")
            };
            if servers.get("rollgraph") == Some(&server) {
                return Ok(false);
            }
            servers.insert("rollgraph".into(), server.clone());
            Ok(true)
        })?;
        out.push_str(&report("MCP server", &mcp, outcome));
    } else {
        out.push_str(&format!(
            "MCP server (memory_expand, memory_query): register it once with\n  claude mcp add --scope user rollgraph -- {} mcp\n",
            shell_quote(&bin)
        ));
    }
    out.push_str("Turn it off for one session with ROLLGRAPH_DISABLE=1, for one project with a .rollgraph-off file in its root.");
    crate::common::out(&out)
}

/// `rollgraph uninstall claude`.
pub fn run_uninstall(args: InstallArgs) -> Result<()> {
    let path = settings_path(args.project)?;
    let outcome = if path.exists() {
        edit_file(&path, |v| Ok(remove_hooks(v)))?
    } else {
        None
    };
    let mut out = match outcome {
        None => format!("hooks: nothing of ours in {}\n", path.display()),
        Some(Some(bak)) => format!(
            "hooks: removed from {} (backup: {})\n",
            path.display(),
            bak.display()
        ),
        Some(None) => format!("hooks: removed from {}\n", path.display()),
    };
    if args.project {
        let mcp = std::env::current_dir()?.join(".mcp.json");
        if mcp.exists() {
            let outcome = edit_file(&mcp, |v| {
                let removed = v
                    .get_mut("mcpServers")
                    .and_then(Value::as_object_mut)
                    .is_some_and(|s| s.remove("rollgraph").is_some());
                Ok(removed)
            })?;
            if outcome.is_some() {
                out.push_str(&format!("MCP server: removed from {}\n", mcp.display()));
            }
        }
    } else {
        out.push_str("MCP server: if you registered it, remove it with\n  claude mcp remove --scope user rollgraph\n");
    }
    crate::common::out(out.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_our_commands_only() {
        assert!(is_ours("/home/u/.cargo/bin/rollgraph hook claude"));
        assert!(is_ours("'/a b/rollgraph' hook claude"));
        assert!(is_ours("rollgraph hook claude"));
        assert!(!is_ours("/usr/bin/other hook claude"));
        assert!(!is_ours("rollgraph hook codex"));
        assert!(!is_ours("echo hi"));
    }

    #[test]
    fn add_is_idempotent_and_remove_restores() {
        let original = json!({"model": "opus", "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}});
        let mut v = original.clone();
        assert!(add_hooks(&mut v, "/x/rollgraph hook claude").unwrap_or(false));
        assert!(!add_hooks(&mut v, "/x/rollgraph hook claude").unwrap_or(true));
        assert_eq!(
            v["hooks"]["UserPromptSubmit"].as_array().map(Vec::len),
            Some(2)
        );
        assert!(
            add_hooks(&mut v, "/y/rollgraph hook claude").unwrap_or(false),
            "a moved binary updates in place"
        );
        assert_eq!(
            v["hooks"]["UserPromptSubmit"].as_array().map(Vec::len),
            Some(2)
        );
        assert!(remove_hooks(&mut v));
        assert_eq!(v, original);
    }
}
