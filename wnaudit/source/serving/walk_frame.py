"""Where the serving-facts walk is at a node: the frame the walk records with each node it keeps for the linking."""

from __future__ import annotations

from dataclasses import dataclass

from ..resolve import Scope
from .facts import Body


@dataclass
class Frame:
    """Where the walk is: the resolver scope, the function number, the enclosing body and class."""

    scope: Scope
    number: int
    body: Body | None
    class_qual: str | None
    self_name: str | None
    method: str
    #: The inference context the code runs under (``torch.inference_mode()``), or "".
    under: str = ""
