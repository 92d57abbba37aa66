//! Nothing: the package exists for its benchmark (`workloads.rs`).
