//! The bounded, rotated log file under the state home (`rollgraph.log`).
//!
//! The hook and the daemon have no terminal to complain to: every error they
//! meet becomes one line here. The file is rotated when it grows past
//! `store.log_max_bytes` (`rollgraph.log` → `rollgraph.log.1` → …), keeping
//! `store.log_keep` old files. Writing the log must itself never fail
//! loudly: if the state home is unwritable the line is dropped.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, SecondsFormat, Utc};

/// Rotation limits.
#[derive(Clone, Copy, Debug)]
pub struct LogLimits {
    /// Size after which the file is rotated.
    pub max_bytes: u64,
    /// Rotated files kept.
    pub keep: u32,
}

impl Default for LogLimits {
    fn default() -> Self {
        let d = rollgraph_engine::config::StoreConfig::default();
        LogLimits {
            max_bytes: d.log_max_bytes,
            keep: d.log_keep,
        }
    }
}

impl LogLimits {
    /// The limits from a configuration.
    pub fn from_config(c: &rollgraph_engine::Config) -> LogLimits {
        LogLimits {
            max_bytes: c.store.log_max_bytes.max(1024),
            keep: c.store.log_keep,
        }
    }
}

/// Appends one line (`<time> <who>: <message>`) to `path`, rotating first
/// when the file is over the limit. Errors are swallowed on purpose.
pub fn append(path: &Path, limits: LogLimits, who: &str, now: DateTime<Utc>, message: &str) {
    let _ = try_append(path, limits, who, now, message);
}

fn try_append(
    path: &Path,
    limits: LogLimits,
    who: &str,
    now: DateTime<Utc>,
    message: &str,
) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        rollgraph_engine::store::create_private_dir(dir).map_err(std::io::Error::other)?;
    }
    if fs::metadata(path).map(|m| m.len()).unwrap_or(0) >= limits.max_bytes {
        rotate(path, limits.keep);
    }
    // Never a secret in the log, whatever the message quotes (a parse error
    // can quote the input it choked on).
    let message = rollgraph_engine::redact::redact_owned(message);
    // One line, no newlines inside: the log stays greppable.
    let flat: String = message
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .take(2_000)
        .collect();
    let line = format!(
        "{} {who}[{}]: {flat}\n",
        now.to_rfc3339_opts(SecondsFormat::Millis, true),
        std::process::id()
    );
    let mut f = rollgraph_engine::store::open_private_append(path)?;
    f.write_all(line.as_bytes())
}

fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(format!(".{n}"));
    PathBuf::from(s)
}

fn rotate(path: &Path, keep: u32) {
    if keep == 0 {
        let _ = fs::remove_file(path);
        return;
    }
    let _ = fs::remove_file(rotated(path, keep));
    for n in (1..keep).rev() {
        let _ = fs::rename(rotated(path, n), rotated(path, n + 1));
    }
    let _ = fs::rename(path, rotated(path, 1));
}

/// A `tracing` writer that appends formatted events to the rotated log.
#[derive(Clone)]
pub struct LogWriter {
    path: PathBuf,
    limits: LogLimits,
    buf: std::sync::Arc<Mutex<Vec<u8>>>,
}

impl LogWriter {
    /// A writer to `path`.
    pub fn new(path: PathBuf, limits: LogLimits) -> LogWriter {
        LogWriter {
            path,
            limits,
            buf: std::sync::Arc::new(Mutex::new(Vec::new())),
        }
    }
}

impl Write for LogWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut b) = self.buf.lock() {
            b.extend_from_slice(data);
            while let Some(pos) = b.iter().position(|&c| c == b'\n') {
                let line: Vec<u8> = b.drain(..=pos).collect();
                let text = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
                append(
                    &self.path,
                    self.limits,
                    "daemon",
                    rollgraph_engine::clock::now(),
                    &text,
                );
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_and_keeps_a_bounded_number_of_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("rollgraph.log");
        let limits = LogLimits {
            max_bytes: 200,
            keep: 2,
        };
        let now = Utc::now();
        for i in 0..40 {
            append(
                &path,
                limits,
                "test",
                now,
                &format!("line {i} with\nsome padding text"),
            );
        }
        assert!(path.exists());
        assert!(rotated(&path, 1).exists());
        assert!(rotated(&path, 2).exists());
        assert!(!rotated(&path, 3).exists());
        let text = fs::read_to_string(&path).unwrap_or_default();
        assert!(text.contains("line 39 with some padding"), "{text}");
        assert!(fs::metadata(&path).map(|m| m.len()).unwrap_or(0) < 400);
    }
}
