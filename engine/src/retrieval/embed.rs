//! Local sentence embeddings, offline and optional.
//!
//! This module turns short texts (node labels, decisions, prompts) into
//! vectors with a small local model, so that "switch mail to X" and
//! "transactional email provider" can be found to be about the same thing.
//! It is never on the hook's critical path and never required: when the
//! model or the ONNX Runtime library is absent, [`load_optional`] returns a
//! one-line notice and the engine keeps matching lexically.
//!
//! What lives here:
//!
//! - [`EmbedPaths`] says where the ONNX Runtime library and the model files
//!   are, found from the environment or the rollgraph cache that
//!   `scripts/provision.sh` fills (see [`cache_dir`]).
//! - [`Embedder`] runs all-MiniLM-L6-v2 (int8 ONNX, mean pooling, 384
//!   dimensions) with `fastembed` on a dynamically loaded ONNX Runtime. Load
//!   it once per long-lived process and reuse it; it embeds in batches.
//! - [`Vector`] is an embedding that records the id of the model that made
//!   it, and [`similarity`] refuses to compare vectors of different models.
//! - [`prepare_text`] is the input hygiene applied to every text (control
//!   characters and binary noise stripped, length bounded, contentless input
//!   skipped).
//!
//! Cache layout (`$CACHE` is [`cache_dir`]):
//!
//! ```text
//! $CACHE/onnxruntime/libonnxruntime.so          -> libonnxruntime.so.1.31.1
//! $CACHE/models/all-minilm-l6-v2-int8/model.onnx
//! $CACHE/models/all-minilm-l6-v2-int8/{tokenizer.json, config.json,
//!                                      special_tokens_map.json, tokenizer_config.json}
//! ```

use std::ffi::OsString;
use std::fmt::{self, Write as _};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Name of the default model, and of its directory under `$CACHE/models`.
pub const MODEL_NAME: &str = "all-minilm-l6-v2-int8";

/// The model's window in word pieces; longer texts are truncated to it
/// (all-MiniLM-L6-v2 was trained with a 256-token maximum sequence length).
pub const MAX_TOKENS: usize = 256;

/// Texts are cut to this many characters before tokenization. It bounds the
/// tokenizer's work on huge inputs; ordinary text in any script reaches
/// [`MAX_TOKENS`] word pieces well before it, so the model sees the same.
pub const MAX_INPUT_CHARS: usize = 4096;

/// Default number of texts per model call in [`Embedder::embed`].
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// Default cap on attention cells per model call, one full-window text; see
/// [`EmbedOptions::max_batch_attention`].
pub const DEFAULT_MAX_BATCH_ATTENTION: usize = MAX_TOKENS * MAX_TOKENS;

/// Most intra-op threads used when [`EmbedOptions::intra_threads`] is `None`.
pub const DEFAULT_MAX_THREADS: usize = 4;

/// Files the model directory must hold.
const MODEL_FILES: [&str; 5] = [
    "model.onnx",
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];

/// The rollgraph cache directory: `$ROLLGRAPH_CACHE`, else
/// `$XDG_CACHE_HOME/rollgraph`, else `$HOME/.cache/rollgraph` (empty
/// variables count as unset, as in `scripts/provision.sh`).
#[must_use]
pub fn cache_dir() -> PathBuf {
    cache_dir_from(&|key| std::env::var_os(key))
}

fn non_empty(value: Option<OsString>) -> Option<PathBuf> {
    value.filter(|v| !v.is_empty()).map(PathBuf::from)
}

fn cache_dir_from(get: &dyn Fn(&str) -> Option<OsString>) -> PathBuf {
    if let Some(dir) = non_empty(get("ROLLGRAPH_CACHE")) {
        return dir;
    }
    if let Some(xdg) = non_empty(get("XDG_CACHE_HOME")) {
        return xdg.join("rollgraph");
    }
    match non_empty(get("HOME")) {
        Some(home) => home.join(".cache").join("rollgraph"),
        None => PathBuf::from(".cache").join("rollgraph"),
    }
}

/// Where the ONNX Runtime library and the model files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedPaths {
    /// The ONNX Runtime shared library (`libonnxruntime.so`).
    pub ort_dylib: PathBuf,
    /// The directory holding `model.onnx` and the tokenizer files.
    pub model_dir: PathBuf,
}

impl EmbedPaths {
    /// Paths from the environment, else the cache layout: the library is
    /// `$ROLLGRAPH_ORT_DYLIB`, else `$ORT_DYLIB_PATH`, else
    /// `$CACHE/onnxruntime/libonnxruntime.so`; the model directory is
    /// `$ROLLGRAPH_MODEL_DIR`, else `$CACHE/models/all-minilm-l6-v2-int8`.
    #[must_use]
    pub fn discover() -> EmbedPaths {
        Self::discover_from(&|key| std::env::var_os(key))
    }

