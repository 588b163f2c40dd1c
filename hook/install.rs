//! `rollgraph install claude|codex|gemini [--project]` and `rollgraph
//! uninstall …`: hooks and the MCP server in a host's own settings, for
//! people who don't use plugins or extensions.
//!
//! | host | hooks | MCP server |
//! |---|---|---|
//! | Claude Code | `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR`), or `.claude/settings.json` | printed `claude mcp add` command, or the project's `.mcp.json` |
//! | Codex CLI | `~/.codex/hooks.json` (`$CODEX_HOME`), or `.codex/hooks.json` | `[mcp_servers.rollgraph]` in `config.toml` beside it |
//! | Gemini CLI | `~/.gemini/settings.json`, or `.gemini/settings.json` | `mcpServers.rollgraph` in the same file |
//!
//! Every event we use gets one command hook with a timeout (seconds for
//! Claude Code and Codex, milliseconds for Gemini CLI). Install keeps every
//! other key and hook, is idempotent (a second run changes nothing; an entry
//! pointing at another rollgraph binary is updated in place) and copies the
//! original file to `<file>.rollgraph-bak-<timestamp>` before it changes it.
//! Uninstall removes only our entries.
//!
//! The hooks run the slim `rollgraph-hook <host>`. A project install, which a
//! team commits, names it as `rollgraph-hook` and the MCP server as
//! `rollgraph` — found on `PATH`, never this machine's absolute path. A user
//! install names the binaries beside this one (or `--binary`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

/// Install the hooks.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The host.
    #[arg(value_enum)]
    pub host: InstallHost,
    /// This project's settings instead of the user's (portable: binaries are named, not pathed).
    #[arg(long)]
    pub project: bool,
    /// The rollgraph binary the hooks and the MCP server run (default: this binary).
    #[arg(long)]
    pub binary: Option<PathBuf>,
}

/// Hosts `install` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InstallHost {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
}

impl InstallHost {
    fn as_str(self) -> &'static str {
        match self {
            InstallHost::Claude => "claude",
            InstallHost::Codex => "codex",
            InstallHost::Gemini => "gemini",
        }
    }

    /// The events we hook: (event, matcher, timeout in the host's unit).
    pub fn events(self) -> &'static [(&'static str, Option<&'static str>, u64)] {
        match self {
            InstallHost::Claude => &[
                ("SessionStart", Some("startup|resume|clear|compact"), 5),
                ("UserPromptSubmit", None, 5),
                ("PreCompact", None, 5),
                ("PostCompact", None, 5),
                // SessionEnd hooks share a ~1.5 s budget; ours only spools.
                ("SessionEnd", None, 2),
                ("Stop", None, 5),
            ],
            InstallHost::Codex => &[
                ("SessionStart", None, 5),
                ("UserPromptSubmit", None, 5),
                ("PreCompact", None, 5),
                ("PostCompact", None, 5),
                // Codex allows SessionEnd at most 3 s.
                ("SessionEnd", None, 2),
                ("Stop", None, 5),
            ],
            // Milliseconds.
            InstallHost::Gemini => &[
                ("SessionStart", None, 5_000),
                ("BeforeAgent", None, 5_000),
                ("AfterAgent", None, 5_000),
                ("PreCompress", None, 5_000),
                ("SessionEnd", None, 2_000),
            ],
        }
    }
}

fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

fn home_dir() -> Result<PathBuf> {
    env_dir("HOME").context("HOME is not set")
}

/// The file holding the host's hooks.
pub fn hooks_path(host: InstallHost, project: bool) -> Result<PathBuf> {
    let cwd = || std::env::current_dir().context("reading the current directory");
    Ok(match (host, project) {
        (InstallHost::Claude, true) => cwd()?.join(".claude/settings.json"),
        (InstallHost::Claude, false) => match env_dir("CLAUDE_CONFIG_DIR") {
            Some(d) => d.join("settings.json"),
            None => home_dir()?.join(".claude/settings.json"),
        },
        (InstallHost::Codex, true) => cwd()?.join(".codex/hooks.json"),
        (InstallHost::Codex, false) => codex_home()?.join("hooks.json"),
        (InstallHost::Gemini, true) => cwd()?.join(".gemini/settings.json"),
        (InstallHost::Gemini, false) => home_dir()?.join(".gemini/settings.json"),
    })
}

