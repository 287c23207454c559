"""One call of the file, linked: what the enclosing code calls, trains, saves, folds, or serves.

Each call the walk kept is read once here and handed to the family that
records it (folds, inference sites, parameters, registrations, type
evidence); the callees and attribute calls of the enclosing function and
class are noted for every call.
"""

from __future__ import annotations

import ast

from ...core import catalogue
from ..resolve import API_ROOTS
from .fact_shapes import CAPTURES, is_true, trains
from .facts import Body
from .link_classes import ClassLinker
from .link_folds import FoldLinker
from .link_inference import InferenceLinker
from .link_parameters import ParameterLinker
from .link_refs import RefLookup
from .link_registry import RegistryLinker
from .walk_frame import Frame


class CallLinker:
    """Links the walk's call records, one call at a time, through the families that record what it says."""

    def __init__(
        self, lookup: RefLookup, classes: ClassLinker, registry: RegistryLinker, inference: InferenceLinker,
    ) -> None:
        self.lookup = lookup
        self.facts = lookup.facts
        self.classes = classes
        self.registry = registry
        self.inference = inference
        self.folds = FoldLinker(lookup)
        self.parameters = ParameterLinker(lookup)
        #: id of a body -> (the body, attribute names it calls outside any flag guard).
        self.unguarded: dict[int, tuple[Body, set[str]]] = {}

    def call(self, node: ast.Call, frame: Frame, guard: str = "") -> None:
        """Record one call; what it records under ``if <config>.<flag>:`` is marked with the flag (``flagged``)."""
        flag = self.folds.flag_at(node.lineno)
        if not flag:
            self._call_records(node, frame, guard)
            return
        lists = ("folds", "helper_calls", "method_calls")
        before = [len(getattr(self.facts, name)) for name in lists]
        self._call_records(node, frame, guard)
        for name, first in zip(lists, before):
            self.facts.flagged.extend((flag, name, i) for i in range(first, len(getattr(self.facts, name))))

    def _call_records(self, node: ast.Call, frame: Frame, guard: str = "") -> None:
        """Record what one call says: callees, training, a fold, a helper given a model, an inference site."""
        func = node.func
        names = self.lookup.names(func, frame)
        self._note_callees(node, names, frame, guard)
        first = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
        if trains(node, names):
            self.facts.training_names[frame.number] = frame.scope.qualname
        if names & catalogue.CHECKPOINT_SAVERS:
            self.facts.saving_scopes.add(frame.number)
        self.registry.registration(node, frame)
        self._note_config_dirs(node, names)
        self.classes.entry_type(node, func, frame)
        if frame.body is not None:
            self.parameters.note(node, names, frame, frame.body)
        if self.folds.record(node, names, first, frame):
            return
        receiver = self.lookup.model_refs(func.value, frame) if isinstance(func, ast.Attribute) else ()
        if names and not receiver:
            self.folds.model_arguments(node, names, frame)
        if isinstance(func, ast.Attribute) and self.inference.method_site(node, func, frame):
            return
        if names & CAPTURES and first is not None:
            self.inference.capture(node, func, first, frame)
            return
        if receiver and isinstance(func, ast.Attribute):
            # ``model.dec.remove_weight_norm()`` is about ``model.dec``: the member, where it is known.
            self.facts.method_calls.append((
                self.lookup.member_refs(func.value, frame) or receiver, func.attr, frame.number,
                (frame.class_qual or "") if frame.method else "", frame.method,
            ))
        self.inference.call_under_context(node, func, receiver, frame)

    def _note_config_dirs(self, node: ast.Call, names: frozenset[str]) -> None:
        """``initialize(config_path="../configs")``: where Hydra reads the configs ``instantiate`` builds from."""
        if names & catalogue.CONFIG_DIRECTORY_CALLS:
            self.facts.config_dirs.extend(
                k.value.value for k in node.keywords
                if k.arg in ("config_path", "config_dir") and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
            )

    def _note_callees(self, node: ast.Call, names: frozenset[str], frame: Frame, guard: str = "") -> None:
        """What the enclosing function and class call: the project names, and the attribute names."""
        func = node.func
        body = frame.body
        if isinstance(func, ast.Attribute) and not any(n.partition(".")[0] in API_ROOTS for n in names):
            self._note_method_call(node, func, frame, guard)
        if body is not None:
            body.callees.update(n for n in names if n.partition(".")[0] not in API_ROOTS)
        if frame.class_qual is not None and frame.class_qual in self.facts.classes:
            cls = self.facts.classes[frame.class_qual]
            cls.builds.update(names)
            if id(node) not in self.lookup.walker.direct_attr_calls:
                cls.loose.update(names)

    def _note_method_call(self, node: ast.Call, func: ast.Attribute, frame: Frame, guard: str) -> None:
        """``layer.remove_weight_norm()``: a method call (``nn.utils.remove_weight_norm(x)`` is torch's function).

        A call on ``self`` counts for this class and its subclasses; one on a
        known model for that model only (``method_calls``); one on anything else
        (a loop over ``modules()``, a parameter) may reach any class with a
        method of that name; one under a false-by-default flag only where a
        call passes the flag.
        """
        body = frame.body
        on_self = isinstance(func.value, ast.Name) and func.value.id == frame.self_name and frame.class_qual is not None
        if on_self and not guard and frame.method:
            qual = frame.class_qual or ""
            self.facts.method_calls.append(((("self", qual),), func.attr, frame.number, qual, frame.method))
        elif not self.lookup.model_refs(func.value, frame):
            if guard and frame.method:
                self.facts.guarded_calls.add((func.attr, frame.method, guard))
            else:
                self.facts.attribute_calls.add((func.attr, frame.method, frame.number))
        self.facts.flag_calls.update((func.attr, k.arg) for k in node.keywords if k.arg and is_true(k.value))
        if body is not None:
            body.calls.add(func.attr)
            if guard:
                body.guarded.add(func.attr)
            else:
                self.unguarded.setdefault(id(body), (body, set()))[1].add(func.attr)