    /// The layout `scripts/provision.sh` writes under the cache directory `cache`.
    #[must_use]
    pub fn in_cache(cache: &Path) -> EmbedPaths {
        EmbedPaths {
            ort_dylib: cache.join("onnxruntime").join(dylib_name()),
            model_dir: cache.join("models").join(MODEL_NAME),
        }
    }

    fn discover_from(get: &dyn Fn(&str) -> Option<OsString>) -> EmbedPaths {
        let cached = Self::in_cache(&cache_dir_from(get));
        EmbedPaths {
            ort_dylib: non_empty(get("ROLLGRAPH_ORT_DYLIB"))
                .or_else(|| non_empty(get("ORT_DYLIB_PATH")))
                .unwrap_or(cached.ort_dylib),
            model_dir: non_empty(get("ROLLGRAPH_MODEL_DIR")).unwrap_or(cached.model_dir),
        }
    }
}

fn dylib_name() -> String {
    format!(
        "{}onnxruntime{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// Why embeddings are unavailable or an embedding call failed.
///
/// Every variant displays as a single line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedError {
    /// A file the embedder needs is not there.
    Missing {
        /// What the file is, e.g. "ONNX Runtime library".
        what: String,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The library or the model is there but failed to load.
    Load(String),
    /// The text at this index has nothing to embed (empty, whitespace,
    /// punctuation only, or binary noise); see [`prepare_text`].
    NoContent {
        /// Index of the text in the input slice.
        index: usize,
    },
    /// The model failed while embedding.
    Inference(String),
}

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmbedError::Missing { what, path } => write!(
                f,
                "{what} not found at {} (run scripts/provision.sh)",
                path.display()
            ),
            EmbedError::Load(msg) => write!(f, "embedding model failed to load: {msg}"),
            EmbedError::NoContent { index } => {
                write!(f, "text {index} has nothing to embed")
            }
            EmbedError::Inference(msg) => write!(f, "embedding failed: {msg}"),
        }
    }
}

impl std::error::Error for EmbedError {}

impl EmbedError {
    /// The one-line notice to show when embeddings are off for this reason.
    #[must_use]
    pub fn notice(&self) -> String {
        format!("rollgraph: embeddings off, matching lexically: {self}")
    }
}

/// Squash a foreign error message onto one line.
fn one_line(msg: impl fmt::Display) -> String {
    let msg = msg.to_string();
    let mut out = String::with_capacity(msg.len());
    for word in msg.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        one_line(s)
    } else if let Some(s) = payload.downcast_ref::<String>() {
        one_line(s)
    } else {
        "panic".to_owned()
    }
}

/// An embedding, tagged with the id of the model that made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vector {
    /// [`Embedder::model_id`] of the model that made this vector.
    pub model: String,
    /// The components, L2-normalized by the embedder.
    pub values: Vec<f32>,
}

/// Cosine similarity of two vectors, in `[-1, 1]`.
///
/// `None` when they come from different models (vectors of different models
/// are never compared), have different or zero dimensions, or either has a
/// zero or non-finite norm.
#[must_use]
pub fn similarity(a: &Vector, b: &Vector) -> Option<f32> {
    if a.model != b.model || a.values.len() != b.values.len() || a.values.is_empty() {
        return None;
    }
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (&x, &y) in a.values.iter().zip(&b.values) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let denom = (na * nb).sqrt();
    if !denom.is_finite() || denom <= f64::EPSILON || !dot.is_finite() {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)]
    Some((dot / denom).clamp(-1.0, 1.0) as f32)
}

/// Whether `c` is noise rather than text: control characters other than
/// whitespace, the replacement character left by lossy UTF-8 decoding,
/// private-use and non-characters.
fn is_noise(c: char) -> bool {
    (c.is_control() && !c.is_whitespace())
        || matches!(c,
            '\u{FFFD}' | '\u{FFFE}' | '\u{FFFF}'
            | '\u{E000}'..='\u{F8FF}'
            | '\u{F0000}'..='\u{10FFFF}')
}

/// Invisible format characters that only split or join words.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}'
    )
}

/// The text the model sees, or `None` when there is nothing to embed.
///
/// Control characters, replacement characters (from lossy decoding of
/// non-UTF-8 bytes), private-use and invisible format characters become
/// spaces; whitespace runs collapse to one space; the result is trimmed and
/// cut to [`MAX_INPUT_CHARS`] characters (the tokenizer then truncates to
/// [`MAX_TOKENS`] word pieces). Returns `None` for input with no letter or
/// digit in any script (empty, whitespace, punctuation or symbols only), and
/// for binary noise: input of which more than a quarter of the characters
/// scanned are noise. Bytes of unknown encoding should go through
/// [`String::from_utf8_lossy`] first.
#[must_use]
pub fn prepare_text(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len().min(MAX_INPUT_CHARS * 4));
    let (mut kept, mut scanned, mut noise) = (0usize, 0usize, 0usize);
    let mut has_content = false;
    let mut pending_space = false;
    for c in text.chars() {
        if kept >= MAX_INPUT_CHARS {
            break;
        }
        scanned += 1;
        if is_noise(c) {
            noise += 1;
            pending_space = true;
            continue;
        }
        if c.is_whitespace() || is_invisible(c) {
            pending_space = true;
            continue;
        }
        if pending_space && !out.is_empty() {
            if kept + 1 >= MAX_INPUT_CHARS {
                break;
            }
            out.push(' ');
            kept += 1;
        }
        pending_space = false;
        has_content |= c.is_alphanumeric();
        out.push(c);
        kept += 1;
    }
    if !has_content || noise * 4 > scanned {
        return None;
    }
    Some(out)
}

