"""aiocoap as the server in the server namespace (``coaplab emulate --server aiocoap``):
``python -m coaplab.stacks.tp_server CONFIG.json MAX_SECONDS``.

Every GET of ``/sensors`` (the path of coaplab's workloads) is answered with the workload's response: `response_bytes` bytes, or the
whole firmware resource, which aiocoap sends block-wise in the block size the client asks for
(RFC 7959). Its transmission parameters only matter for its own CON messages (none: responses
are piggybacked ACKs).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import aiocoap
from aiocoap import resource

SERVER = "192.0.2.1"


async def serve(cfg: dict, max_seconds: float) -> None:
    w = cfg["workload"]
    size = w["resource_bytes"] if w["kind"] == "firmware" else w["response_bytes"]
    body = bytes((i * 7 + 1) & 0xFF for i in range(size))

    class Any(resource.Resource):
        async def render_get(self, request):
            return aiocoap.Message(payload=body)

    site = resource.Site()
    site.add_resource(["sensors"], Any())  # the path every coaplab workload asks for
    ctx = await aiocoap.Context.create_server_context(site, bind=(SERVER, 5683), transports=["udp6"])
    try:
        await asyncio.sleep(max_seconds)
    finally:
        await ctx.shutdown()


def main(argv: list[str]) -> int:
    cfg = json.loads(Path(argv[0]).read_text())
    try:
        asyncio.run(serve(cfg, float(argv[1])))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
