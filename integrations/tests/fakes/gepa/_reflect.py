"""What the stand-ins share: the reflection prompt, and the new text taken from the reflection LM's answer."""

import json
import re
from typing import Any, Callable, Mapping, Sequence

PROMPTS: list = []  # every reflection prompt sent, for the tests to inspect


def propose(lm: Callable[[str], str], current: str, records: Sequence[Mapping[str, Any]]) -> str:
    """GEPA's default proposer, in short: the current text and the records in one prompt; the answer's last
    fenced block is the new text (the answer itself when it has none)."""
    prompt = "I provided an assistant with the following instructions:\n```\n%s\n```\n\nExamples with feedback:\n%s\n\nWrite new instructions within ``` blocks." % (
        current,
        "\n\n".join(json.dumps(r, indent=1, ensure_ascii=False) for r in records),
    )
    PROMPTS.append(prompt)
    answer = lm(prompt)
    blocks = re.findall(r"```[a-zA-Z]*\n(.*?)```", answer, re.S)
    return blocks[-1] if blocks else answer
