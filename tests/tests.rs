//! The one integration test binary; each module is one area.

// The LLM probe against a scripted chat-completions server.
mod llm;