fn codex_home() -> Result<PathBuf> {
    match env_dir("CODEX_HOME") {
        Some(d) => Ok(d),
        None => Ok(home_dir()?.join(".codex")),
    }
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

/// The hook command for a rollgraph binary: the slim `rollgraph-hook`
/// beside it when there is one, else `<binary> hook <host>`.
pub fn hook_command(binary: &Path, host: &str) -> String {
    let slim = binary.with_file_name("rollgraph-hook");
    if binary.file_name().and_then(|f| f.to_str()) == Some("rollgraph-hook") {
        return format!("{} {host}", shell_quote(binary));
    }
    if slim.is_file() {
        return format!("{} {host}", shell_quote(&slim));
    }
    format!("{} hook {host}", shell_quote(binary))
}

/// The portable hook command a project commits.
pub fn portable_hook_command(host: &str) -> String {
    format!("rollgraph-hook {host}")
}

/// Splits a command line into words the way a POSIX shell would for the
/// quoting we write (single quotes, double quotes, backslash escapes).
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                any = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                any = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        d => cur.push(d),
                    }
                }
            }
            '\\' => {
                any = true;
                cur.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                any = true;
                cur.push(c);
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Whether a hook command is one of ours for `host`: any rollgraph binary at
/// any path running `hook <host>`, or any `rollgraph-hook <host>`.
pub fn is_ours(command: &str, host: &str) -> bool {
    let words = words(command);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let Some((program, args)) = words.split_first() else {
        return false;
    };
    let Some(name) = Path::new(program).file_name().and_then(|f| f.to_str()) else {
        return false;
    };
    if !name.starts_with("rollgraph") {
        return false;
    }
    match args {
        ["hook", h] => *h == host,
        [h] => name.starts_with("rollgraph-hook") && *h == host,
        _ => false,
    }
}

fn group_is_ours(group: &Value, host: &str) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hs| {
            hs.iter().any(|h| {
                h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_ours(c, host))
            })
        })
}

/// Adds our hooks to a settings document; returns whether it changed.
pub fn add_hooks(settings: &mut Value, host: InstallHost, command: &str) -> Result<bool> {
    let Some(root) = settings.as_object_mut() else {
        bail!("the settings file is not a JSON object");
    };
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        bail!("\"hooks\" is not an object");
    };
    let mut changed = false;
    for (event, matcher, timeout) in host.events() {
        let groups = hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(groups) = groups.as_array_mut() else {
            bail!("hooks.{event} is not an array");
        };
        let mut hook = json!({"type": "command", "command": command, "timeout": timeout});
        if host == InstallHost::Gemini {
            hook["name"] = json!("rollgraph");
        }
        let mut group = json!({});
        if let Some(m) = matcher {
            group["matcher"] = json!(m);
        }
        group["hooks"] = json!([hook]);
        match groups.iter_mut().find(|g| group_is_ours(g, host.as_str())) {
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
pub fn remove_hooks(settings: &mut Value, host: InstallHost) -> bool {
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
        let mut here = false;
        for g in groups.iter_mut() {
            if let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = hs.len();
                hs.retain(|h| {
                    !h.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|c| is_ours(c, host.as_str()))
                });
                here |= hs.len() != before;
            }
        }
        if here {
            groups.retain(|g| {
                g.get("hooks")
                    .and_then(Value::as_array)
                    .is_none_or(|hs| !hs.is_empty())
            });
            if groups.is_empty() {
                hooks.remove(&event);
            }
        }
        changed |= here;
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

fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    rollgraph_engine::store::write_atomic(path, text.as_bytes())?;
    Ok(())
}

/// What an edit did: `None` nothing, `Some(None)` wrote a new file,
/// `Some(Some(backup))` changed a file after backing it up.
type Outcome = Option<Option<PathBuf>>;

/// Edits one JSON file with `edit`, backing it up first when it changes.
fn edit_json(path: &Path, edit: impl FnOnce(&mut Value) -> Result<bool>) -> Result<Outcome> {
    let (mut v, existed) = read_settings(path)?;
    if !edit(&mut v).with_context(|| path.display().to_string())? {
        return Ok(None);
    }
    let bak = if existed { Some(backup(path)?) } else { None };
    let mut text = serde_json::to_string_pretty(&v)?;
    text.push('\n');
    write_file(path, &text)?;
    Ok(Some(bak))
}

