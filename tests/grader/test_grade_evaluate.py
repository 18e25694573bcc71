"""grader.grade: decode_submission and evaluate (pure: Executions are built by hand, no sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grader.errors import InvalidSubmission
from grader.execute import Execution, ProbeRun
from grader.feedback import candidate_view
from grader.grade import MAX_CODE_BYTES, GradeResult, decode_submission, evaluate
from grader.package_load import load_package_dir, package_from_files, read_package_files
from grader.verdicts import Verdict
from sandbox.runner.codec import TaggedArray

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "packages" / "demo" / "add-numbers"
PACKAGE = load_package_dir(FIXTURE)


def ta(values, dtype: str, source: str = "numpy") -> TaggedArray:
    return TaggedArray(np.asarray(values, dtype=dtype), dtype, source)


# Hidden probes of add-numbers: floats (values, weight 2, hints values),
# keeps_float16 (dtype, hints dtype), integers (values, exact, no hints).
FLOATS = np.arange(15, dtype=np.float64).reshape(3, 5) / 7  # note: element [0, 0] is 0.0
HIDDEN_EXPECTED = {
    "floats": ta(FLOATS, "float64"),
    "keeps_float16": ta([2, 2, 2], "float16"),
    "integers": [5, 7, 9],
}
PUBLIC_EXPECTED = {"small": ta([1, 2, 3, 4], "float32")}
WRONG = {
    "floats": ta(FLOATS + 1, "float64"),
    "keeps_float16": ta([2, 2, 2], "float64"),
    "integers": [5.0, 7.0, 9.0],
}


def run_ok(name: str, observation, **kw) -> ProbeRun:
    return ProbeRun(name, "ok", observation=observation, **kw)


def hidden_execution(overrides: dict[str, ProbeRun] | None = None, **flags) -> Execution:
    probes = {name: run_ok(name, value) for name, value in HIDDEN_EXPECTED.items()}
    probes.update(overrides or {})
    return Execution(probes=probes, **flags)


def grade_hidden(execution: Execution) -> GradeResult:
    return evaluate(PACKAGE, execution, HIDDEN_EXPECTED, public=False)


def by_name(result: GradeResult) -> dict:
    return {p.name: p for p in result.probes}


# ------------------------------------------------------------ decode_submission


def test_decode_submission_returns_utf8_bytes_for_str_and_bytes():
    assert decode_submission("def add(a, b):\n    return a + b  # é\n") == "def add(a, b):\n    return a + b  # é\n".encode()
    assert decode_submission(b"x = 1\n") == b"x = 1\n"
    assert decode_submission(bytearray(b"x = 1\n")) == b"x = 1\n"


def test_decode_submission_refuses_non_utf8_bytes():
    with pytest.raises(InvalidSubmission, match=r"not valid UTF-8 text \(invalid byte at position 4\)"):
        decode_submission(b"x = \xff\n")


def test_decode_submission_refuses_a_str_that_cannot_be_utf8():
    with pytest.raises(InvalidSubmission, match=r"not valid UTF-8 text \(bad character at position 5\)"):
        decode_submission("x = '\ud800'")


@pytest.mark.parametrize("code", ["", "   ", "\n\t\r\n ", b"", b" \n"])
def test_decode_submission_refuses_empty_or_whitespace_code(code):
    with pytest.raises(InvalidSubmission, match=r"^Your code is empty\.$"):
        decode_submission(code)


def test_decode_submission_refuses_nul_bytes():
    with pytest.raises(InvalidSubmission, match=r"^Your code contains a NUL byte; it is not a Python source file\.$"):
        decode_submission("x = 1\x00\n")
    with pytest.raises(InvalidSubmission, match="NUL byte"):
        decode_submission(b"\x00x = 1")


def test_decode_submission_size_limit_is_inclusive():
    at_limit = b"#" * MAX_CODE_BYTES
    assert decode_submission(at_limit) == at_limit
    with pytest.raises(InvalidSubmission, match=r"Your code is 256\.0 KiB; the limit is 256 KiB\."):
        decode_submission(b"#" * (MAX_CODE_BYTES + 1))


def test_decode_submission_counts_utf8_bytes_not_characters():
    # 'é' is two bytes: half the limit in characters is exactly the limit in bytes.
    assert len(decode_submission("é" * (MAX_CODE_BYTES // 2))) == MAX_CODE_BYTES
    with pytest.raises(InvalidSubmission, match="the limit is"):
        decode_submission("é" * (MAX_CODE_BYTES // 2) + "x")


# ------------------------------------------------------------ verdicts


def test_all_probes_passing_is_accepted_with_100():
    result = grade_hidden(hidden_execution())
    assert result.verdict == Verdict.ACCEPTED
    assert result.score == 100.0
    assert result.message == "3 of 3 probes passed"
    assert result.hints == []
    assert [p.status for p in result.probes] == ["accepted"] * 3
    assert all(p.passed and p.message == "" for p in result.probes)
    assert result.categories == {
        "values": {"score": 100.0, "passed": 2, "total": 2},
        "dtype": {"score": 100.0, "passed": 1, "total": 1},
    }
    assert (result.version, result.public) == (PACKAGE.version, False)


def test_some_probes_passing_is_partial_with_the_weighted_score():
    result = grade_hidden(hidden_execution({"keeps_float16": run_ok("keeps_float16", WRONG["keeps_float16"])}))
    assert result.verdict == Verdict.PARTIAL
    assert result.score == 75.0  # floats (weight 2) + integers (1) of 4
    assert result.message == "2 of 3 probes passed"
    probe = by_name(result)["keeps_float16"]
    assert (probe.passed, probe.status) == (False, "wrong_answer")
    assert probe.message == "result: dtype mismatch: expected float16, got float64"
    assert result.categories["dtype"] == {"score": 0.0, "passed": 0, "total": 1}


def test_no_probe_passing_on_wrong_values_is_wrong_answer():
    result = grade_hidden(hidden_execution({n: run_ok(n, v) for n, v in WRONG.items()}))
    assert result.verdict == Verdict.WRONG_ANSWER
    assert result.score == 0.0
    assert result.message == "0 of 3 probes passed"
    assert {p.status for p in result.probes} == {"wrong_answer"}
    floats = by_name(result)["floats"]
    assert floats.details["mismatches"] == 15
    assert "15 of 15 elements differ" in floats.message
    assert by_name(result)["integers"].message == "result[0]: expected 5, got 5.0"  # exact check


def test_a_syntax_error_fails_every_probe_without_checking():
    execution = Execution(syntax_error={"message": "invalid syntax", "line": 3, "offset": 5, "text": "def f(:"})
    result = grade_hidden(execution)
    assert result.verdict == Verdict.SYNTAX_ERROR
    assert result.score == 0.0
    assert result.message == "SyntaxError on line 3: invalid syntax"
    assert result.hints == []
    assert [p.status for p in result.probes] == ["syntax_error"] * 3
    assert {p.message for p in result.probes} == {"not run: the code does not compile"}
    assert result.categories["values"] == {"score": 0.0, "passed": 0, "total": 2}


def test_a_syntax_error_without_a_line_number():
    result = grade_hidden(Execution(syntax_error={"message": "unexpected EOF", "line": None}))
    assert result.message == "SyntaxError: unexpected EOF"


# ------------------------------------------------------------ runner statuses


@pytest.mark.parametrize(
    ("runner_status", "oom_killed", "verdict"),
    [
        ("error", False, Verdict.RUNTIME_ERROR),
        ("timeout", False, Verdict.TIME_LIMIT),
        ("memory", False, Verdict.MEMORY_LIMIT),
        ("killed", True, Verdict.MEMORY_LIMIT),
        ("killed", False, Verdict.RUNTIME_ERROR),
        ("output_limit", False, Verdict.OUTPUT_LIMIT),
        ("observation_limit", False, Verdict.OUTPUT_LIMIT),
        ("crashed", False, Verdict.RUNTIME_ERROR),
        ("no_result", False, Verdict.RUNTIME_ERROR),
        ("bad_observation", False, Verdict.RUNTIME_ERROR),
        ("not_run", False, Verdict.RUNTIME_ERROR),
        ("something-new", False, Verdict.RUNTIME_ERROR),
    ],
)
def test_runner_status_maps_to_a_verdict(runner_status, oom_killed, verdict):
    runs = {n: ProbeRun(n, runner_status, message="killed by SIGKILL") for n in HIDDEN_EXPECTED}
    result = grade_hidden(Execution(probes=runs, oom_killed=oom_killed))
    assert [p.status for p in result.probes] == [verdict.value] * 3
    assert result.verdict == verdict
    assert result.score == 0.0
    assert not any(p.passed for p in result.probes)


def test_an_exception_keeps_its_traceback_or_type_and_message_in_the_full_result():
    # The full result is the coaches' (and, for a public probe, the candidate's);
    # a hidden probe's candidate sees only the type and line (tests/grader/test_feedback.py).
    with_tb = ProbeRun(
        "floats", "error", exc_type="ValueError", message="bad",
        traceback='  File "solution.py", line 4, in add\n    raise ValueError("bad")\nValueError: bad\n',
    )  # fmt: skip
    without_tb = ProbeRun("integers", "error", exc_type="KeyError", message="'x'")
    result = grade_hidden(hidden_execution({"floats": with_tb, "integers": without_tb}))
    probes = by_name(result)
    assert probes["floats"].message == 'File "solution.py", line 4, in add\n    raise ValueError("bad")\nValueError: bad'
    assert probes["integers"].message == "KeyError: 'x'"
    assert probes["floats"].status == probes["integers"].status == "runtime_error"
    assert probes["floats"].details == {"runner_status": "error", "exc_type": "ValueError", "line": 4}
    seen = {p["name"]: p["message"] for p in candidate_view(result.to_dict())["probes"]}
    assert (seen["floats"], seen["integers"]) == ("raised ValueError at solution.py line 4", "raised KeyError")


def test_a_memory_error_exception_is_a_memory_limit():
    run = ProbeRun("floats", "error", exc_type="MemoryError", message="", traceback="MemoryError\n")
    assert by_name(grade_hidden(hidden_execution({"floats": run})))["floats"].status == "memory_limit"


def test_limit_messages():
    runs = {
        "floats": ProbeRun("floats", "timeout", message="time limit exceeded"),
        "keeps_float16": ProbeRun("keeps_float16", "killed", message="killed by SIGKILL"),
        "integers": ProbeRun("integers", "memory", message="MemoryError: the memory limit was reached"),
    }
    probes = by_name(grade_hidden(Execution(probes=runs, oom_killed=False)))
    assert probes["floats"].message == "time limit exceeded (3 s)"  # the package's probe_seconds
    assert probes["keeps_float16"].message == "killed by SIGKILL"
    assert probes["integers"].message == "the memory limit was reached"


def test_no_probe_passing_gives_the_most_severe_status():
    runs = {
        "floats": ProbeRun("floats", "error", exc_type="ValueError"),
        "keeps_float16": ProbeRun("keeps_float16", "timeout"),
        "integers": run_ok("integers", [0]),
    }
    assert grade_hidden(Execution(probes=runs)).verdict == Verdict.TIME_LIMIT
    runs["keeps_float16"] = ProbeRun("keeps_float16", "memory")
    assert grade_hidden(Execution(probes=runs)).verdict == Verdict.MEMORY_LIMIT
    runs["keeps_float16"] = run_ok("keeps_float16", WRONG["keeps_float16"])
    assert grade_hidden(Execution(probes=runs)).verdict == Verdict.RUNTIME_ERROR


def test_any_passing_probe_makes_a_failed_run_partial_whatever_the_failures():
    runs = {"keeps_float16": ProbeRun("keeps_float16", "timeout"), "integers": ProbeRun("integers", "memory")}
    result = grade_hidden(hidden_execution(runs))
    assert result.verdict == Verdict.PARTIAL
    assert result.score == 50.0


# ------------------------------------------------------------ probes with no result


def test_missing_probes_after_the_runner_died_are_runtime_errors():
    execution = Execution(probes={"floats": run_ok("floats", HIDDEN_EXPECTED["floats"])}, runner_died=True)
    result = grade_hidden(execution)
    probes = by_name(result)
    assert probes["floats"].status == "accepted"
    for name in ("keeps_float16", "integers"):
        assert probes[name].status == "runtime_error"
        assert "runner was killed" in probes[name].message
    assert result.verdict == Verdict.PARTIAL


def test_missing_probes_after_the_wall_clock_ran_out_are_time_limits():
    result = grade_hidden(Execution(probes={}, timed_out=True))
    assert result.verdict == Verdict.TIME_LIMIT
    for probe in result.probes:
        assert probe.status == "time_limit"
        assert probe.message == "the run reached its wall-clock limit before this probe finished"


def test_missing_probes_after_a_stream_overflow_are_output_limits():
    result = grade_hidden(Execution(probes={}, stream_overflow=True))
    assert result.verdict == Verdict.OUTPUT_LIMIT
    assert {p.message for p in result.probes} == {"the run produced more output than allowed"}


def test_a_missing_probe_without_an_explanation_did_not_run():
    result = grade_hidden(Execution(probes={}))
    assert result.verdict == Verdict.RUNTIME_ERROR
    assert {p.message for p in result.probes} == {"the probe did not run"}


# ------------------------------------------------------------ hints


def test_hints_come_from_the_failed_probes_tags_in_tier_order():
    # keeps_float16 fails (tag dtype): unlocks 'dtype' (tier 2) and 'near' (tier 3), not 'broadcast'.
    result = grade_hidden(hidden_execution({"keeps_float16": run_ok("keeps_float16", WRONG["keeps_float16"])}))
    assert [(h["id"], h["tier"]) for h in result.hints] == [("dtype", 2), ("near", 3)]
    assert result.hints[0] == {"id": "dtype", "tier": 2, "tags": ["values", "dtype"], "text": "Keep the input's dtype.", "probes": ["keeps_float16"]}


def test_each_hint_names_the_failing_probes_it_is_about_the_heaviest_first():
    # floats (weight 2, tag values) and keeps_float16 (weight 1, tag dtype) fail; 'dtype' has both tags.
    result = grade_hidden(hidden_execution({n: run_ok(n, WRONG[n]) for n in ("keeps_float16", "floats")}))
    assert [(h["id"], h["probes"]) for h in result.hints] == [
        ("broadcast", ["floats"]),
        ("dtype", ["floats", "keeps_float16"]),
        ("near", ["keeps_float16"]),
    ]


def test_a_values_failure_unlocks_the_values_hints():
    result = grade_hidden(hidden_execution({"floats": run_ok("floats", WRONG["floats"])}))
    assert [h["id"] for h in result.hints] == ["broadcast", "dtype"]


def test_every_failure_unlocks_every_matching_hint_once():
    result = grade_hidden(hidden_execution({n: run_ok(n, WRONG[n]) for n in HIDDEN_EXPECTED if n in WRONG}))
    assert [h["id"] for h in result.hints] == ["broadcast", "dtype", "near"]


def test_probes_that_ran_out_of_a_limit_unlock_no_hint():
    """An endless loop fails every probe alike: it says nothing about which idea is wrong (it once unlocked every
    numerics hint). A probe that raised did run, and unlocks its hints."""
    timed_out = grade_hidden(hidden_execution({n: ProbeRun(n, "timeout") for n in HIDDEN_EXPECTED}))
    assert timed_out.verdict == Verdict.TIME_LIMIT and timed_out.hints == []
    out_of_memory = grade_hidden(hidden_execution({"floats": ProbeRun("floats", "memory")}))
    assert out_of_memory.hints == []
    raised = grade_hidden(hidden_execution({"keeps_float16": ProbeRun("keeps_float16", "error", message="ValueError: no")}))
    assert by_name(raised)["keeps_float16"].status == "runtime_error"
    assert [h["id"] for h in raised.hints] == ["dtype", "near"]


def test_a_failed_probe_without_hint_tags_unlocks_nothing():
    result = grade_hidden(hidden_execution({"integers": run_ok("integers", [5, 7, 10])}))
    assert result.verdict == Verdict.PARTIAL
    assert result.hints == []


def test_passing_probes_unlock_nothing():
    assert grade_hidden(hidden_execution()).hints == []


# ------------------------------------------------------------ what public and hidden runs show


def test_a_public_run_includes_observation_expected_and_stdout():
    run = run_ok("small", ta([1, 2, 3, 5], "float32"), stdout="debug print\n", duration_ms=12)
    result = evaluate(PACKAGE, Execution(probes={"small": run}), PUBLIC_EXPECTED, public=True)
    [probe] = result.probes
    assert result.public is True
    assert probe.status == "wrong_answer"
    assert probe.stdout == "debug print\n"
    assert probe.duration_ms == 12
    assert probe.observation == {"dtype": "float32", "shape": [4], "values": [1.0, 2.0, 3.0, 5.0]}
    assert probe.expected == {"dtype": "float32", "shape": [4], "values": [1.0, 2.0, 3.0, 4.0]}
    assert probe.description == "Two small float32 arrays."


def test_a_public_run_shows_stdout_of_a_failed_probe_too():
    run = ProbeRun("small", "error", exc_type="ValueError", message="x", stdout="before the crash\n")
    [probe] = evaluate(PACKAGE, Execution(probes={"small": run}), PUBLIC_EXPECTED, public=True).probes
    assert probe.stdout == "before the crash\n"
    assert probe.observation is None


def test_a_hidden_run_withholds_observation_expected_and_stdout():
    runs = {n: run_ok(n, v, stdout=f"secret input of {n}\n") for n, v in WRONG.items()}
    result = grade_hidden(Execution(probes=runs))
    for probe in result.probes:
        assert probe.stdout == ""
        assert probe.observation is None
        assert probe.expected is None
    assert "secret input" not in json.dumps(result.to_dict())


def test_to_dict_is_json_with_the_verdict_as_a_string():
    result = grade_hidden(hidden_execution({"keeps_float16": run_ok("keeps_float16", WRONG["keeps_float16"])}))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["verdict"] == "partial"
    assert data["score"] == 75.0
    assert [p["name"] for p in data["probes"]] == ["floats", "keeps_float16", "integers"]
    assert data["version"] == PACKAGE.version


# ------------------------------------------------------------ custom checks


def package_with_checks(checks_source: str):
    files = read_package_files(FIXTURE)
    files["probes/hidden.py"] = files["probes/hidden.py"].replace(b'check="exact"', b'check="close_enough"')
    files["probes/checks.py"] = checks_source.encode()
    return package_from_files(files, checks_in_sandbox=False)  # the repository's fixture: its checks run here


def test_a_custom_check_decides_and_its_message_is_kept_for_coaches_but_not_shown_on_a_hidden_probe():
    package = package_with_checks(
        "def close_enough(actual, expected):\n"
        "    return (actual == expected, 'expected ' + str(expected) + ', off by ' + str(sum(actual) - sum(expected)))\n"
    )
    result = evaluate(package, hidden_execution({"integers": run_ok("integers", [5, 7, 10])}), HIDDEN_EXPECTED, public=False)
    integers = by_name(result)["integers"]
    assert (integers.passed, integers.status, integers.message) == (False, "wrong_answer", "expected [5, 7, 9], off by 1")
    # The coach's message names the expected value: the candidate gets a template.
    [seen] = [p for p in candidate_view(result.to_dict())["probes"] if p["name"] == "integers"]
    assert seen["message"] == "the result does not pass this probe's check"
    assert by_name(evaluate(package, hidden_execution(), HIDDEN_EXPECTED, public=False))["integers"].passed


def test_a_custom_check_that_raises_is_an_internal_error_not_the_candidates_fault(caplog):
    package = package_with_checks("def close_enough(actual, expected):\n    return 1 / 0\n")
    result = evaluate(package, hidden_execution(), HIDDEN_EXPECTED, public=False)
    integers = by_name(result)["integers"]
    assert integers.status == "internal_error"
    assert integers.message == "the check itself failed (ZeroDivisionError); this is the platform's fault"
    assert result.verdict == Verdict.PARTIAL


def test_a_check_that_raises_on_a_misshapen_observation_is_a_wrong_answer_not_a_platform_failure():
    # The check reads the observation as the statement says (a list of three
    # numbers) and accepts the reference's; a candidate who returns something
    # else must not be able to turn that into an internal error (and retries).
    package = package_with_checks("def close_enough(actual, expected):\n    return actual[2] == expected[2]\n")
    result = evaluate(package, hidden_execution({"integers": run_ok("integers", [])}), HIDDEN_EXPECTED, public=False)
    integers = by_name(result)["integers"]
    assert (integers.passed, integers.status) == (False, "wrong_answer")
    assert integers.message == ("the result does not have the structure this probe expects (IndexError: list index out of range)")
    [seen] = [p for p in candidate_view(result.to_dict())["probes"] if p["name"] == "integers"]
    assert seen["message"] == "the result does not pass this probe's check"


# ------------------------------------------------------------ bugs found while writing these tests


def test_to_dict_is_strict_json_when_an_expected_element_is_zero():
    nearly = ta(FLOATS + 1e-9, "float64")  # within tolerance everywhere, including at the 0.0 element
    result = grade_hidden(hidden_execution({"floats": run_ok("floats", nearly)}))
    assert by_name(result)["floats"].passed
    json.dumps(result.to_dict(), allow_nan=False)


def test_to_dict_is_json_for_a_public_complex_observation():
    value = ta([1 + 2j, 3 - 1j], "complex128")
    result = evaluate(PACKAGE, Execution(probes={"small": run_ok("small", value)}), {"small": value}, public=True)
    json.dumps(result.to_dict(), allow_nan=False)
