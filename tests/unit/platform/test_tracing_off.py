"""With tracing off a service records no spans (an always-off sampler), yet ids still travel."""

from __future__ import annotations

import pytest

from engram_platform.settings import ServiceSettings
from engram_platform.tracing import setup_tracing

pytestmark = pytest.mark.unit


def test_tracing_off_records_no_span_but_keeps_a_trace_id() -> None:
    provider = setup_tracing("probe", ServiceSettings(tracing_enabled=False), install_global=False)
    with provider.get_tracer("probe").start_as_current_span("handle") as span:
        assert not span.is_recording()
        context = span.get_span_context()
        assert context.trace_id != 0 and not context.trace_flags.sampled


def test_tracing_on_records_spans() -> None:
    provider = setup_tracing(
        "probe",
        ServiceSettings(tracing_enabled=True, mongodb_uri="mongodb://127.0.0.1:9/"),
        install_global=False,
    )
    span = provider.get_tracer("probe").start_span("handle")
    assert span.is_recording() and span.get_span_context().trace_flags.sampled
    provider.shutdown()