/// Edits one text file with `edit` (`None`: no change), backing it up first.
fn edit_text(path: &Path, edit: impl FnOnce(&str) -> Result<Option<String>>) -> Result<Outcome> {
    let (text, existed) = match std::fs::read_to_string(path) {
        Ok(t) => (t, true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), false),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let Some(new) = edit(&text).with_context(|| path.display().to_string())? else {
        return Ok(None);
    };
    let bak = if existed { Some(backup(path)?) } else { None };
    write_file(path, &new)?;
    Ok(Some(bak))
}

fn set_mcp_server(v: &mut Value, server: &Value) -> Result<bool> {
    let Some(root) = v.as_object_mut() else {
        bail!("not a JSON object")
    };
    let servers = root.entry("mcpServers").or_insert_with(|| json!({}));
    let Some(servers) = servers.as_object_mut() else {
        bail!("mcpServers is not an object")
    };
    if servers.get("rollgraph") == Some(server) {
        return Ok(false);
    }
    servers.insert("rollgraph".into(), server.clone());
    Ok(true)
}

fn remove_mcp_server(v: &mut Value) -> bool {
    v.get_mut("mcpServers")
        .and_then(Value::as_object_mut)
        .is_some_and(|s| s.remove("rollgraph").is_some())
}

/// The first line of the block `install codex` writes into `config.toml`.
const CODEX_MARK: &str = "# rollgraph MCP server (`rollgraph uninstall codex` removes this block)";

/// Variables Codex passes on to our MCP server. Codex gives an MCP server
/// only a short whitelist of the user's environment (HOME, PATH, …), so
/// without these a server whose hooks write under `$ROLLGRAPH_HOME` (or
/// `$XDG_DATA_HOME/rollgraph`) would read another, empty state directory
/// ("no sessions under …"), and miss the provisioned word list and model.
pub const CODEX_MCP_ENV_VARS: &[&str] = &[
    "ROLLGRAPH_HOME",
    "ROLLGRAPH_CONFIG",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "ROLLGRAPH_CACHE",
    "ROLLGRAPH_MODEL_DIR",
    "ROLLGRAPH_ORT_DYLIB",
    "ROLLGRAPH_WORDS",
];

/// `config.toml` with our MCP server block added or updated; `None` when it
/// is already there. A `[mcp_servers.rollgraph]` the user wrote is theirs:
/// left alone. The result must parse as TOML.
pub fn codex_add_mcp(text: &str, command: &str) -> Result<Option<String>> {
    toml::from_str::<toml::Table>(text).context("not valid TOML; not touching it")?;
    let env_vars = toml::Value::Array(
        CODEX_MCP_ENV_VARS
            .iter()
            .map(|v| toml::Value::String((*v).to_owned()))
            .collect(),
    );
    let block = format!(
        "{CODEX_MARK}\n[mcp_servers.rollgraph]\ncommand = {}\nargs = [\"mcp\"]\nenv_vars = {env_vars}\n",
        toml::Value::String(command.to_owned())
    );
    let (without, had_ours) = codex_strip_mcp(text);
    if had_ours && text.contains(&block) {
        return Ok(None);
    }
    if !had_ours && text.lines().any(|l| l.trim() == "[mcp_servers.rollgraph]") {
        return Ok(None);
    }
    let mut out = without.trim_end().to_owned();
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(&block);
    toml::from_str::<toml::Table>(&out).context("the edited file would not be valid TOML")?;
    Ok(Some(out))
}

/// `config.toml` without our block, and whether there was one.
pub fn codex_strip_mcp(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    let mut found = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t == CODEX_MARK {
            skipping = true;
            found = true;
            continue;
        }
        if skipping {
            let header = t.starts_with('[');
            if header && t != "[mcp_servers.rollgraph]" || t.is_empty() {
                skipping = false;
            } else {
                continue;
            }
        }
        out.push_str(line);
    }
    (out, found)
}

fn binary(args: &InstallArgs) -> Result<PathBuf> {
    match &args.binary {
        Some(b) => Ok(b.clone()),
        None => std::env::current_exe().context("locating this binary"),
    }
}

