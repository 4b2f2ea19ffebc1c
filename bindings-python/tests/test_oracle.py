"""The official clients are the oracle (issue 43, item 1).

Each pair of oracle_pairs.py goes through the pinned official client and through captcha-dlq (the
installed `captcha_dlq`), both against one loopback recorder (oracle_recorder.py). The test
compares what each submitted (the method or task type, every parameter name, the values as sent)
and the answer each read from the same solution. Every difference must be listed in `EXPLAINED`
(or be one of the differences by design in `BY_DESIGN`) with the official source that decides it;
every kind an official client sends that captcha-dlq refuses must be in `REFUSED` with its reason.

The table it measures is docs/providers.md's "Official clients as the oracle" section: with
CAPTCHA_DLQ_UPDATE_ORACLE=1 the test writes it; otherwise it fails when the committed table differs
from the measured one, so the docs never drift from what the clients send."""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from conftest import FAST, REPO, SUMMARY

# CI runs this module in a venv of its own (the clients' exact pins conflict with Selenium's) and sets
# CAPTCHA_DLQ_ORACLE_REQUIRED there, so a missing client fails instead of skipping.
if os.environ.get("CAPTCHA_DLQ_ORACLE_REQUIRED"):
    import anticaptchaofficial
    import capmonstercloudclient
    import capsolver
    import twocaptcha
else:
    twocaptcha = pytest.importorskip("twocaptcha")
    anticaptchaofficial = pytest.importorskip("anticaptchaofficial")
    capmonstercloudclient = pytest.importorskip("capmonstercloudclient")
    capsolver = pytest.importorskip("capsolver")

from oracle_pairs import KEY, PAIRS, PRESET, Pair  # noqa: E402
from oracle_recorder import Recorder, submitted  # noqa: E402

from captcha_dlq import Client, SolveFailed  # noqa: E402

DOC = REPO / "docs" / "providers.md"
BEGIN = "<!-- oracle:begin (written by bindings-python/tests/test_oracle.py; CAPTCHA_DLQ_UPDATE_ORACLE=1) -->"
END = "<!-- oracle:end -->"

#: Parameters that differ by design, per service: the client's own flags and identity, not the task.
BY_DESIGN: Dict[str, Dict[str, str]] = {
    "2captcha": {
        "key": "the account key (both send it; compared apart from the task)",
        "softId": "the official client's own developer id (4580); captcha-dlq sends the configured `soft_id`, as `soft_id`, only when set",
        "soft_id": "captcha-dlq's `soft_id` of the provider entry, sent only when set",
        "json": "captcha-dlq asks for JSON answers (`json=1`); the official client reads `OK|...` text",
        "header_acao": "captcha-dlq's own flag: CORS headers on the answer, for browser builds",
    },
    "anti-captcha": {},
    "capmonster": {},
    "capsolver": {},
}

#: Values the official client sends for fields the task leaves unset, which captcha-dlq omits.
EMPTY = (None, "", 0, False, [], {})

