"""Process concerns: errors, crash logs, thread limits, environment checks."""
