"""`make run` starts the MCP server's HTTP transport beside the gateway and says where it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram_devstack.envfiles import read_env_file
from engram_devstack.paths import Layout
from engram_devstack.stack import Endpoints, Ports, Stack
from engram_devstack.supervisor import RunOptions, Supervisor

pytestmark = pytest.mark.unit


def supervisor(root: Path, options: RunOptions) -> Supervisor:
    layout = Layout(root)
    return Supervisor(layout, Stack(layout, Ports.from_environment()), options)


def test_run_env_names_the_mcp_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    running = supervisor(tmp_path, RunOptions(gateway_port=18080, mcp_port=18087))
    running._announce("ek_dev", "ek_ops")
    values = read_env_file(tmp_path / ".engram" / "run.env")
    assert values == {
        "ENGRAM_URL": "http://127.0.0.1:18080",
        "ENGRAM_API_KEY": "ek_dev",
        "ENGRAM_OPS_API_KEY": "ek_ops",
        "ENGRAM_MCP_URL": "http://127.0.0.1:18087/mcp",
    }
    assert "ENGRAM_MCP_URL=http://127.0.0.1:18087/mcp" in capsys.readouterr().out


def test_without_the_mcp_service_there_is_no_mcp_url(tmp_path: Path) -> None:
    running = supervisor(tmp_path, RunOptions(service_names=("gateway", "memory")))
    running._announce("ek_dev", "ek_ops")
    assert "ENGRAM_MCP_URL" not in read_env_file(tmp_path / ".engram" / "run.env")


def test_the_mcp_service_serves_http_against_this_gateway(tmp_path: Path) -> None:
    options = RunOptions(gateway_host="0.0.0.0", gateway_port=18080, mcp_port=18087)
    env = supervisor(tmp_path, options)._service_env(Endpoints("127.0.0.1:9092", "mongodb://x"))
    assert env["ENGRAM_MCP_TRANSPORT"] == "http"
    assert env["ENGRAM_MCP_PORT"] == "18087" and env["ENGRAM_MCP_HOST"] == "0.0.0.0"
    assert env["ENGRAM_MCP_GATEWAY_URL"] == "http://127.0.0.1:18080"
    assert options.mcp_url == "http://127.0.0.1:18087/mcp"