#: Differences that stay, each with the source that decides it: (service, kind, variant, parameter).
TWO_RECAPTCHA = "https://2captcha.com/2captcha-api#solving_recaptchav2_new"
EXPLAINED: Dict[Tuple[str, str, str, str], str] = {
    ("2captcha", "recaptcha_v2", "proxied", "version"): f"the client's default `version='v2'` (solver.py `recaptcha`); v2 is 2captcha's default when `version` is absent ({TWO_RECAPTCHA})",
    ("2captcha", "recaptcha_v2", "enterprise", "version"): f"the client's default `version='v2'` (solver.py `recaptcha`); v2 is 2captcha's default when `version` is absent ({TWO_RECAPTCHA})",
    ("2captcha", "recaptcha_v2", "proxied", "enterprise"): f"the client's default `enterprise=0` (solver.py `recaptcha`); 0 is 2captcha's default ({TWO_RECAPTCHA})",
    ("2captcha", "recaptcha_v3", "", "enterprise"): "the client's default `enterprise=0` (solver.py `recaptcha`); 0 is 2captcha's default (https://2captcha.com/2captcha-api#solving_recaptchav3)",
    ("anti-captcha", "image", "", "languagePool"): "the client's default `language_pool = \"en\"` (imagecaptcha.py); `en` is the service's default (https://anti-captcha.com/apidoc/task-types/ImageToTextTask)",
    ("anti-captcha", "recaptcha_v3", "enterprise", "minScore"): "the client keeps only 0.5, 0.7 or 0.9 and turns any other score into 0.9 (recaptchav3enterpriseproxyless.py `set_min_score`); captcha-dlq sends the score asked for: the service's doc lists 0.3, 0.7 and 0.9 (https://anti-captcha.com/apidoc/task-types/RecaptchaV3TaskProxyless)",
    ("anti-captcha", "geetest_v3", "", "version"): "the client always sends `version` (3 by default, geetestproxyless.py); 3 is the service's default (https://anti-captcha.com/apidoc/task-types/GeeTestTaskProxyless)",
    ("anti-captcha", "geetest_v3", "proxied", "version"): "the client always sends `version` (3 by default, geetestproxyon.py); 3 is the service's default (https://anti-captcha.com/apidoc/task-types/GeeTestTask)",
    ("anti-captcha", "amazon_waf", "", "waf_type"): "the client's own `waf_type = 'default'` (amazonproxyless.py); the service's AmazonTaskProxyless doc has no such key (https://anti-captcha.com/apidoc/task-types/AmazonTaskProxyless)",
    ("capmonster", "geetest_v3", "", "version"): "the client always sends `version` (3 by default, GeetestRequest.py); 3 is the service's default (https://docs.capmonster.cloud/docs/captchas/geetest-task)",
}

#: Kinds an official client sends that captcha-dlq does not send to that service, with the reason.
REFUSED: Dict[Tuple[str, str, str], str] = {
    ("capmonster", "altcha", ""): "CapMonster's Altcha is a CustomTask whose `metadata` holds the challenge's parts (`challenge`, `iterations`, `salt`, `signature`, AltchaCustomTaskRequest.py) and no challenge URL; captcha-dlq's Altcha carries the challenge as one JSON text or a URL, and parsing it into CapMonster's shape is not done yet",
}

def dropped_by_services() -> Dict[Tuple[str, str], str]:
    """The (service, kind) pairs whose kind file lists the service under `[dropped]`, with what the
    source shows and the source: an official client may still send them, but the service no longer
    takes the kind, so captcha-dlq refuses them by design. Read from core/kinds/<kind>.toml, the one
    place that decides it (core/build/model.rs reads the same tables)."""
    import tomllib  # 3.11+, as the oracle's venv; imported here so that older interpreters can collect the module

    out: Dict[Tuple[str, str], str] = {}
    for path in sorted((REPO / "core" / "kinds").glob("*.toml")):
        if path.name.startswith("_"):
            continue
        for service, entry in tomllib.loads(path.read_text()).get("dropped", {}).items():
            out[(service, path.stem)] = f"the service dropped the kind: {entry['note']} (<{entry['doc']}>)"
    return out


#: Kinds an official client sends that captcha-dlq has no kind for, with the reason (issue 43, item 7).
LACKING: Dict[Tuple[str, str, str], str] = {
    ("2captcha", "drag_and_drop", ""): "drag-and-drop (`method=drag_drop`, solver.py `drag_and_drop`) sends several images and answers moves; captcha-dlq has no kind for it",
    ("2captcha", "imperva", ""): "Imperva / Incapsula (`method=incapsula`, solver.py `imperva`) answers cookies for a proxy; captcha-dlq has no kind for it",
    ("anti-captcha", "antibot_cookie", ""): "AntiBotCookieTask (antibotcookietask.py) answers a whole browser session (cookies, localStorage, fingerprint); captcha-dlq has no kind for it (AntiGate templates cover the same ground)",
    ("capmonster", "imperva", ""): "Imperva (CustomTask class Imperva, ImpervaCustomTaskRequest.py); captcha-dlq has no kind for it",
    ("capmonster", "temu_cookie", ""): "Temu's cookie task (CustomTask class Temu, TemuCustomTaskRequest.py), unlike captcha-dlq's Temu image kind (2captcha's `temuimage`); captcha-dlq has no kind for it",
    ("capmonster", "recognition", ""): "the recognition ComplexImageTask (RecognitionComplexImageTaskRequest.py) takes a module name per site; captcha-dlq has no kind for it",
}


