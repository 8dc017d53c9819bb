"""The checks of ``workload.kind = "lwm2m"`` (OMA LwM2M devices, docs/model.md "LwM2M devices"):
its keys are refused with other kinds, and the combinations the model does not take are refused
in one line before the engine runs (the engine refuses them too, in the same words)."""

from __future__ import annotations

from typing import Any

from ..errors import ScenarioError
from ..names import quote_value

#: The ``[workload]`` keys of the ``lwm2m`` kind.
LWM2M_KEYS = ("lwm2m_register_bytes", "lwm2m_lifetime_s", "lwm2m_queue_mode", "lwm2m_queue_window_s",
              "lwm2m_reads_per_day", "lwm2m_notify_period_s", "lwm2m_notify_bytes", "lwm2m_firmware_bytes",
              "lwm2m_firmware_at_s")


def check_lwm2m(w: dict[str, Any], coap: dict[str, Any], prefix: str = "") -> None:
    """Raise a one-line ``ScenarioError`` for an ``lwm2m`` key or combination that does not apply."""
    if w["kind"] != "lwm2m":
        for key in LWM2M_KEYS:
            if w.get(key) is not None:
                raise ScenarioError(f"{prefix}workload.{key}: only meaningful when workload.kind = \"lwm2m\" "
                                    f"(kind is {quote_value(w['kind'])})")
        return
    if w.get("duration_s") is None:
        raise ScenarioError(f"{prefix}workload.duration_s: required when workload.kind = \"lwm2m\" "
                            "(the devices' updates, reads and notifications run until then)")
    if w.get("request_bytes") is not None:
        raise ScenarioError(f"{prefix}workload.request_bytes: not allowed with workload.kind = \"lwm2m\" "
                            "(each uplink has its own size: lwm2m_register_bytes, lwm2m_notify_bytes)")
    if w.get("lwm2m_queue_window_s") is not None and w.get("lwm2m_queue_mode") is not True:
        raise ScenarioError(f"{prefix}workload.lwm2m_queue_window_s: only meaningful with workload.lwm2m_queue_mode = true")
    if w.get("lwm2m_firmware_at_s") is not None and w.get("lwm2m_firmware_bytes") is None:
        raise ScenarioError(f"{prefix}workload.lwm2m_firmware_at_s: only meaningful with workload.lwm2m_firmware_bytes "
                            "(the image to pull)")
    if coap.get("security", "none") != "none":
        raise ScenarioError(f"{prefix}coap.security: workload.kind = \"lwm2m\" runs without security; allowed: \"none\"")
