"""The command line's wording and noise filter (pipeline.runtime.console), on real log records and warnings."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

from pipeline.runtime.console import NOISE, configure_output, counted


def test_counts_have_the_right_plural():
    assert counted(1, "document") == "1 document" and counted(0, "topic") == "0 topics"
    assert counted(1_741, "paper") == "1,741 papers" and counted(1, "theme") == "1 theme"
    assert counted(3, "entry", "entries") == "3 entries"


def test_library_noise_goes_to_the_log_file_and_the_pipelines_messages_to_both(tmp_path: Path, capsys):
    # An earlier in-process command of this pytest run may have left warnings captured; captureWarnings(True) is then
    # a no-op and pytest's per-test recorder would take the warning instead of the log: start uncaptured.
    logging.captureWarnings(False)
    path = configure_output("test", tmp_path)
    assert path is not None
    try:
        _say_things()
        for handler in logging.getLogger().handlers:
            handler.flush()
    finally:  # leave the session's logging as it was
        for handler in list(logging.getLogger().handlers):
            if getattr(handler, "_atlas", False):
                logging.getLogger().removeHandler(handler)
                handler.close()
        logging.getLogger("BERTopic").handlers = []
        logging.captureWarnings(False)
    terminal = capsys.readouterr().err
    logged = path.read_text(encoding="utf-8")
    assert terminal.count("dropped 2 of 9 records") == 1
    assert "custom list" not in terminal and "invalid value" not in terminal and "a library says" not in terminal
    assert "custom list" in logged and "invalid value encountered in divide" in logged and "a library says" in logged
    assert NOISE.search("Token indices sequence length is longer than the specified maximum sequence length")


def _say_things() -> None:
    logging.getLogger("BERTopic").warning("WARNING: Using a custom list of topic assignments may lead to errors")
    logging.getLogger("sklearn").warning("something a library says")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("invalid value encountered in divide", RuntimeWarning, stacklevel=1)
    logging.getLogger("pipeline.operations.build").warning("dropped 2 of 9 records")
    logging.getLogger("pipeline.operations.build").warning("dropped 2 of 9 records")


def test_transformers_warnings_go_to_the_log_file_not_the_terminal(tmp_path: Path, capsys, encoder):
    """Once the encoder is loaded, transformers' warnings leave its own stderr handler for the log file."""
    from transformers.utils import logging as transformers_logging

    assert encoder.max_seq_length > 0  # the session's encoder, loaded on first use (tests/conftest.py), loaded now
    logging.captureWarnings(False)
    path = configure_output("test", tmp_path)
    assert path is not None
    try:
        transformers_logging.get_logger("transformers.tokenization_utils_base").warning(
            "Token indices sequence length is longer than the specified maximum sequence length for this model"
        )
        for handler in logging.getLogger().handlers:
            handler.flush()
    finally:
        for handler in list(logging.getLogger().handlers):
            if getattr(handler, "_atlas", False):
                logging.getLogger().removeHandler(handler)
                handler.close()
        logging.getLogger("BERTopic").handlers = []
    assert "Token indices" not in capsys.readouterr().err
    assert "Token indices sequence length" in path.read_text(encoding="utf-8")


def test_configuring_again_closes_the_previous_log_file(tmp_path: Path):
    """A command run twice in one process (the tests run ``main`` in-process) closes the first run's log file."""
    configure_output("first", tmp_path)
    logging.getLogger("pipeline.test").info("written")
    first = next(
        h for h in logging.getLogger().handlers if getattr(h, "_atlas", False) and isinstance(h, logging.FileHandler)
    )
    assert first.stream is not None and not first.stream.closed
    configure_output("second", tmp_path)
    assert first.stream is None  # FileHandler.close() drops its stream
    assert first not in logging.getLogger().handlers