/// Knobs for [`Embedder::load_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedOptions {
    /// ONNX Runtime intra-op threads; `None` uses the available cores, at
    /// most [`DEFAULT_MAX_THREADS`], so a background embedder does not
    /// occupy a large machine.
    pub intra_threads: Option<usize>,
    /// At most this many texts per model call; `0` is treated as 1.
    pub batch_size: usize,
    /// At most this many attention cells per model call: texts times the
    /// square of the longest text's length in word pieces. Working memory
    /// grows with it (about 50 MB per full-window text with this model), so
    /// long texts go through in small batches while short ones fill
    /// [`EmbedOptions::batch_size`]; `0` means no limit.
    pub max_batch_attention: usize,
    /// Keep ONNX Runtime's CPU memory arena. The arena keeps the largest
    /// working set it ever needed for the life of the process; without it
    /// memory goes back after each call. Off by default.
    pub arena: bool,
    /// Extra ONNX Runtime session configuration entries (key, value).
    pub session_config: Vec<(String, String)>,
    /// Let idle ONNX Runtime worker threads spin-wait for work. Spinning
    /// shaves latency off back-to-back calls but burns CPU after each call,
    /// so it is off by default: the embedder shares the machine with the
    /// agent it serves.
    pub spin: bool,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        EmbedOptions {
            intra_threads: None,
            batch_size: DEFAULT_BATCH_SIZE,
            max_batch_attention: DEFAULT_MAX_BATCH_ATTENTION,
            arena: false,
            session_config: Vec::new(),
            spin: false,
        }
    }
}

/// The ONNX Runtime library and environment, loaded once per process.
struct Runtime {
    dylib: PathBuf,
    env: ort::environment::Environment,
}

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

/// Load ONNX Runtime from `dylib` (once per process) and return its
/// environment. A process can hold one ONNX Runtime only: asking for a
/// different library after one is loaded is an error.
fn runtime(dylib: &Path) -> Result<ort::environment::Environment, EmbedError> {
    let dylib = dylib
        .canonicalize()
        .map_err(|e| EmbedError::Load(one_line(format_args!("{}: {e}", dylib.display()))))?;
    let mut slot = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(rt) = slot.as_ref() {
        if rt.dylib == dylib {
            return Ok(rt.env.clone());
        }
        return Err(EmbedError::Load(format!(
            "ONNX Runtime is already loaded from {} in this process, cannot switch to {}",
            rt.dylib.display(),
            dylib.display()
        )));
    }
    let built = catch_unwind(AssertUnwindSafe(|| {
        ort::init_from(&dylib)
            .map_err(one_line)?
            .with_name("rollgraph")
            .with_telemetry(false)
            .build()
            .map_err(one_line)
    }));
    let env = match built {
        Ok(Ok(env)) => env,
        Ok(Err(msg)) => return Err(EmbedError::Load(msg)),
        Err(payload) => {
            return Err(EmbedError::Load(format!(
                "ONNX Runtime at {} panicked while loading: {}",
                dylib.display(),
                panic_message(payload.as_ref())
            )));
        }
    };
    *slot = Some(Runtime {
        dylib,
        env: env.clone(),
    });
    Ok(env)
}

/// A loaded embedding model. Load it once per long-lived process; loading
/// takes most of a second, embedding a sentence a few milliseconds.
pub struct Embedder {
    model: TextEmbedding,
    model_id: String,
    dim: usize,
    batch_size: usize,
    max_batch_attention: usize,
    /// Set after a panic inside the model: the embedder refuses further work.
    broken: Option<String>,
}

impl fmt::Debug for Embedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Embedder")
            .field("model_id", &self.model_id)
            .field("dim", &self.dim)
            .field("batch_size", &self.batch_size)
            .field("max_batch_attention", &self.max_batch_attention)
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

/// Load the embedder if everything is there; otherwise `None` and a one-line
/// notice for the user, and the engine runs lexically. Never panics.
#[must_use]
pub fn load_optional(paths: &EmbedPaths) -> (Option<Embedder>, Option<String>) {
    match Embedder::load(paths) {
        Ok(embedder) => (Some(embedder), None),
        Err(err) => (None, Some(err.notice())),
    }
}

