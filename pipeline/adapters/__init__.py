"""Every use of another library's internals, each with a version check and a contract test."""
