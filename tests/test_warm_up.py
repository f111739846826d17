"""A fresh dashboard server warmed before its first visitor (topic_atlas.warm_up): a real ``streamlit run`` on the
300-paper atlas, its script health check asked for as ``make run`` and ``Atlas.serve`` ask for it."""

from __future__ import annotations

from pathlib import Path

from tests.streamlit_server import free_port, streamlit_server
from topic_atlas.warm_up import main, warm


def test_a_warmed_server_ran_the_page_once_without_an_error(slice_cache: Path, tmp_path: Path):
    with streamlit_server(slice_cache, tmp_path / "server.log") as (url, _):
        assert warm(url) == "ok"


def test_a_server_without_the_script_check_is_reported_in_one_line(slice_cache: Path, tmp_path: Path):
    environment = {"STREAMLIT_SERVER_SCRIPT_HEALTH_CHECK_ENABLED": "false"}
    with streamlit_server(slice_cache, tmp_path / "server.log", environment) as (url, _):
        answer = warm(url)
    assert answer.startswith("the page's first run was not completed")
    assert "\n" not in answer


def test_no_server_is_said_and_the_command_fails(capsys):
    port = free_port()
    assert warm(f"http://127.0.0.1:{port}", timeout_s=1) == f"no server answered at http://127.0.0.1:{port} within 1 s"
    assert main(["--port", str(port), "--timeout", "1"]) == 1
    assert "no server answered" in capsys.readouterr().err
