"""Unknown keys with unprintable characters still give one-line errors."""

import pytest

from coaplab.describe.scenario import resolve
from coaplab.errors import ScenarioError


@pytest.mark.parametrize("raw, message", [
    ({"group": [{"name": "a", "x\ny": 1}]}, "group.a.x\\ny: unknown key; allowed: name, clients, workload, coap, tcp"),
    ({"link": {"buf\tfer": 1}}, "link.buf\\tfer: unknown key"),
])
def test_unknown_keys_are_escaped(raw, message):
    with pytest.raises(ScenarioError) as e:
        resolve(raw)
    assert "\n" not in str(e.value) and str(e.value).startswith(message)
