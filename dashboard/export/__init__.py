"""Download bytes (CSV, HTML, PNG, SVG, PDF), rendered out of process with timeouts."""
