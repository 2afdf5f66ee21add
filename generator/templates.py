"""Prompt templates kept as data: one YAML file per template in ``generator/templates/`` with ``id``, ``version``,
``reply`` (the name of the reply schema, ``generator.schemas.REPLY_MODELS``), ``params`` (sampling parameters),
``system`` and ``user`` (``str.format`` fields, always including ``{input}``: the stage input as a JSON block).
A request names its template as ``id@version``; changing a prompt means raising its version, which makes every
request of that template new for the call cache. Also here: the topic pool and the random-session subjects."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from storage.errors import PrefvalError

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True)
class Template:
    """A versioned prompt template. ``ref`` is ``"id@version"``."""

    id: str
    version: int
    reply: str
    system: str
    user: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    def render(self, inp: Any, **fields: Any) -> tuple[dict[str, str], ...]:
        """The chat messages: the system text and the user text with ``fields`` filled in and ``{input}`` replaced
        by ``inp`` (a pydantic model or a dict) as an indented JSON block. Values are inserted as text (a brace in
        a value is never read as a field)."""
        data = inp.model_dump() if hasattr(inp, "model_dump") else inp
        block = "```json\n" + json.dumps(data, ensure_ascii=False, indent=2) + "\n```"
        try:
            user = self.user.format_map({**fields, "input": block})
        except KeyError as exc:
            raise PrefvalError(f"template {self.ref}: no value for the field {exc}") from None
        return ({"role": "system", "content": self.system.strip()}, {"role": "user", "content": user.strip()})


def _load_yaml(path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise PrefvalError(f"{path}: cannot read the template ({exc})") from None


@lru_cache(maxsize=None)
def load_template(name: str, directory: str | None = None) -> Template:
    """The template ``name`` from ``directory`` (default: the bundled ``generator/templates``).

    Raises PrefvalError naming the file and the missing or mistyped field."""
    path = Path(directory or TEMPLATE_DIR) / f"{name}.yaml"
    if not path.exists():
        raise PrefvalError(f"{path}: no such template")
    data = _load_yaml(path)
    if not isinstance(data, dict):
        raise PrefvalError(f"{path}: a template is a mapping of id, version, reply, system, user")
    for key, typ in (("id", str), ("version", int), ("reply", str), ("system", str), ("user", str)):
        if not isinstance(data.get(key), typ):
            raise PrefvalError(f"{path}: field '{key}': expected {typ.__name__}")
    if "{input}" not in data["user"]:
        raise PrefvalError(f"{path}: field 'user': the text must contain {{input}}")
    return Template(id=data["id"], version=data["version"], reply=data["reply"], system=data["system"],
                    user=data["user"], params=dict(data.get("params") or {}))


@lru_cache(maxsize=None)
def topic_pool(path: str | None = None) -> tuple[str, ...]:
    """Every topic of the pool as "Area: Subtopic", in file order (default: RealPref's 7 areas, 37 subtopics)."""
    p = Path(path) if path else TEMPLATE_DIR / "topics.yaml"
    data = _load_yaml(p)
    if not isinstance(data, dict) or not all(isinstance(v, list) and v for v in data.values()):
        raise PrefvalError(f"{p}: a topic pool maps each area to a list of subtopics")
    return tuple(f"{area}: {sub}" for area, subs in data.items() for sub in subs)


@lru_cache(maxsize=None)
def random_subjects(path: str | None = None) -> tuple[str, ...]:
    """Subjects for random sessions (default: the bundled list)."""
    p = Path(path) if path else TEMPLATE_DIR / "random_subjects.yaml"
    data = _load_yaml(p)
    if not isinstance(data, list) or not data or not all(isinstance(x, str) for x in data):
        raise PrefvalError(f"{p}: expected a list of subjects")
    return tuple(data)
