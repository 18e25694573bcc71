"""The seal, through the real sandbox: hostile submissions read the hidden probe file and try to carry it back.

Each submission below is graded on the hidden probes of the add-numbers
fixture with a real backend. It reads ``probes.py`` from its job folder (the
file the runner writes the hidden probes to, beside ``solution.py``) and
pushes the text through one channel: exception text, an exception class
named after it, the traceback's source lines, stdout and stderr, warnings,
a returned string, dict keys, an array's shape and bytes, the exit code, a
signal, the time it takes. The candidate's view must contain no 40-character
stretch of the hidden probe file and no expected value (grader/seal.py),
and no number the submission chose. Where the full result (the coach's) can
carry the text, the test shows that it does, so a pass is not an accident of
a submission that never read anything.
"""

from __future__ import annotations

import json

import pytest

from grader import expected as expected_cache
from grader.feedback import TEMPLATES, candidate_view
from grader.seal import check_seal, leaker_source
from tests.helpers import add_numbers, grade

READ = """
import os, sys, numpy as np

def secret():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "probes.py")) as fh:
        return fh.read()
"""

CHANNELS: dict[str, str] = {
    "exception text": READ + "\ndef add(a, b):\n    raise ValueError(secret())\n",
    "exception class name": READ
    + "\ndef add(a, b):\n    name = ''.join(c for c in secret() if c.isalnum())[:80]\n    raise type(name, (Exception,), {})('x')\n",
    "traceback source lines": READ
    + """
import linecache

def add(a, b):
    path = os.path.abspath(__file__)
    text = secret()
    linecache.cache[path] = (len(text), None, [line + "\\n" for line in text.splitlines()] * 10, path)
    raise ValueError("see the line above")
""",
    "stdout and stderr of passing probes": READ + "\ndef add(a, b):\n    print(secret())\n    sys.stderr.write(secret())\n    return np.add(a, b)\n",
    "warnings": READ
    + "\nimport warnings\n\ndef add(a, b):\n    warnings.simplefilter('always')\n    warnings.warn(secret())\n    return a + b + 1\n",
    "a returned string": READ + "\ndef add(a, b):\n    return secret()\n",
    "dict keys": READ + "\ndef add(a, b):\n    text = secret()\n    return {text[i:i + 50]: 1 for i in range(0, 500, 50)}\n",
    "array shape": READ + "\ndef add(a, b):\n    return np.zeros(len(secret()), dtype=a.dtype)\n",
    "array bytes": READ + "\ndef add(a, b):\n    return np.frombuffer(secret().encode()[:4096], dtype=np.uint8)\n",
    "exit code": READ + "\ndef add(a, b):\n    os._exit(217 if 'default_rng' in secret() else 1)\n",
    "a signal": READ + "\nimport signal\n\ndef add(a, b):\n    os.kill(os.getpid(), signal.SIGSEGV if 'rng' in secret() else signal.SIGABRT)\n",
    "time taken": READ + "\nimport time\n\ndef add(a, b):\n    time.sleep(len(secret()) / 10000)\n    return a + b + 1\n",
}


def candidate_json(result) -> str:
    return json.dumps(candidate_view(result.to_dict()))


@pytest.mark.parametrize("channel", list(CHANNELS))
def test_a_hostile_submission_gets_none_of_the_hidden_probes_back(backend: str, channel: str) -> None:
    package = add_numbers()
    result = grade(CHANNELS[channel], backend=backend)
    problems, _ = check_seal(package, result.to_dict(), expected_cache.load(package.version, False) or {})
    assert problems == [], (channel, candidate_json(result))
    text = candidate_json(result)
    source = package.probe_source(False).decode()
    for distinctive in ("default_rng(1)", "rng.normal(size=(3, 5))", "np.array([4, 5, 6])", "keeps_float16(solution)"):
        assert distinctive in source and distinctive not in text, channel
    # The numbers are looked for outside the version: it is the grader's hash of the package, hex
    # digits the submission cannot choose, and "621" (the fixture's length) can be part of it.
    chosen = json.dumps({k: v for k, v in candidate_view(result.to_dict()).items() if k != "version"})
    for number in (str(len(source)), "217"):  # the length it read, the exit code it chose
        assert number not in chosen, (channel, number, chosen)
    assert all(p["duration_ms"] is None for p in candidate_view(result.to_dict())["probes"])


@pytest.mark.parametrize("channel", ["exception text", "traceback source lines"])
def test_the_same_text_does_reach_the_coaches_full_result(backend: str, channel: str) -> None:
    # What makes the test above mean something: the submission did read the file.
    result = grade(CHANNELS[channel], backend=backend)
    messages = "\n".join(p.message for p in result.probes)
    lines = [line.strip() for line in add_numbers().probe_source(False).decode().splitlines() if len(line.strip()) >= 20]
    assert any(line in messages for line in lines), (channel, messages)


def test_a_hidden_probes_messages_are_the_policys_templates(backend: str) -> None:
    result = grade(CHANNELS["exit code"], backend=backend)
    assert {p["message"] for p in candidate_view(result.to_dict())["probes"]} == {TEMPLATES["no_result"]}
    crashed = grade(CHANNELS["a signal"], backend=backend)
    assert {p["message"] for p in candidate_view(crashed.to_dict())["probes"]} == {"the probe's process crashed (killed by SIGSEGV)"}


def test_the_validation_leaker_reads_the_probes_and_leaks_nothing(backend: str) -> None:
    package = add_numbers()
    result = grade(leaker_source(package), backend=backend).to_dict()
    problems, reached = check_seal(package, result, expected_cache.load(package.version, False) or {})
    assert reached, "the leaker's text did not reach the full result: the seal was not tested"
    assert problems == []