fn report(what: &str, path: &Path, outcome: Outcome) -> String {
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

/// `rollgraph install <host>`.
pub fn run_install(args: InstallArgs) -> Result<()> {
    let host = args.host;
    let portable = args.project && args.binary.is_none();
    let bin = binary(&args)?;
    let command = if portable {
        portable_hook_command(host.as_str())
    } else {
        hook_command(&bin, host.as_str())
    };
    let mcp_command = if portable {
        "rollgraph".to_owned()
    } else {
        bin.display().to_string()
    };
    let path = hooks_path(host, args.project)?;
    let cwd = std::env::current_dir()?;
    let mut out = String::new();
    match host {
        InstallHost::Gemini => {
            // Hooks and the MCP server live in the same settings.json.
            let server = json!({"command": mcp_command, "args": ["mcp"]});
            let outcome = edit_json(&path, |v| {
                let a = add_hooks(v, host, &command)?;
                let b = set_mcp_server(v, &server)?;
                Ok(a || b)
            })?;
            out.push_str(&report("hooks and MCP server", &path, outcome));
        }
        InstallHost::Claude | InstallHost::Codex => {
            let outcome = edit_json(&path, |v| add_hooks(v, host, &command))?;
            out.push_str(&report("hooks", &path, outcome));
        }
    }
    match (host, args.project) {
        (InstallHost::Claude, true) => {
            let mcp = cwd.join(".mcp.json");
            let server = json!({"command": mcp_command, "args": ["mcp"]});
            let outcome = edit_json(&mcp, |v| set_mcp_server(v, &server))?;
            out.push_str(&report("MCP server", &mcp, outcome));
        }
        (InstallHost::Claude, false) => out.push_str(&format!(
            "MCP server (memory_expand, memory_query): register it once with\n  claude mcp add --scope user rollgraph -- {} mcp\n",
            shell_quote(&bin)
        )),
        (InstallHost::Codex, project) => {
            let config = if project {
                cwd.join(".codex/config.toml")
            } else {
                codex_home()?.join("config.toml")
            };
            let outcome = edit_text(&config, |t| codex_add_mcp(t, &mcp_command))?;
            out.push_str(&report("MCP server", &config, outcome));
            out.push_str("Codex asks you to trust new hooks once: open /hooks in Codex.\n");
        }
        (InstallHost::Gemini, _) => {}
    }
    if portable {
        out.push_str(
            "These files name `rollgraph-hook` and `rollgraph`: every teammate needs them on PATH (`cargo install --path <rollgraph checkout>`).\n",
        );
    }
    out.push_str("Turn it off for one session with ROLLGRAPH_DISABLE=1, for one project with a .rollgraph-off file in its root.");
    crate::common::out(&out)
}

/// `rollgraph uninstall <host>`.
pub fn run_uninstall(args: InstallArgs) -> Result<()> {
    let host = args.host;
    let path = hooks_path(host, args.project)?;
    let cwd = std::env::current_dir()?;
    let outcome = if path.exists() {
        edit_json(&path, |v| {
            let a = remove_hooks(v, host);
            let b = host == InstallHost::Gemini && remove_mcp_server(v);
            Ok(a || b)
        })?
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
    match (host, args.project) {
        (InstallHost::Claude, true) => {
            let mcp = cwd.join(".mcp.json");
            if mcp.exists() && edit_json(&mcp, |v| Ok(remove_mcp_server(v)))?.is_some() {
                out.push_str(&format!("MCP server: removed from {}\n", mcp.display()));
            }
        }
        (InstallHost::Claude, false) => out.push_str(
            "MCP server: if you registered it, remove it with\n  claude mcp remove --scope user rollgraph\n",
        ),
        (InstallHost::Codex, project) => {
            let config = if project {
                cwd.join(".codex/config.toml")
            } else {
                codex_home()?.join("config.toml")
            };
            if config.exists()
                && edit_text(&config, |t| {
                    let (without, found) = codex_strip_mcp(t);
                    Ok(found.then(|| {
                        let mut s = without.trim_end().to_owned();
                        if !s.is_empty() {
                            s.push('\n');
                        }
                        s
                    }))
                })?
                .is_some()
            {
                out.push_str(&format!("MCP server: removed from {}\n", config.display()));
            }
        }
        (InstallHost::Gemini, _) => {}
    }
    crate::common::out(out.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_our_commands_only() {
        assert!(is_ours(
            "/home/u/.cargo/bin/rollgraph hook claude",
            "claude"
        ));
        assert!(is_ours("'/a b/rollgraph' hook claude", "claude"));
        assert!(is_ours("'/a b/it'\\''s/rollgraph' hook claude", "claude"));
        assert!(is_ours("rollgraph hook claude", "claude"));
        assert!(is_ours("rollgraph-hook claude", "claude"));
        assert!(is_ours(
            "\"${CLAUDE_PLUGIN_ROOT}/bin/rollgraph-hook\" claude",
            "claude"
        ));
        assert!(!is_ours("/usr/bin/other hook claude", "claude"));
        assert!(!is_ours("rollgraph hook codex", "claude"));
        assert!(is_ours("rollgraph-hook codex", "codex"));
        assert!(!is_ours("rollgraph claude", "claude"));
        assert!(!is_ours("echo hi", "claude"));
    }

    #[test]
    fn add_is_idempotent_and_remove_restores() {
        for host in [InstallHost::Claude, InstallHost::Codex, InstallHost::Gemini] {
            let h = host.as_str();
            let first = host.events()[1].0;
            let original = json!({"model": "opus", "hooks": {first: [{"hooks": [{"type": "command", "command": "echo mine"}]}]}});
            let mut v = original.clone();
            let cmd = format!("/x/rollgraph-hook {h}");
            assert!(add_hooks(&mut v, host, &cmd).unwrap_or(false));
            assert!(!add_hooks(&mut v, host, &cmd).unwrap_or(true));
            assert_eq!(v["hooks"][first].as_array().map(Vec::len), Some(2));
            assert!(
                add_hooks(&mut v, host, &format!("/y/rollgraph hook {h}")).unwrap_or(false),
                "a moved binary updates in place"
            );
            assert_eq!(v["hooks"][first].as_array().map(Vec::len), Some(2));
            for (event, _, _) in host.events() {
                let groups = v["hooks"][event].as_array().cloned().unwrap_or_default();
                let ours = groups.iter().find(|g| group_is_ours(g, h));
                assert!(
                    ours.is_some_and(|g| g["hooks"][0]["timeout"].as_u64().is_some()),
                    "{h} {event}: no timeout"
                );
            }
            assert!(remove_hooks(&mut v, host));
            assert_eq!(v, original, "{h}");
        }
    }

    #[test]
    fn codex_toml_block_round_trips_and_keeps_the_users_text() {
        let user = "# my codex config\nmodel = \"gpt-5\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let added = codex_add_mcp(user, "rollgraph")
            .ok()
            .flatten()
            .unwrap_or_default();
        assert!(added.contains("[mcp_servers.rollgraph]"), "{added}");
        assert!(added.starts_with(user.trim_end()), "{added}");
        // The server gets the state directory the hooks use.
        let parsed: toml::Table = toml::from_str(&added).unwrap_or_default();
        let vars = parsed["mcp_servers"]["rollgraph"]["env_vars"].clone();
        assert!(
            vars.as_array()
                .is_some_and(|a| a.iter().any(|v| v.as_str() == Some("ROLLGRAPH_HOME"))),
            "{added}"
        );
        // An older block without it is updated in place.
        let old = format!(
            "{user}\n{CODEX_MARK}\n[mcp_servers.rollgraph]\ncommand = \"rollgraph\"\nargs = [\"mcp\"]\n"
        );
        assert_eq!(
            codex_add_mcp(&old, "rollgraph").ok().flatten().as_deref(),
            Some(added.as_str())
        );
        assert_eq!(codex_add_mcp(&added, "rollgraph").ok(), Some(None));
        let (stripped, found) = codex_strip_mcp(&added);
        assert!(found);
        assert_eq!(stripped.trim_end(), user.trim_end());
        // A server the user wrote is theirs.
        let theirs = "[mcp_servers.rollgraph]\ncommand = \"/opt/rg\"\n";
        assert_eq!(codex_add_mcp(theirs, "rollgraph").ok(), Some(None));
        assert!(codex_add_mcp("not = [toml", "rollgraph").is_err());
    }
}
