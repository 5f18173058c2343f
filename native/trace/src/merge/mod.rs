//! merge (placeholder)
