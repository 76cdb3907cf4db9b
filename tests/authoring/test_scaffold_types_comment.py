"""The api scaffold's comment on a parameter's `type` names every type capc accepts."""

from __future__ import annotations

import re
from pathlib import Path

from compiler.authoring.scaffold import scaffold
from compiler.runtime.manifest.parameters import SCALAR_TYPES, STRUCTURED_TYPES


def test_the_type_comment_lists_every_parameter_type_arrays_and_objects_too() -> None:
    text = scaffold("api", "read_item", Path("capabilities/api/read_item.yaml")).text
    comment = next(line.split("#", 1)[1] for line in text.splitlines()
                   if re.match(r"\s+type: integer\s+#", line))
    named = set(re.findall(r"[a-z]+", comment))
    assert set(SCALAR_TYPES) | set(STRUCTURED_TYPES) <= named, comment
