//! The per-turn pipeline: gate → probe → patch → decay → render.
//!
//! [`gate`] decides in microseconds whether a probe runs; [`probe`] turns the
//! turns since the last probe into a patch (the embedded heuristic probe here,
//! the LLM probe in [`crate::llm`]); [`decay`] fades what is far from the
//! focus; [`render`] writes the layered, token-budgeted injection;
//! [`session::Session`] drives the cycle over the hot store and [`stats`]
//! counts it. Nothing in this stage loads a model or calls the network: it is
//! what the hook path and the offline default run.

pub mod decay;
pub mod gate;
pub mod inject;
pub mod probe;
pub mod render;
pub mod session;
pub mod stats;