@pytest.fixture(scope="module")
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    yield rec
    rec.stop()


def _no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """The official clients wait seconds between polls; the recorder answers at once."""
    monkeypatch.setattr(time, "sleep", lambda s: None)
    real = asyncio.sleep

    async def quick(delay: float, *args: Any, **kw: Any) -> Any:
        return await real(0, *args, **kw)

    monkeypatch.setattr(asyncio, "sleep", quick)


def _loopback(monkeypatch: pytest.MonkeyPatch, base: str) -> None:
    """Points each official client's fixed https URL at the recorder."""
    import requests
    import twocaptcha.api
    from anticaptchaofficial import antinetworking

    host = base.split("://", 1)[1]

    class Requests:
        RequestException = requests.RequestException

        @staticmethod
        def post(url: str, **kw: Any) -> Any:
            return requests.post(url.replace(f"https://{host}", base), **kw)

        @staticmethod
        def get(url: str, **kw: Any) -> Any:
            return requests.get(url.replace(f"https://{host}", base), **kw)

    monkeypatch.setattr(twocaptcha.api, "requests", Requests)
    post = antinetworking.session.post
    monkeypatch.setattr(antinetworking.session, "post",
                        lambda url, **kw: post(url.replace("https://api.anti-captcha.com", base), **kw))


def run_official(pair: Pair, rec: Recorder, monkeypatch: pytest.MonkeyPatch) -> Tuple[Optional[Dict[str, Any]], Any]:
    rec.reset(pair.answer)
    with monkeypatch.context() as m:
        _no_sleep(m)
        _loopback(m, rec.base_url)
        answer = pair.official(rec.base_url)
    subs = rec.submits()
    assert len(subs) == 1, f"{pair.name}: the official client submitted {len(subs)} times: {rec.requests}"
    if pair.pick is not None and isinstance(answer, dict):
        answer = answer.get(pair.pick)
    return submitted(subs[0]), answer


def run_dlq(pair: Pair, rec: Recorder) -> Tuple[Optional[Dict[str, Any]], Any, Optional[str]]:
    """captcha-dlq's submission and answer, or the error that refused the task."""
    rec.reset(pair.answer)
    providers = [{"provider": PRESET[pair.service], "name": "oracle", "api_key": KEY, "base_url": rec.base_url}]
    client = Client(providers=providers, dlq="memory", **FAST)
    try:
        solution = client.solve(pair.task)
    except SolveFailed as e:
        return None, None, f"{type(e).__name__}: {e}"
    except Exception as e:  # InvalidTask and the like: refused before anything is sent
        return None, None, f"{type(e).__name__}: {e}"
    finally:
        client.close()
    subs = rec.submits()
    assert len(subs) == 1, f"{pair.name}: captcha-dlq submitted {len(subs)} times"
    return submitted(subs[0]), solution, None


