//! Dead-letter stores backed by real databases.
