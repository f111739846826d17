"""An optional namer: a language model behind an OpenAI-compatible chat-completions endpoint names each topic.

Off by default (``BuildConfig.namer_url`` None) and never required: a build asks ``{url}/chat/completions`` once per
topic (a local llama.cpp or vLLM server, for example ``http://127.0.0.1:8080/v1``), with the topic's computed name,
subtitle, top terms and a few titles, and stores the answer beside the computed name (the topics table's
``llm_label``); the computed name stays the topic's ``label``, and ``topic-atlas rename`` wins over both. An
answer that is not a short plain phrase, and any error of the server, leaves the topic without one. The request
follows the OpenAI chat-completions format (https://platform.openai.com/docs/api-reference/chat/create): a JSON
body ``{"model", "messages", "temperature"}``, the answer in ``choices[0].message.content``.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TIMEOUT_S = 30.0
MAX_WORDS = 6
PROMPT = (
    "Name this cluster of research papers as an author would write a keyword: a noun phrase of one to four words, "
    "no punctuation, no quotes. Answer with the name only.\n"
    "Computed name: {name}\nDistinguishing terms: {subtitle}\nTop terms: {terms}\nSome titles:\n{titles}"
)
_MARKUP = re.compile(r"[\\$<>*_`#{}\[\]|]")


@dataclass(frozen=True)
class TopicBrief:
    """What the model is told of one topic."""

    name: str
    subtitle: str
    terms: Sequence[str]
    titles: Sequence[str]


def clean_answer(answer: str) -> str | None:
    """The answer's first line without quotes and a final full stop; None when it is empty, longer than MAX_WORDS
    words or holds markup."""
    lines = [line.strip() for line in str(answer).strip().splitlines() if line.strip()]
    if not lines:
        return None
    name = lines[0].strip().strip("\"'“”‘’").rstrip(".").strip()
    if not name or len(name.split()) > MAX_WORDS or _MARKUP.search(name):
        return None
    return name[:1].upper() + name[1:]


def ask_name(url: str, brief: TopicBrief, model: str = "default", timeout_s: float = TIMEOUT_S) -> str | None:
    """The model's name for one topic (see :func:`clean_answer`). Raises OSError (urllib.error.URLError included)
    or ValueError (an answer that is not chat-completions JSON)."""
    prompt = PROMPT.format(
        name=brief.name,
        subtitle=brief.subtitle,
        terms=", ".join(brief.terms[:10]),
        titles="\n".join(f"- {title}" for title in brief.titles[:8]),
    )
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0}).encode()
    request = urllib.request.Request(
        url.rstrip("/") + "/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 (the user's own URL)
        reply = json.loads(response.read().decode("utf-8"))
    try:
        return clean_answer(reply["choices"][0]["message"]["content"])
    except (KeyError, IndexError, TypeError) as error:
        raise ValueError(f"{url}: not a chat-completions answer ({error!r})") from error


def llm_names(url: str, briefs: Mapping[int, TopicBrief], model: str = "default") -> tuple[dict[int, str], list[str]]:
    """({topic: the model's name}, notes) for every topic of ``briefs``; the first failure of the server stops the
    asking and is one note (the build goes on with the computed names)."""
    names: dict[int, str] = {}
    for topic, brief in briefs.items():
        try:
            answer = ask_name(url, brief, model)
        except (OSError, ValueError) as error:
            return names, [f"the namer at {url} failed ({error}); topics keep their computed names"]
        if answer:
            names[topic] = answer
    return names, [f"the namer at {url} named {len(names)} of {len(briefs)} topics (column llm_label)"]
