"""The CoAP stacks ``coaplab emulate`` and ``crossval`` can put at each end (docs/emulation.md).

A module of its own so that the command line can offer them as choices without importing
:mod:`coaplab.stacks.emulate` (subprocess, tempfile, secrets, …), which every other command would then
pay for at start-up (docs/performance.md, "Start-up").
"""

#: Endpoint kinds: which program plays the clients and which the server.
CLIENT_KINDS = ("coaplab", "libcoap", "aiocoap", "californium")
SERVER_KINDS = ("coaplab", "aiocoap", "libcoap", "californium")
