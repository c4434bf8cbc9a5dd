//! Which notes should the agent see now? Lexical hits, the typed-graph walk, synthesized
//! co-occurrence and the scoring policy, merged into one ranked list with trails.

pub mod policy;
