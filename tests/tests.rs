//! Integration tests of the rollgraph binary and engine, one module per area.

// Warm graph: multi-session scenario, crash recovery, concurrency, seeding, corrupt stores.
mod warm;

// Graduation review queue: flag, list, show, edit, approve once, reject, archive.
mod review;
