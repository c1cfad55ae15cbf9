"""Where hpulint lives: the one project URL every output and snippet points at."""
from __future__ import annotations

PROJECT_URL = "https://github.com/hpulint/hpulint"


def rule_page_url(code: str) -> str:
    return f"{PROJECT_URL}/blob/main/rules/{code}.md"