fn require_file(what: &str, path: &Path) -> Result<(), EmbedError> {
    if path.is_file() {
        Ok(())
    } else {
        Err(EmbedError::Missing {
            what: what.to_owned(),
            path: path.to_path_buf(),
        })
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, EmbedError> {
    std::fs::read(path)
        .map_err(|e| EmbedError::Load(one_line(format_args!("{}: {e}", path.display()))))
}

/// A model id from the model directory's name and the model file's digest.
fn make_model_id(model_dir: &Path, onnx: &[u8]) -> String {
    let name: String = model_dir
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    let name = if name.is_empty() {
        MODEL_NAME.to_owned()
    } else {
        name
    };
    let digest = Sha256::digest(onnx);
    let mut id = format!("{name}@");
    for b in digest.iter().take(6) {
        let _ = write!(id, "{b:02x}");
    }
    id
}

impl Embedder {
    /// Load ONNX Runtime and the model with [`EmbedOptions::default`].
    ///
    /// A missing library or model file is [`EmbedError::Missing`]; anything
    /// else that stops the model from loading and running is
    /// [`EmbedError::Load`]. Never panics.
    ///
    /// # Errors
    ///
    /// [`EmbedError::Missing`] or [`EmbedError::Load`], as above.
    pub fn load(paths: &EmbedPaths) -> Result<Embedder, EmbedError> {
        Self::load_with(paths, &EmbedOptions::default())
    }

    /// Load ONNX Runtime and the model with the given options.
    ///
    /// The library is loaded once per process; later loads must name the same
    /// library. The model is checked with one probe embedding before this
    /// returns, so a model that loads but cannot run fails here.
    ///
    /// # Errors
    ///
    /// [`EmbedError::Missing`] for an absent file, [`EmbedError::Load`] for
    /// anything else.
    pub fn load_with(paths: &EmbedPaths, options: &EmbedOptions) -> Result<Embedder, EmbedError> {
        require_file("ONNX Runtime library", &paths.ort_dylib)?;
        for file in MODEL_FILES {
            require_file(
                &format!("embedding model file {file}"),
                &paths.model_dir.join(file),
            )?;
        }
        let read = |name: &str| read_file(&paths.model_dir.join(name));
        let onnx = read("model.onnx")?;
        let tokenizer_files = TokenizerFiles {
            tokenizer_file: read("tokenizer.json")?,
            config_file: read("config.json")?,
            special_tokens_map_file: read("special_tokens_map.json")?,
            tokenizer_config_file: read("tokenizer_config.json")?,
        };
        let model_id = make_model_id(&paths.model_dir, &onnx);

        let env = runtime(&paths.ort_dylib)?;
        let mut init = InitOptionsUserDefined::new()
            .with_environment(env)
            .with_max_length(MAX_TOKENS);
        let threads = options.intra_threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map_or(1, std::num::NonZero::get)
                .min(DEFAULT_MAX_THREADS)
        });
        init = init.with_intra_threads(threads.max(1));
        if !options.spin {
            init = init.with_session_config("session.intra_op.allow_spinning", "0");
        }
        for (key, value) in &options.session_config {
            init = init.with_session_config(key.clone(), value.clone());
        }
        init = init.with_execution_providers(vec![
            ort::ep::CPU::default()
                .with_arena_allocator(options.arena)
                .build(),
        ]);
        let user_model =
            UserDefinedEmbeddingModel::new(onnx, tokenizer_files).with_pooling(Pooling::Mean);
        let model = match catch_unwind(AssertUnwindSafe(|| {
            TextEmbedding::try_new_from_user_defined(user_model, init)
        })) {
            Ok(Ok(model)) => model,
            Ok(Err(e)) => return Err(EmbedError::Load(one_line(e))),
            Err(payload) => {
                return Err(EmbedError::Load(format!(
                    "panicked: {}",
                    panic_message(payload.as_ref())
                )));
            }
        };
        let mut embedder = Embedder {
            model,
            model_id,
            dim: 0,
            batch_size: options.batch_size.max(1),
            max_batch_attention: if options.max_batch_attention == 0 {
                usize::MAX
            } else {
                options.max_batch_attention
            },
            broken: None,
        };
        let probe = embedder
            .run(&["rollgraph embedding probe".to_owned()])
            .map_err(|e| EmbedError::Load(format!("probe embedding failed: {e}")))?;
        embedder.dim = probe.first().map_or(0, Vec::len);
        if embedder.dim == 0 {
            return Err(EmbedError::Load(
                "probe embedding returned no vector".to_owned(),
            ));
        }
        Ok(embedder)
    }

    /// The id every vector of this model carries: the model directory's
    /// name and the first 12 hex digits of `model.onnx`'s sha256, e.g.
    /// `all-minilm-l6-v2-int8@8199be6f699a`.
    #[must_use]
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Number of components of each vector (384 for all-MiniLM-L6-v2).
    #[must_use]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Embed a batch of texts, one vector per text, in order.
    ///
    /// Each text goes through [`prepare_text`] first. A text with nothing to
    /// embed fails the whole call with [`EmbedError::NoContent`] before the
    /// model runs; use [`Embedder::embed_lossy`] to skip such texts instead.
    /// Texts are grouped by length into model calls (see [`EmbedOptions`]);
    /// padding in a shared call changes float rounding, so a vector can
    /// differ from the one-at-a-time vector in the last decimals (cosine
    /// above 0.999).
    ///
    /// # Errors
    ///
    /// [`EmbedError::NoContent`] as above, [`EmbedError::Inference`] when the
    /// model fails.
    pub fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vector>, EmbedError> {
        let prepared = texts
            .iter()
            .enumerate()
            .map(|(index, text)| prepare_text(text).ok_or(EmbedError::NoContent { index }))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self
            .run(&prepared)?
            .into_iter()
            .map(|values| self.vector(values))
            .collect())
    }

    /// Embed one text.
    ///
    /// # Errors
    ///
    /// [`EmbedError::NoContent`] when it has nothing to embed (see
    /// [`prepare_text`]), [`EmbedError::Inference`] when the model fails.
    pub fn embed_one(&mut self, text: &str) -> Result<Vector, EmbedError> {
        let prepared = prepare_text(text).ok_or(EmbedError::NoContent { index: 0 })?;
        let values = self
            .run(&[prepared])?
            .pop()
            .ok_or_else(|| EmbedError::Inference("the model returned no vector".to_owned()))?;
        Ok(self.vector(values))
    }

    /// Embed a batch, with `None` for each text that has nothing to embed
    /// (see [`prepare_text`]) instead of an error. The result has one entry
    /// per input text, in order.
    ///
    /// # Errors
    ///
    /// [`EmbedError::Inference`] when the model fails.
    pub fn embed_lossy(&mut self, texts: &[&str]) -> Result<Vec<Option<Vector>>, EmbedError> {
        let prepared: Vec<Option<String>> = texts.iter().map(|t| prepare_text(t)).collect();
        let present: Vec<String> = prepared.iter().flatten().cloned().collect();
        let mut vectors = self.run(&present)?.into_iter();
        let mut out = Vec::with_capacity(texts.len());
        for slot in &prepared {
            out.push(match slot {
                Some(_) => Some(self.vector(vectors.next().ok_or_else(|| {
                    EmbedError::Inference("the model returned too few vectors".to_owned())
                })?)),
                None => None,
            });
        }
        Ok(out)
    }

    /// Word pieces the model will see for `text` (after truncation).
    fn token_count(&self, text: &str) -> Result<usize, EmbedError> {
        match catch_unwind(AssertUnwindSafe(|| self.model.tokenizer.encode(text, true))) {
            Ok(Ok(encoding)) => Ok(encoding.len()),
            Ok(Err(e)) => Err(EmbedError::Inference(one_line(format_args!(
                "tokenizer: {e}"
            )))),
            Err(payload) => Err(EmbedError::Inference(format!(
                "tokenizer panicked: {}",
                panic_message(payload.as_ref())
            ))),
        }
    }

    fn vector(&self, values: Vec<f32>) -> Vector {
        Vector {
            model: self.model_id.clone(),
            values,
        }
    }

    /// Run the model on prepared texts, batched by similar length, and
    /// return the vectors in input order.
    fn run(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if let Some(reason) = &self.broken {
            return Err(EmbedError::Inference(format!(
                "embedder disabled after an earlier failure: {reason}"
            )));
        }
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // Sorting by length keeps padding, and so wasted work, small; the
        // attention budget keeps batches of long texts small.
        let lengths = texts
            .iter()
            .map(|t| self.token_count(t))
            .collect::<Result<Vec<_>, _>>()?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| lengths[i]);
        let mut chunks: Vec<&[usize]> = Vec::new();
        let mut start = 0;
        for end in 1..=order.len() {
            // Would taking order[end - 1] overflow the chunk? Then close it first.
            let size = end - start;
            let longest = lengths[order[end - 1]].max(1);
            let cells = size.saturating_mul(longest.saturating_mul(longest));
            if size > 1 && (size > self.batch_size || cells > self.max_batch_attention) {
                chunks.push(&order[start..end - 1]);
                start = end - 1;
            }
        }
        if start < order.len() {
            chunks.push(&order[start..]);
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for chunk in chunks {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i].as_str()).collect();
            let model = &mut self.model;
            let result = catch_unwind(AssertUnwindSafe(|| model.embed(&batch, Some(batch.len()))));
            let vectors = match result {
                Ok(Ok(vectors)) => vectors,
                Ok(Err(e)) => return Err(EmbedError::Inference(one_line(e))),
                Err(payload) => {
                    let reason = format!("model panicked: {}", panic_message(payload.as_ref()));
                    self.broken = Some(reason.clone());
                    return Err(EmbedError::Inference(reason));
                }
            };
            if vectors.len() != chunk.len() {
                return Err(EmbedError::Inference(format!(
                    "the model returned {} vectors for {} texts",
                    vectors.len(),
                    chunk.len()
                )));
            }
            for (&i, values) in chunk.iter().zip(vectors) {
                if values.is_empty()
                    || (self.dim != 0 && values.len() != self.dim)
                    || values.iter().any(|v| !v.is_finite())
                {
                    return Err(EmbedError::Inference(format!(
                        "the model returned a malformed vector ({} components)",
                        values.len()
                    )));
                }
                out[i] = Some(values);
            }
        }
        out.into_iter()
            .map(|v| v.ok_or_else(|| EmbedError::Inference("a text was not embedded".to_owned())))
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::sync::{MutexGuard, OnceLock};

    /// The real model from the default cache, shared by the tests. Missing
    /// model: `None` (the test skips), or a failure when
    /// `ROLLGRAPH_REQUIRE_MODEL=1`.
    fn model() -> Option<MutexGuard<'static, Embedder>> {
        static MODEL: OnceLock<Result<Mutex<Embedder>, EmbedError>> = OnceLock::new();
        let loaded = MODEL.get_or_init(|| Embedder::load(&EmbedPaths::discover()).map(Mutex::new));
        match loaded {
            Ok(m) => Some(m.lock().unwrap_or_else(PoisonError::into_inner)),
            Err(e) => {
                let required = std::env::var("ROLLGRAPH_REQUIRE_MODEL").is_ok_and(|v| v == "1");
                assert!(
                    !required,
                    "ROLLGRAPH_REQUIRE_MODEL=1 but the embedding model did not load: {e}"
                );
                eprintln!(
                    "skipping: {} (set ROLLGRAPH_REQUIRE_MODEL=1 to fail)",
                    e.notice()
                );
                None
            }
        }
    }

    fn sim(m: &mut Embedder, a: &str, b: &str) -> f32 {
        let v = m.embed(&[a, b]).unwrap();
        similarity(&v[0], &v[1]).unwrap()
    }

    #[test]
    fn paraphrases_score_above_unrelated_pairs() {
        let Some(mut m) = model() else { return };
        let pairs = [
            ("switch mail to Postwick", "transactional email provider"),
            ("the retry limit is five", "allow at most 5 retries"),
            (
                "use Postgres for the job queue",
                "store background jobs in the PostgreSQL database",
            ),
            ("the login page is broken", "users cannot sign in"),
        ];
        let unrelated = "add a dark mode toggle";
        for (a, b) in pairs {
            let para = sim(&mut m, a, b);
            let off_a = sim(&mut m, a, unrelated);
            let off_b = sim(&mut m, b, unrelated);
            eprintln!("{a:?} ~ {b:?}: {para:.3}, vs unrelated {off_a:.3} / {off_b:.3}");
            assert!(
                para > off_a && para > off_b,
                "{a:?} ~ {b:?} = {para}, unrelated {off_a} / {off_b}"
            );
        }
    }

    #[test]
    fn vectors_carry_model_id_and_dimension() {
        let Some(mut m) = model() else { return };
        assert_eq!(m.dim(), 384);
        assert!(
            m.model_id().starts_with("all-minilm-l6-v2-int8@"),
            "{}",
            m.model_id()
        );
        assert_eq!(m.model_id().len(), "all-minilm-l6-v2-int8@".len() + 12);
        let v = m.embed_one("the retry limit is five").unwrap();
        assert_eq!(v.model, m.model_id());
        assert_eq!(v.values.len(), 384);
        let norm: f32 = v.values.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "norm {norm}");
        let json = serde_json::to_string(&v).unwrap();
        let back: Vector = serde_json::from_str(&json).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn batched_matches_one_at_a_time() {
        let Some(mut m) = model() else { return };
        let texts = [
            "switch mail to Postwick",
            "a much longer sentence about the transactional email provider we picked last week",
            "ok",
            "allow at most 5 retries",
        ];
        let batched = m.embed(&texts).unwrap();
        for (text, b) in texts.iter().zip(&batched) {
            let single = m.embed_one(text).unwrap();
            let s = similarity(&single, b).unwrap();
            assert!(s > 0.999, "{text:?}: batched vs single cosine {s}");
        }
    }

    #[test]
    fn batching_keeps_order_and_vectors() {
        let Some(mut m) = model() else { return };
        let long = "the mail worker retries with exponential backoff ".repeat(60);
        let mut texts: Vec<String> = (0..40)
            .map(|i| {
                format!(
                    "decision {i}: keep {} retries for job kind {}",
                    i % 7,
                    i * 13
                )
            })
            .collect();
        texts.insert(5, long.clone());
        texts.insert(17, long[..300].to_owned());
        texts.push("short".to_owned());
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let reference = m.embed(&refs).unwrap();
        drop(m);
        let options = EmbedOptions {
            batch_size: 3,
            max_batch_attention: 1,
            intra_threads: Some(1),
            ..EmbedOptions::default()
        };
        let mut small = Embedder::load_with(&EmbedPaths::discover(), &options).unwrap();
        let small_batches = small.embed(&refs).unwrap();
        assert_eq!(small_batches.len(), texts.len());
        for (i, (a, b)) in reference.iter().zip(&small_batches).enumerate() {
            let s = similarity(a, b).unwrap();
            assert!(s > 0.999, "text {i}: {s}");
        }
        // Order: each vector is closest to its own text's one-at-a-time vector.
        let own = small.embed_one(&texts[5]).unwrap();
        assert!(similarity(&own, &reference[5]).unwrap() > 0.999);
        assert!(similarity(&own, &reference[6]).unwrap() < 0.9);
    }

    #[test]
    fn bad_input_never_panics() {
        let Some(mut m) = model() else { return };
        let long = "retry budget and backoff policy ".repeat(100 * 1024 / 32);
        assert!(long.len() >= 100 * 1024);
        let noise: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let noise = String::from_utf8_lossy(&noise).into_owned();
        let texts = [
            "",
            "   \n\t ",
            long.as_str(),
            noise.as_str(),
            "メールの送信をPostwickに切り替える (switch mail to Postwick)",
            "\u{0}\u{1}hello\u{7f}\u{FEFF} world\u{200B}",
            "🎉🎉🎉",
            "日本語だけのテキストです",
        ];
        let out = m.embed_lossy(&texts).unwrap();
        assert_eq!(out.len(), texts.len());
        assert!(
            out[0].is_none() && out[1].is_none(),
            "empty input is skipped"
        );
        assert!(out[2].is_some(), "long input is truncated and embedded");
        assert!(out[3].is_none(), "binary noise is skipped");
        assert!(out[4].is_some() && out[5].is_some() && out[7].is_some());
        assert!(out[6].is_none(), "symbols only are skipped");
        for v in out.iter().flatten() {
            assert_eq!(v.values.len(), m.dim());
        }
        assert_eq!(
            m.embed(&["fine", " "]),
            Err(EmbedError::NoContent { index: 1 })
        );
        assert_eq!(m.embed_one(""), Err(EmbedError::NoContent { index: 0 }));
        assert_eq!(m.embed(&[]), Ok(Vec::new()));
        // Truncation: a long text embeds like its beginning.
        let head = m.embed_one(&long[..2000]).unwrap();
        let whole = m.embed_one(&long).unwrap();
        assert!(similarity(&head, &whole).unwrap() > 0.99);
        // Mixed languages still relate to the English meaning.
        let mixed = out[4].as_ref().unwrap();
        let en = m.embed_one("switch mail to Postwick").unwrap();
        let off = m.embed_one("add a dark mode toggle").unwrap();
        assert!(similarity(mixed, &en).unwrap() > similarity(mixed, &off).unwrap());
    }

    #[test]
    fn loading_again_reuses_the_runtime() {
        let Some(m) = model() else { return };
        let id = m.model_id().to_owned();
        drop(m);
        let again = Embedder::load(&EmbedPaths::discover()).unwrap();
        assert_eq!(again.model_id(), id);
    }

    #[test]
    fn similarity_refuses_other_models_and_shapes() {
        let a = Vector {
            model: "m1".into(),
            values: vec![1.0, 0.0],
        };
        let b = Vector {
            model: "m2".into(),
            values: vec![1.0, 0.0],
        };
        let c = Vector {
            model: "m1".into(),
            values: vec![1.0, 0.0, 0.0],
        };
        let zero = Vector {
            model: "m1".into(),
            values: vec![0.0, 0.0],
        };
        let d = Vector {
            model: "m1".into(),
            values: vec![0.0, 2.0],
        };
        assert_eq!(similarity(&a, &b), None);
        assert_eq!(similarity(&a, &c), None);
        assert_eq!(similarity(&a, &zero), None);
        assert_eq!(similarity(&a, &a), Some(1.0));
        assert_eq!(similarity(&a, &d), Some(0.0));
        let empty = Vector {
            model: "m1".into(),
            values: vec![],
        };
        assert_eq!(similarity(&empty, &empty), None);
    }

    #[test]
    fn missing_files_are_one_clear_line() {
        let dir = tempfile::tempdir().unwrap();
        let paths = EmbedPaths::in_cache(dir.path());
        let err = Embedder::load(&paths).unwrap_err();
        assert!(
            matches!(&err, EmbedError::Missing { what, path }
                if what == "ONNX Runtime library" && *path == paths.ort_dylib),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(!msg.contains('\n'));
        assert!(msg.contains("ONNX Runtime library not found at"), "{msg}");
        assert!(msg.contains("scripts/provision.sh"), "{msg}");

        // Library present, model absent.
        std::fs::create_dir_all(paths.ort_dylib.parent().unwrap()).unwrap();
        std::fs::write(&paths.ort_dylib, b"not a library").unwrap();
        let err = Embedder::load(&paths).unwrap_err();
        assert!(
            matches!(&err, EmbedError::Missing { path, .. }
                if *path == paths.model_dir.join("model.onnx")),
            "{err:?}"
        );

        let (embedder, notice) = load_optional(&paths);
        assert!(embedder.is_none());
        let notice = notice.unwrap();
        assert!(!notice.contains('\n'));
        assert!(notice.starts_with("rollgraph: embeddings off"), "{notice}");
    }

    #[test]
    fn a_bad_library_is_a_load_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let paths = EmbedPaths::in_cache(dir.path());
        std::fs::create_dir_all(paths.ort_dylib.parent().unwrap()).unwrap();
        std::fs::write(&paths.ort_dylib, b"\x7fELF garbage").unwrap();
        std::fs::create_dir_all(&paths.model_dir).unwrap();
        for file in MODEL_FILES {
            std::fs::write(paths.model_dir.join(file), b"{}").unwrap();
        }
        let err = Embedder::load(&paths).unwrap_err();
        assert!(matches!(err, EmbedError::Load(_)), "{err:?}");
        assert!(!err.to_string().contains('\n'), "{err}");
    }

    #[test]
    fn a_broken_model_is_a_load_error() {
        let Some(m) = model() else { return };
        drop(m);
        let real = EmbedPaths::discover();
        let dir = tempfile::tempdir().unwrap();
        for file in MODEL_FILES {
            std::fs::copy(real.model_dir.join(file), dir.path().join(file)).unwrap();
        }
        std::fs::write(dir.path().join("model.onnx"), b"not an onnx model").unwrap();
        let paths = EmbedPaths {
            ort_dylib: real.ort_dylib.clone(),
            model_dir: dir.path().to_path_buf(),
        };
        let err = Embedder::load(&paths).unwrap_err();
        assert!(matches!(err, EmbedError::Load(_)), "{err:?}");
        assert!(!err.to_string().contains('\n'), "{err}");
        let (none, notice) = load_optional(&paths);
        assert!(none.is_none() && notice.is_some());
    }

    #[test]
    fn discover_follows_env_rules() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |key: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| OsString::from(*v))
            }
        };
        let p = EmbedPaths::discover_from(&env(&[("HOME", "/h")]));
        assert_eq!(
            p.ort_dylib,
            PathBuf::from("/h/.cache/rollgraph/onnxruntime/libonnxruntime.so")
        );
        assert_eq!(
            p.model_dir,
            PathBuf::from("/h/.cache/rollgraph/models/all-minilm-l6-v2-int8")
        );
        let p = EmbedPaths::discover_from(&env(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/x")]));
        assert_eq!(
            p.model_dir,
            PathBuf::from("/x/rollgraph/models/all-minilm-l6-v2-int8")
        );
        let p = EmbedPaths::discover_from(&env(&[
            ("HOME", "/h"),
            ("XDG_CACHE_HOME", "/x"),
            ("ROLLGRAPH_CACHE", "/c"),
            ("ORT_DYLIB_PATH", "/o/libort.so"),
        ]));
        assert_eq!(p.ort_dylib, PathBuf::from("/o/libort.so"));
        assert_eq!(
            p.model_dir,
            PathBuf::from("/c/models/all-minilm-l6-v2-int8")
        );
        let p = EmbedPaths::discover_from(&env(&[
            ("ROLLGRAPH_CACHE", ""),
            ("HOME", "/h"),
            ("ORT_DYLIB_PATH", "/o/libort.so"),
            ("ROLLGRAPH_ORT_DYLIB", "/r/lib.so"),
            ("ROLLGRAPH_MODEL_DIR", "/m"),
        ]));
        assert_eq!(p.ort_dylib, PathBuf::from("/r/lib.so"));
        assert_eq!(p.model_dir, PathBuf::from("/m"));
    }

    #[test]
    fn prepare_text_cleans_and_bounds() {
        assert_eq!(prepare_text(""), None);
        assert_eq!(prepare_text(" \t\n "), None);
        assert_eq!(prepare_text("?!... --"), None);
        assert_eq!(
            prepare_text("  a\u{0}b\r\n\n c\u{200B}d  ").as_deref(),
            Some("a b c d")
        );
        assert_eq!(prepare_text("5").as_deref(), Some("5"));
        assert_eq!(prepare_text("日本語").as_deref(), Some("日本語"));
        let long = "x".repeat(MAX_INPUT_CHARS * 3);
        assert_eq!(
            prepare_text(&long).unwrap().chars().count(),
            MAX_INPUT_CHARS
        );
        let wide = "語".repeat(MAX_INPUT_CHARS + 5);
        assert_eq!(
            prepare_text(&wide).unwrap().chars().count(),
            MAX_INPUT_CHARS
        );
        let spaced = "a ".repeat(MAX_INPUT_CHARS);
        let cut = prepare_text(&spaced).unwrap();
        assert!(cut.chars().count() <= MAX_INPUT_CHARS && !cut.ends_with(' '));
        let noisy = String::from_utf8_lossy(&[0xff, 0xfe, b'a', 0x00, 0x80, 0x81, b'b', 0x02]);
        assert_eq!(prepare_text(&noisy), None);
        assert!(prepare_text("a line with one stray \u{1} control char").is_some());
    }

    #[test]
    fn embedder_is_send() {
        fn is_send<T: Send>() {}
        is_send::<Embedder>();
    }
}