def _canon(value: Any) -> str:
    """A value as it travels: form values are text; JSON values keep their JSON type."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def compare(pair: Pair, official: Dict[str, Any], dlq: Dict[str, Any]) -> Tuple[List[Tuple[str, str, str]], List[str]]:
    """The differences (parameter, official, captcha-dlq) and the parameters set aside by design."""
    design = BY_DESIGN[pair.service]
    diffs: List[Tuple[str, str, str]] = []
    aside: List[str] = []
    for name in sorted(set(official) | set(dlq)):
        if name in design:
            aside.append(name)
            continue
        a, b = official.get(name), dlq.get(name)
        if name not in dlq and a in EMPTY:
            continue
        if name not in official and b in EMPTY:
            continue
        if name in official and name in dlq and _canon(a) == _canon(b):
            continue
        diffs.append((name, "—" if name not in official else _canon(a), "—" if name not in dlq else _canon(b)))
    return diffs, aside


def read_values(solution: Any) -> List[str]:
    """What captcha-dlq read from the solution: its text, every answer value and field, and the
    values of a text that is the solution object (the whole answer of an object kind)."""
    values: List[Any] = [solution.text, *solution.answer.values(), *solution.fields.values()]
    try:
        whole = json.loads(solution.text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        values += list(whole.values())
    return [_canon(v) for v in values]


def _short(text: str, n: int = 60) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= n else text[: n - 1] + "…"


def measure(rec: Recorder, monkeypatch: pytest.MonkeyPatch) -> Dict[str, Any]:
    rows: List[Dict[str, Any]] = []
    errors: List[str] = []
    for pair in PAIRS:
        try:
            official, official_answer = run_official(pair, rec, monkeypatch)
        except Exception as e:  # the pair's official call is wrong: say which, after all have run
            errors.append(f"{pair.name}: the official client failed: {type(e).__name__}: {e}")
            continue
        assert official is not None, pair.name
        row: Dict[str, Any] = {"pair": pair, "official": official}
        if pair.task is None:
            row["refused"] = "captcha-dlq has no kind for it"
            rows.append(row)
            continue
        dlq, dlq_answer, error = run_dlq(pair, rec)
        if error is not None:
            row["refused"] = error
            rows.append(row)
            continue
        assert dlq is not None
        diffs, aside = compare(pair, official, dlq)
        if _canon(official_answer) not in read_values(dlq_answer):
            diffs.append(("(answer)", _canon(official_answer), _canon(dlq_answer.text)))
        row.update(diffs=diffs, aside=aside)
        rows.append(row)
    assert not errors, "\n".join(errors)
    return {"rows": rows}


def table(measured: Dict[str, Any]) -> Tuple[str, Dict[str, int], List[str]]:
    rows = measured["rows"]
    compared = [r for r in rows if "refused" not in r]
    identical = [r for r in compared if not r["diffs"]]
    problems: List[str] = []
    diff_lines: List[str] = []
    for r in compared:
        p: Pair = r["pair"]
        for name, a, b in r["diffs"]:
            reason = EXPLAINED.get((p.service, p.kind, p.variant, name))
            if reason is None:
                problems.append(f"unexplained: {p.name} `{name}`: official {a!r}, captcha-dlq {b!r}")
                reason = "**unexplained**"
            diff_lines.append(f"| {p.service} | {p.kind}{' (' + p.variant + ')' if p.variant else ''} | `{name}` | "
                              f"{_short(a)} | {_short(b)} | {reason} |")
    refused_lines: List[str] = []
    dropped = dropped_by_services()
    for r in rows:
        if "refused" not in r:
            continue
        p = r["pair"]
        key = (p.service, p.kind, p.variant)
        reason = LACKING.get(key) if p.task is None else REFUSED.get(key)
        if reason is None and p.task is not None and (p.service, p.kind) in dropped:
            reason = dropped[(p.service, p.kind)]
            if "no longer solves" not in r["refused"]:
                problems.append(f"{p.name}: the kind file drops it, but captcha-dlq refused it otherwise: {r['refused']}")
        if reason is None:
            problems.append(f"refused and not listed: {p.name}: {r['refused']}")
            reason = f"**not listed** ({_short(r['refused'], 120)})"
        sent = r["official"].get("type") or r["official"].get("method") or "?"
        refused_lines.append(f"| {p.service} | {p.kind}{' (' + p.variant + ')' if p.variant else ''} | `{sent}` | {reason} |")
    for key in [*REFUSED, *LACKING]:
        if not any("refused" in r and (r["pair"].service, r["pair"].kind, r["pair"].variant) == key for r in rows):
            problems.append(f"REFUSED or LACKING lists {key}, which captcha-dlq now sends: drop it")
    for key in EXPLAINED:
        if not any((r["pair"].service, r["pair"].kind, r["pair"].variant, d[0]) == key
                   for r in compared for d in r["diffs"]):
            problems.append(f"EXPLAINED lists {key}, which no longer differs: drop it")
    counts = {
        "pairs": len(rows),
        "compared": len(compared),
        "identical": len(identical),
        "explained": len(compared) - len(identical),
        "refused": len([r for r in rows if "refused" in r and r["pair"].task is not None
                        and (r["pair"].service, r["pair"].kind) not in dropped]),
        "dropped": len([r for r in rows if "refused" in r and r["pair"].task is not None
                        and (r["pair"].service, r["pair"].kind) in dropped]),
        "lacking": len([r for r in rows if r["pair"].task is None]),
    }
    services = sorted({r["pair"].service for r in rows})
    out = [BEGIN, "",
           f"Measured over {counts['pairs']} (service, kind) pairs that an official client sends: "
           f"{counts['compared']} compared, {counts['identical']} identical, {counts['explained']} with explained "
           f"differences, {counts['refused']} refused by captcha-dlq for that service, {counts['dropped']} of kinds "
           f"the service has dropped (the kind file's `[dropped]`), {counts['lacking']} of kinds "
           f"captcha-dlq does not have.", "",
           "Official clients, pinned: " + "; ".join(sorted({r["pair"].source.split(" ")[0] + " " + r["pair"].source.split(" ")[1]
                                                           for r in rows})) + ".", "",
           "Set aside by design (the client's own flags and identity, not the task):", ""]
    for s in services:
        for name, why in sorted(BY_DESIGN.get(s, {}).items()):
            out.append(f"- {s} `{name}`: {why}")
    out += ["- every service: a field the task leaves unset, which the official client sends empty (`\"\"`, `0`, "
            "`false`, `null`) and captcha-dlq omits.", "",
            "### Pairs", "", "| service | kind | official client sends | result |", "| --- | --- | --- | --- |"]
    for r in rows:
        p = r["pair"]
        sent = r["official"].get("type") or r["official"].get("method") or "?"
        if "refused" in r:
            if p.task is None:
                result = "no such kind"
            elif (p.service, p.kind) in dropped:
                result = "dropped by the service"
            else:
                result = "refused"
        else:
            result = "identical" if not r["diffs"] else f"{len(r['diffs'])} explained"
        out.append(f"| {p.service} | {p.kind}{' (' + p.variant + ')' if p.variant else ''} | `{sent}` ({p.source.split(' ', 2)[2]}) | {result} |")
    out += ["", "### Differences and the source that decides each", "",
            "| service | kind | parameter | official client | captcha-dlq | why |", "| --- | --- | --- | --- | --- | --- |"]
    out += diff_lines or ["| — | — | — | — | — | none |"]
    out += ["", "### Kinds an official client sends that captcha-dlq does not send to that service (issue 43, item 7)", "",
            "| service | kind | official client sends | reason |", "| --- | --- | --- | --- |"]
    out += refused_lines or ["| — | — | — | none |"]
    out += ["", END]
    return "\n".join(out), counts, problems


def test_official_clients_are_the_oracle(recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    measured = measure(recorder, monkeypatch)
    text, counts, problems = table(measured)
    SUMMARY.append(f"oracle: pairs compared {counts['compared']}, identical {counts['identical']}, "
                   f"explained {counts['explained']}, refused {counts['refused']}, dropped by the service "
                   f"{counts['dropped']}, kinds lacking {counts['lacking']} "
                   f"(of {counts['pairs']} pairs an official client sends)")
    doc = DOC.read_text()
    if BEGIN in doc:
        head, rest = doc.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        current = BEGIN + rest.split(END, 1)[0] + END
    else:
        head, tail, current = doc.rstrip("\n") + "\n\n## Official clients as the oracle (issue 43)\n\n", "\n", ""
    if os.environ.get("CAPTCHA_DLQ_UPDATE_ORACLE") == "1":
        DOC.write_text(head + text + tail)
    assert not problems, "\n".join(problems)
    assert counts["compared"] >= 60, counts
    assert counts["refused"] <= 3, counts
    assert current == text or os.environ.get("CAPTCHA_DLQ_UPDATE_ORACLE") == "1", (
        "docs/providers.md's oracle table differs from what was measured: rerun with CAPTCHA_DLQ_UPDATE_ORACLE=1 and commit"
    )

