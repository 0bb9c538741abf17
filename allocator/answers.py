"""The API's answer, bounded like the page: the explanation of at most a slice of the requests,
each with at most a few why rows (the chosen ones always) and counts of the rows left out, and a
whole answer never more than ANSWER_MULTIPLE times its question plus ANSWER_FLOOR bytes.

Without bounds, 10,000 one-device claims over 100 devices (1.7 MB in) gave 200 MB of JSON: a
row for every device of every request. Here only the rows shown are turned into JSON; the rest
are counted. `?explainFrom=N&explainRequests=K&explainRows=R` asks for another slice (the answer's
`explanationBounds` says what was shown and how to ask for the next); `manage.py allocate -o
json --explain` still prints everything.

The answer is built where the run ran, inside the worker's time and memory limits
(`allocator.worker.answer_bounded`): a `Question` goes to the worker, and only the bounded JSON and
a `slim` outcome (its explanations cut to the rows the answer holds) come back, so the web process
never holds the whole explanation.

No Django here: `api_answer` takes the outcome and the question's size and returns the JSON bytes.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from allocator.engine.explanation import to_json
from allocator.engine.report import outcome_data

ANSWER_MULTIPLE = 10  # an answer is at most this many times its question's bytes ...
ANSWER_FLOOR = 256 * 1024  # ... plus this (a one-line question still gets its whole explanation)
MAX_REQUESTS = 100  # requests explained per answer (the page's panels show 100 claims)
MAX_ROWS = 64  # why rows per request besides the chosen ones (the page's why panel shows 64 a pool)
MAX_ROWS_ASKED = 1000  # the most rows per request a query may ask for
MAX_STEPS = 2000  # replay steps


@dataclass(frozen=True)
class ExplainSlice:
    start: int = 0  # the first request explained, counting every request of every claim in order
    requests: int = MAX_REQUESTS
    rows: int = MAX_ROWS
    steps: int = MAX_STEPS  # replay steps (not asked for: cut only to fit the answer's limit)


class SliceError(ValueError):
    pass


def slice_from_query(query) -> ExplainSlice:
    """`explainFrom`, `explainRequests`, `explainRows` from a query dict; SliceError with a message."""
    values = {}
    for key, field, low, high, default in (("explainFrom", "start", 0, None, 0),
                                           ("explainRequests", "requests", 1, MAX_REQUESTS, MAX_REQUESTS),
                                           ("explainRows", "rows", 0, MAX_ROWS_ASKED, MAX_ROWS)):
        text = query.get(key, "")
        if text == "":
            values[field] = default
            continue
        try:
            value = int(text)
        except ValueError:
            raise SliceError(f"{key} must be a whole number, not {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f"from {low} to {high}" if high is not None else f"{low} or more"
            raise SliceError(f"{key} must be {span}, not {value}")
        values[field] = value
    return ExplainSlice(**values)


@dataclass(frozen=True)
class Question:
    """What the API asks a worker for: the run, the slice of its explanation, the question's size
    (the answer's limit follows from it), and whether the outcome should come back with the rows
    the answer holds (for `?lang=`'s `text`, made in the web process)."""

    run: object  # RunSettings
    explain: ExplainSlice
    question_bytes: int
    with_rows: bool = False


def answer(outcome, question: Question) -> tuple[bytes, object]:
    """(the bounded JSON, the outcome cut to what that JSON holds): all a worker sends back."""
    body, shown = _fitted(outcome, question.question_bytes, question.explain)
    return body, slim(outcome, shown if question.with_rows else None)


def api_answer(outcome, *, question_bytes: int, explain: ExplainSlice = ExplainSlice()) -> bytes:
    """The answer's JSON (UTF-8), bounded. When the slice asked for would still make the answer
    larger than its limit, fewer rows and then fewer requests are explained (and the answer says
    so) until it fits; past that the explanation is left out with a note."""
    return _fitted(outcome, question_bytes, explain)[0]


def _fitted(outcome, question_bytes: int, explain: ExplainSlice) -> tuple[bytes, ExplainSlice]:
    """The answer's JSON and the slice it explains (no requests when the explanation was left out)."""
    limit = answer_limit(question_bytes)
    data = outcome_data(outcome, with_explanation=False)
    attempts = [explain, ExplainSlice(explain.start, explain.requests, explain.rows, 100),
                ExplainSlice(explain.start, explain.requests, 0, 100),
                ExplainSlice(explain.start, min(explain.requests, 10), 0, 0)]
    memo: dict = {}
    for attempt in attempts:
        body = _encode(_with_explanations(data, outcome, attempt, memo))
        if len(body) <= limit:
            return body, attempt
    data = dict(data)
    data["explanationBounds"] = {"leftOut": f"the explanation would make this answer larger than {limit:,} bytes "
                                            f"({ANSWER_MULTIPLE} times the question plus {ANSWER_FLOOR:,}); ask "
                                            "for fewer requests (explainRequests) or run `manage.py allocate -o "
                                            "json --explain`"}
    return _encode(data), ExplainSlice(explain.start, 0, 0, 0)


def slim(outcome, shown: ExplainSlice | None):
    """The outcome with its explanations (the run's and each pod's) cut to the requests and rows of
    `shown`, and without the sections and replay the answer already holds as JSON; without `shown`,
    no explanations at all. What stays is what `wording.api_text` reads."""
    pods = outcome.pods
    if pods is not None:
        pods = [dataclasses.replace(pod, explanation=_cut(pod.explanation, shown)) for pod in pods]
    return dataclasses.replace(outcome, explanation=_cut(outcome.explanation, shown), pods=pods)


def _cut(explanation, shown: ExplainSlice | None):
    if explanation is None or shown is None:
        return None
    if isinstance(explanation, dict):  # plain data, held by the answer whole (bounded_explanation)
        return explanation
    claims, index, end = [], 0, shown.start + shown.requests
    for claim in explanation.claims:
        requests = []
        for request in claim.requests:
            if shown.start <= index < end:
                requests.append(dataclasses.replace(request, candidates=_rows_shown(request, shown.rows)[0]))
            index += 1
        if requests:
            claims.append(dataclasses.replace(claim, requests=requests))
    return dataclasses.replace(explanation, claims=claims, trace=None, pools=[], counter_sets=[], capacity=[],
                               node_operations=[], compatibility=[], ignored_slices=[], device_map=[])


def answer_limit(question_bytes: int) -> int:
    return ANSWER_MULTIPLE * max(0, question_bytes) + ANSWER_FLOOR


def _encode(data: dict) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def _with_explanations(data: dict, outcome, explain: ExplainSlice, memo: dict) -> dict:
    out = {}
    for key, value in data.items():  # the keys of outcome_data(with_explanation=True), in order
        out[key] = value
        if key == "candidateNodes":  # outcome_data puts the explanation right after it
            out["explanation"], bounds = bounded_explanation(outcome.explanation, explain, memo)
            if bounds:
                out["explanationBounds"] = bounds
    if outcome.pods is not None:
        pods = []
        for pod, entry in zip(outcome.pods, data.get("pods", [])):
            entry = dict(entry)
            entry["explanation"], bounds = bounded_explanation(pod.explanation, explain, memo)
            if bounds:
                entry["explanationBounds"] = bounds
            pods.append(entry)
        out["pods"] = pods
    return out


def bounded_explanation(explanation, explain: ExplainSlice, memo: dict | None = None) -> tuple[dict | None, dict | None]:
    """(the explanation's JSON with only the slice's requests and rows, what was left out).
    `memo` keeps the parts no slice changes, between attempts at one answer."""
    memo = {} if memo is None else memo
    if explanation is None:
        return None, None
    if isinstance(explanation, dict):  # a pod's explanation may already be plain data
        return explanation, None
    total = sum(len(claim.requests) for claim in explanation.claims)
    end = min(total, explain.start + explain.requests)
    claims, index, rows_left_out = [], 0, 0
    for claim in explanation.claims:
        requests = []
        for request in claim.requests:
            if explain.start <= index < end:
                entry, left_out = _request(request, explain.rows)
                rows_left_out += left_out
                requests.append(entry)
            index += 1
        if requests:
            claims.append({"claim": claim.claim, "requests": requests})
    rest = memo.get(id(explanation))
    if rest is None:  # every section but the rows, as Explanation.as_dict writes them (its keys, in order)
        rest = memo[id(explanation)] = dataclasses.replace(explanation, claims=[], trace=None).as_dict()
    out = dict(rest)
    out["claims"] = claims
    out["trace"] = _replay(explanation.trace, explain.steps, memo)
    bounds = None
    trace = out.get("trace") or {}
    if total > end - explain.start or rows_left_out or explain.start or trace.get("cut"):
        bounds = {"requests": total, "from": explain.start, "shown": max(0, end - explain.start),
                  "rowsPerRequest": explain.rows, "rowsLeftOut": rows_left_out}
        if trace.pop("cut", False):
            bounds["traceStepsShown"] = trace["shown"]
        if end < total:
            bounds["next"] = f"?explainFrom={end}&explainRequests={explain.requests}&explainRows={explain.rows}"
    return out, bounds


def _rows_shown(request, rows: int) -> tuple[list, list]:
    """(the rows an answer shows, in search order: the picked ones and `rows` others; the others left out)."""
    others = [row for row in request.candidates if not row.picked]
    kept = {id(row) for row in others[:rows]}
    return [row for row in request.candidates if row.picked or id(row) in kept], others[rows:]


def _request(request, rows: int) -> tuple[dict, int]:
    shown, rest = _rows_shown(request, rows)
    entry = {
        "blocked": request.blocked, "request": request.request, "deviceClassName": request.device_class_name,
        "allocationMode": request.allocation_mode, "count": request.count,
        "subrequestChosen": request.subrequest_chosen, "chosen": to_json(request.chosen),
        "candidates": [row.as_dict() for row in shown],
    }
    if rest:
        counts: dict = {}
        for row in rest:
            key = str(to_json(row.code) or to_json(row.verdict))
            counts[key] = counts.get(key, 0) + 1
        entry["candidatesLeftOut"] = {"count": len(rest), "byCode": dict(sorted(counts.items()))}
    return entry, len(rest)


def _replay(trace, steps: int, memo: dict) -> dict | None:
    if trace is None:
        return None
    whole = memo.get(id(trace))
    if whole is None:
        whole = memo[id(trace)] = type(trace)(trace.strings, trace.steps[:MAX_STEPS], trace.total,
                                              min(trace.shown, MAX_STEPS)).as_dict()
    if len(whole["steps"]) <= steps:
        return dict(whole)
    return {"steps": whole["steps"][:steps], "total": whole["total"], "shown": steps, "cut": True}

