"""grader.feedback: what a candidate sees of a grading (pure: Executions are built by hand, no sandbox).

The hostile runs below put a secret into every field a sandbox can fill
(exception text and type, traceback, printed output, observation strings,
keys, shapes and values, exit codes, crash messages) and the candidate's view
of the hidden probes must not contain it. tests/sandbox/test_seal.py does the
same through a real sandbox.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grader.execute import Execution, ProbeRun
from grader.feedback import (
    EXCEPTION_NAMES,
    RATIO_ABOVE,
    TEMPLATES,
    candidate_probe,
    candidate_progress,
    candidate_view,
    failure_details,
    hidden_message,
)  # fmt: skip
from grader.grade import GradeResult, evaluate
from grader.package_load import load_package_dir, package_from_files, read_package_files
from sandbox.runner.codec import TaggedArray

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "packages" / "demo" / "add-numbers"
PACKAGE = load_package_dir(FIXTURE)
SECRET = "s3cr3t-hidden-input-4242"


def ta(values, dtype: str, source: str = "numpy") -> TaggedArray:
    return TaggedArray(np.asarray(values, dtype=dtype), dtype, source)


FLOATS = np.arange(15, dtype=np.float64).reshape(3, 5) / 7 + 1
EXPECTED = {"floats": ta(FLOATS, "float64"), "keeps_float16": ta([2, 2, 2], "float16"), "integers": [5, 7, 9]}


def graded(runs: dict[str, ProbeRun], *, public: bool = False, package=PACKAGE, expected=EXPECTED) -> GradeResult:
    full = {name: ProbeRun(name, "ok", observation=value) for name, value in expected.items()}
    full.update(runs)
    return evaluate(package, Execution(probes=full), expected, public=public)


def seen(result: GradeResult) -> dict[str, dict]:
    return {p["name"]: p for p in candidate_view(result.to_dict())["probes"]}


def as_text(result: GradeResult) -> str:
    return json.dumps(candidate_view(result.to_dict()))


# ------------------------------------------------------------ public probes: everything


def test_a_public_probe_shows_message_observation_expected_and_stdout():
    run = ProbeRun("small", "ok", observation=ta([1, 2, 3, 5], "float32"), stdout="debug\n", duration_ms=7)
    result = evaluate(PACKAGE, Execution(probes={"small": run}), {"small": ta([1, 2, 3, 4], "float32")}, public=True)
    [probe] = candidate_view(result.to_dict())["probes"]
    assert probe["message"] == result.probes[0].message and "expected 4, got 5" in probe["message"]
    assert probe["stdout"] == "debug\n"
    assert probe["observation"]["values"] == [1.0, 2.0, 3.0, 5.0]
    assert probe["expected"]["values"] == [1.0, 2.0, 3.0, 4.0]
    assert probe["duration_ms"] == 7


def test_a_public_probe_shows_the_candidates_own_traceback():
    run = ProbeRun("small", "error", exc_type="ValueError", message="boom", traceback='  File "solution.py", line 2, in add\nValueError: boom\n')
    result = evaluate(PACKAGE, Execution(probes={"small": run}), {"small": ta([1], "float32")}, public=True)
    assert candidate_view(result.to_dict())["probes"][0]["message"].endswith("ValueError: boom")


# ------------------------------------------------------------ hidden probes: templates only


def test_a_hidden_probe_shows_no_expected_value_but_says_which_property_failed():
    probes = seen(graded({"keeps_float16": ProbeRun("keeps_float16", "ok", observation=ta([2, 2, 2], "float64"))}))
    assert probes["keeps_float16"]["message"] == "result: the array does not have the dtype this probe expects"
    assert probes["keeps_float16"]["status"] == "wrong_answer"
    assert "expected" not in probes["keeps_float16"] or probes["keeps_float16"].get("expected") is None
    assert probes["floats"]["message"] == ""


def test_a_hidden_array_failure_gives_the_worst_index_and_a_band_of_its_error():
    wrong = FLOATS.copy()
    wrong[1, 3] += 0.5  # default float64 tolerance ~1e-7: far over
    probes = seen(graded({"floats": ProbeRun("floats", "ok", observation=ta(wrong, "float64"))}))
    message = probes["floats"]["message"]
    assert message == f"result: the values differ; the worst element at index [1, 3] is off by {RATIO_ABOVE} what its tolerance allows"
    assert f"{wrong[1, 3]:.6g}" not in message and f"{FLOATS[1, 3]:.6g}" not in message


@pytest.mark.parametrize(
    ("ratio", "band"),
    [(1.5, "up to 2 times"), (7.0, "2 to 10 times"), (50.0, "10 to 100 times"), (5000.0, "100 to 10,000 times"), (1e9, RATIO_ABOVE)],
)
def test_an_errors_size_is_shown_in_coarse_bands_only(ratio, band):
    probe = {"status": "wrong_answer", "details": {"failure": "float", "path": ["loss"], "error_ratio": ratio}}
    assert hidden_message(probe) == f"result['loss']: the value is off by {band} what its tolerance allows"


def test_an_exact_integer_failure_gives_the_first_wrong_index_only():
    probes = seen(graded({"integers": ProbeRun("integers", "ok", observation=[5, 7, 10])}))
    assert probes["integers"]["message"] == "result[2]: the value is wrong"
    assert "9" not in probes["integers"]["message"] and "10" not in probes["integers"]["message"]


def test_a_shape_failure_names_neither_shape():
    probes = seen(graded({"floats": ProbeRun("floats", "ok", observation=ta(np.zeros((4, 7)), "float64"))}))
    assert probes["floats"]["message"] == "result: the array does not have the shape this probe expects"


def test_a_hidden_probe_has_no_duration_stdout_observation_or_expected():
    run = ProbeRun("floats", "ok", observation=ta(FLOATS, "float64"), duration_ms=1234, stdout=SECRET)
    [probe] = [p for p in candidate_view(graded({"floats": run}).to_dict())["probes"] if p["name"] == "floats"]
    assert probe["duration_ms"] is None
    assert not {"stdout", "observation", "expected", "details"} & set(probe)


def test_a_passed_hidden_custom_check_does_not_repeat_its_message():
    # A "find the X" check's success message names the answer.
    package = package_with_check("def answer(actual, expected):\n    return actual == expected, 'found ' + repr(expected)\n")
    result = graded({}, package=package)
    assert result.probes[2].message == "found [5, 7, 9]"
    assert seen(result)["integers"]["message"] == ""


def package_with_check(source: str):
    files = read_package_files(FIXTURE)
    files["probes/hidden.py"] = files["probes/hidden.py"].replace(b'check="exact"', b'check="answer"')
    files["probes/checks.py"] = source.encode()
    return package_from_files(files, checks_in_sandbox=False)  # the repository's fixture: its checks run here


def test_a_failed_hidden_custom_check_says_only_that_it_failed():
    package = package_with_check("def answer(actual, expected):\n    return False, f'the answer is {expected!r}, you said {actual!r}'\n")
    result = graded({"integers": ProbeRun("integers", "ok", observation=[SECRET])}, package=package)
    assert "[5, 7, 9]" in result.probes[2].message  # the coach sees it
    assert seen(result)["integers"]["message"] == TEMPLATES["check"]
    assert SECRET not in as_text(result) and "[5, 7, 9]" not in as_text(result)


def test_a_custom_check_reusing_the_standard_comparison_gets_its_template():
    package = package_with_check(
        "from grader.checks import check\n\ndef answer(actual, expected):\n    return check(actual, expected, mode='exact')\n"
    )
    result = graded({"integers": ProbeRun("integers", "ok", observation=[5, 8, 9])}, package=package)
    assert seen(result)["integers"]["message"] == "result[1]: the value is wrong"


# ------------------------------------------------------------ hostile channels on hidden probes


HOSTILE_RUNS = {
    "exception text": ProbeRun("floats", "error", exc_type="RuntimeError", message=SECRET, traceback=f"RuntimeError: {SECRET}\n"),
    "exception class name": ProbeRun("floats", "error", exc_type=SECRET.replace("-", "_"), message="", traceback=""),
    "traceback text": ProbeRun(
        "floats", "error", exc_type="ValueError", traceback=f'  File "solution.py", line 3, in add\n    {SECRET}\nValueError\n'
    ),
    "printed output": ProbeRun("floats", "ok", observation=ta(FLOATS, "float64"), stdout=SECRET),
    "printed output of a failure": ProbeRun("floats", "error", exc_type="ValueError", stdout=SECRET),
    "observation string": ProbeRun("integers", "ok", observation=[5, 7, SECRET]),
    "observation dict keys": ProbeRun("integers", "ok", observation={SECRET: 1}),
    "observation nested keys": ProbeRun("integers", "ok", observation=[5, 7, {SECRET: SECRET}]),
    "array shape": ProbeRun("floats", "ok", observation=ta(np.zeros((4242, 1)), "float64")),
    "array values": ProbeRun("floats", "ok", observation=ta(np.full((3, 5), 4242.4242), "float64")),
    "exit code": ProbeRun("floats", "no_result", message="the process exited with code 42 before returning a result"),
    "crash message": ProbeRun("floats", "crashed", message=f"killed by SIGSEGV {SECRET}"),
    "bad observation": ProbeRun("floats", "bad_observation", message=f"the result could not be read: cannot encode {SECRET}"),
    "warning": ProbeRun("floats", "ok", observation=ta(FLOATS, "float64"), stdout=f"UserWarning: {SECRET}\n"),
    "timeout message": ProbeRun("floats", "timeout", message=f"time limit exceeded {SECRET}"),
    "memory message": ProbeRun("floats", "memory", message=f"MemoryError: {SECRET}"),
    "memory error": ProbeRun("floats", "error", exc_type="MemoryError", message=SECRET, traceback=f"MemoryError: {SECRET}\n"),
    "output limit": ProbeRun("floats", "output_limit", message=f"printed more than {SECRET}"),
    "settings report": ProbeRun("floats", "settings_changed", message=f"the calls of this probe left {SECRET} (was 1, now 2)"),
}


@pytest.mark.parametrize("channel", list(HOSTILE_RUNS))
def test_nothing_the_candidates_code_controls_reaches_the_view_of_a_hidden_probe(channel: str):
    run = HOSTILE_RUNS[channel]
    result = graded({run.name: run})
    text = as_text(result)
    for secret in (SECRET, SECRET.replace("-", "_"), "4242", " 42 ", "code 42"):
        assert secret not in text, (channel, text)


def test_a_public_view_of_the_same_runs_shows_them():
    # The contrast that makes the test above meaningful: the same fields are shown on a public probe.
    run = ProbeRun("small", "error", exc_type="RuntimeError", message=SECRET, traceback=f"RuntimeError: {SECRET}\n", stdout=SECRET)
    result = evaluate(PACKAGE, Execution(probes={"small": run}), {"small": ta([1], "float32")}, public=True)
    assert SECRET in candidate_view(result.to_dict())["probes"][0]["message"]
    assert candidate_view(result.to_dict())["probes"][0]["stdout"] == SECRET


def test_expected_values_of_a_hidden_probe_never_reach_its_view():
    expected = {**EXPECTED, "integers": ["inline", "fold-constants", 123456789]}
    wrong = ProbeRun("integers", "ok", observation=["inline", "dce", 1])
    text = as_text(graded({"integers": wrong}, expected=expected))
    assert "fold-constants" not in text and "123456789" not in text and "dce" not in text


def test_a_dict_key_on_the_path_is_one_the_candidates_dict_had_too():
    # Keys only show on a path when both dicts have exactly the same keys.
    expected = {**EXPECTED, "integers": {"grad_w": [1.0, 2.0]}}
    run = ProbeRun("integers", "ok", observation={"grad_w": [1.0, 3.0]})
    assert seen(graded({"integers": run}, expected=expected))["integers"]["message"] == "result['grad_w'][1]: the value is wrong"  # check="exact"


# ------------------------------------------------------------ runtime failures


def test_an_exception_is_named_only_from_the_known_vocabulary():
    assert "ValueError" in EXCEPTION_NAMES and "InvalidArgumentError" in EXCEPTION_NAMES and "OutOfMemoryError" in EXCEPTION_NAMES
    made_up = ProbeRun("floats", "error", exc_type="HiddenAnswerIs_inline", traceback='  File "solution.py", line 9, in add\nX\n')
    assert seen(graded({"floats": made_up}))["floats"]["message"] == "raised an exception at solution.py line 9"


def test_the_line_is_the_last_frame_in_the_candidates_file():
    traceback = '  File "solution.py", line 12, in add\n    helper()\n  File "solution.py", line 5, in helper\n    raise KeyError\nKeyError\n'
    assert failure_details("error", "KeyError", traceback, "") == {"runner_status": "error", "exc_type": "KeyError", "line": 5}
    assert failure_details("error", "KeyError", "KeyError\n", "") == {"runner_status": "error", "exc_type": "KeyError"}


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (ProbeRun("floats", "crashed", message="killed by SIGSEGV: a crash in native code"), "the probe's process crashed (killed by SIGSEGV)"),
        (ProbeRun("floats", "crashed", message="the probe did not run"), "the probe's process crashed"),
        (ProbeRun("floats", "no_result", message="exited with code 3"), TEMPLATES["no_result"]),
        (ProbeRun("floats", "bad_observation", message="nope"), TEMPLATES["bad_observation"]),
        (ProbeRun("floats", "timeout"), TEMPLATES["time_limit"]),
        (ProbeRun("floats", "stopped", message="not run: an earlier probe ran out of its time"), TEMPLATES["stopped"]),
        (ProbeRun("floats", "memory"), TEMPLATES["memory_limit"]),
        (ProbeRun("floats", "output_limit"), TEMPLATES["output_limit"]),
    ],
)
def test_every_runner_outcome_has_its_template(run: ProbeRun, message: str):
    assert seen(graded({"floats": run}))["floats"]["message"] == message


def test_a_syntax_error_is_shown_because_it_is_the_candidates_own_source_compiled_before_anything_ran():
    execution = Execution(syntax_error={"message": "invalid syntax", "line": 3, "offset": 5, "text": "def f(:"})
    view = candidate_view(evaluate(PACKAGE, execution, EXPECTED, public=False).to_dict())
    assert view["message"] == "SyntaxError on line 3: invalid syntax"
    assert {p["message"] for p in view["probes"]} == {TEMPLATES["not_run"]}


def test_a_result_stored_before_the_policy_existed_still_gets_a_template():
    # No details: a message written by the old grader, full of candidate text.
    old = {"name": "floats", "status": "runtime_error", "passed": False, "message": f"Traceback\nValueError: {SECRET}", "details": {}}
    assert candidate_probe(old, public=False)["message"] == TEMPLATES["runtime_error"]
    old_wrong = {**old, "status": "wrong_answer", "message": "expected 5, got 6"}
    assert candidate_probe(old_wrong, public=False)["message"] == TEMPLATES["check"]


def test_the_view_leaves_out_timings():
    result = graded({"keeps_float16": ProbeRun("keeps_float16", "timeout")}).to_dict()
    result["timings"] = {"total_ms": 5}
    assert "timings" not in candidate_view(result)


@pytest.mark.parametrize("public", [False, True])
def test_no_hint_text_goes_out_with_a_result_of_any_tier(public: bool):
    """Hints are shown on request only: the view names which unlocked (id, tier, tags), never what they say."""
    wrong = {
        "floats": ProbeRun("floats", "ok", observation=ta(FLOATS + 1, "float64")),
        "keeps_float16": ProbeRun("keeps_float16", "ok", observation=ta([2, 2, 2], "float64")),
    }
    result = graded(wrong).to_dict()
    if public:  # the same hints on a Run's result
        result = {**result, "public": True}
    texts = [h["text"] for h in result["hints"]]
    assert {h["tier"] for h in result["hints"]} == {1, 2, 3} and all(texts)
    view = candidate_view(result)
    assert [(h["id"], h["tier"]) for h in view["hints"]] == [("broadcast", 1), ("dtype", 2), ("near", 3)]
    assert all(set(h) == {"id", "tier", "tags", "probes"} for h in view["hints"])
    assert [h["probes"] for h in view["hints"]] == [["floats"], ["floats", "keeps_float16"], ["keeps_float16"]]
    assert not any(text in json.dumps(view) for text in texts)


PUBLIC_EXPECTED = {"small": ta([1, 2, 3, 4], "float32")}


def test_a_public_probe_shows_its_structured_diff_and_a_hidden_one_does_not():
    hidden = graded({"floats": ProbeRun("floats", "ok", observation=ta(FLOATS + 1, "float64"))}).to_dict()
    assert hidden["probes"][0]["diff"] is None  # never computed for a hidden probe
    hidden["probes"][0]["diff"] = {"tree": {"received": SECRET}}  # and never passed on, were one stored
    assert "diff" not in seen_dict(hidden)["floats"] and SECRET not in json.dumps(candidate_view(hidden))
    wrong = {"small": ProbeRun("small", "ok", observation=ta([1, 2, 0, 4], "float32"))}
    diff = seen(graded(wrong, public=True, expected=PUBLIC_EXPECTED))["small"]["diff"]
    assert diff["received"] == diff["expected"] == "numpy float32 array, shape (4,)"
    assert diff["tree"]["first"] == [{"index": [2], "received": "0.0", "expected": "3.0", "equal_before": 2}]


def test_a_public_probe_that_raised_shows_its_expected_value_and_a_hidden_one_does_not():
    run = ProbeRun("small", "error", exc_type="ValueError", message="boom", traceback="ValueError: boom")
    public = seen(graded({"small": run}, public=True, expected=PUBLIC_EXPECTED))["small"]
    assert public["observation"] is None and public["expected"] == {"dtype": "float32", "shape": [4], "values": [1.0, 2.0, 3.0, 4.0]}
    assert public["diff"]["expected"] == "numpy float32 array, shape (4,)"
    assert public["diff"]["expected_preview"] == "float32 array (4,) [1.0, 2.0, 3.0, 4.0]"
    raised = {"floats": ProbeRun("floats", "error", exc_type="ValueError", message="boom", traceback="ValueError: boom")}
    hidden = graded(raised).to_dict()
    assert hidden["probes"][0]["expected"] is None and hidden["probes"][0]["diff"] is None
    assert set(seen_dict(hidden)["floats"]) == {"name", "category", "weight", "passed", "status", "message", "description", "duration_ms"}


def seen_dict(result: dict) -> dict[str, dict]:
    return {p["name"]: p for p in candidate_view(result)["probes"]}


# --- live progress (grader/live.py lines, as the web stores them) ------------------------

LIVE_LINES = {
    "total": 4,
    "probes": [
        {"name": "floats", "outcome": "passed", "status": "ok", "finished": 1, "at": 10.0},
        {"name": "keeps_float16", "outcome": "failed", "status": "error", "finished": 2, "at": 11.0, "message": "ValueError: secret 42"},
        {"name": "integers", "outcome": "forged by the code", "status": "ok", "finished": 3, "at": 12.0},
    ],
}


def test_a_hidden_probes_live_line_is_its_name_and_outcome_only() -> None:
    view = candidate_progress(LIVE_LINES, public=False)
    assert view == {
        "total": 4, "finished": 3, "passed": 1, "failed": 1,
        "probes": [
            {"name": "floats", "outcome": "passed"},
            {"name": "keeps_float16", "outcome": "failed"},
            {"name": "integers", "outcome": "done"},  # an outcome outside the vocabulary is "judged at the end"
        ],
    }  # fmt: skip


def test_a_public_probes_live_line_adds_its_status() -> None:
    view = candidate_progress(LIVE_LINES, public=True)
    assert view is not None
    assert [p["status"] for p in view["probes"]] == ["ok", "error", "ok"]
    assert "secret" not in str(view) and "at" not in view["probes"][0]


def test_no_live_lines_is_no_live_view() -> None:
    assert candidate_progress({}, public=False) is None
    assert candidate_progress(None, public=True) is None


# ------------------------------------------------------------ error reports (grader/error_report.py)


def test_a_public_float_failure_carries_the_whole_error_report():
    wrong = FLOATS.copy()
    wrong[1, 3] += 0.5
    run = ProbeRun("small", "ok", observation=ta(wrong, "float64"))
    result = evaluate(PACKAGE, Execution(probes={"small": run}), {"small": ta(FLOATS, "float64")}, public=True)
    report = candidate_view(result.to_dict())["probes"][0]["error_report"]
    assert report["worst_index"] == [1, 3] and report["max_abs_error"] == 0.5
    assert report["map"]["rows"]["dims"] == [0] and report["map"]["cols"]["dims"] == [1]
    assert "max abs error 0.5" in report["summary"]


def test_a_hidden_float_failure_shows_where_and_how_far_out_but_no_value():
    wrong = FLOATS.copy()
    wrong[1, 3] += 0.5
    result = graded({"floats": ProbeRun("floats", "ok", observation=ta(wrong, "float64"))})
    assert result.probes[0].error_report["max_abs_error"] == 0.5  # the coach's full result
    report = seen(result)["floats"]["error_report"]
    assert report["hidden"] is True and report["worst_index"] == [1, 3] and report["over_bound"] == 1
    assert report["map"]["cells"][1 * 5 + 3] == "z"  # about 3e6 times its bound: the band above 1e4
    for field in ("max_abs_error", "max_rel_error", "max_ulp_error", "worst_ratio", "summary", "label", "path"):
        assert field not in report
    text = as_text(result)
    assert f"{wrong[1, 3]:.4g}" not in text and f"{FLOATS[1, 3]:.4g}" not in text and "0.5" not in text
    assert "error_report" not in seen(result)["keeps_float16"]


def test_a_hidden_custom_checks_report_loses_its_label_and_values():
    package = package_with_check(
        "import numpy as np\n\ndef answer(actual, expected):\n"
        "    report = {'ratio': np.array([0.5, 20.0, 1.0]), 'abs_error': np.array([1e-3, 0.04, 2e-3]), 'truth': np.array([1.0, 2.0, 3.0])}\n"
        f"    return False, 'no', {{**report, 'label': '{SECRET}'}}\n"
    )
    result = graded({"integers": ProbeRun("integers", "ok", observation=[5, 7, 10])}, package=package)
    assert result.probes[2].error_report["label"] == SECRET
    report = seen(result)["integers"]["error_report"]
    assert report["worst_index"] == [1] and report["map"]["cells"] == "UeU"  # 0.5 and 1 in (0.1, 1], 20 in (10, 100]
    assert SECRET not in as_text(result) and "0.04" not in as_text(result)


def test_a_syntax_errors_line_is_read_back_from_the_message_it_is_written_in() -> None:
    from grader.feedback import syntax_error_line, syntax_error_message

    assert syntax_error_line(syntax_error_message(12, "expected ':'")) == 12
    assert syntax_error_message(None, "unexpected EOF") == "SyntaxError: unexpected EOF"
    assert syntax_error_line(syntax_error_message(None, "on line 3: a message that names a line")) is None
    assert syntax_error_line("Wrong answer on line 4: ...") is None


# ------------------------------------------------------------ settings left changed (sandbox/runner/process_state.py)


def test_settings_left_changed_are_a_wrong_answer_named_only_from_the_known_settings():
    message = (
        "importing solution.py left torch grad mode (was True, now False) and the calls of this probe left "
        f"NumPy floating-point error handling (was a, now b); {SECRET} (was 1, now 2)"
    )
    result = graded({"floats": ProbeRun("floats", "settings_changed", message=message)})
    probe = seen(result)["floats"]
    assert probe["status"] == "wrong_answer"
    assert probe["message"] == TEMPLATES["settings_changed"].format(settings="torch grad mode, NumPy floating-point error handling")
    assert SECRET not in as_text(result)


def test_a_settings_report_naming_no_known_setting_still_says_what_kind_of_failure_it_is():
    result = graded({"floats": ProbeRun("floats", "settings_changed", message=f"{SECRET} (was 1, now 2)")})
    assert seen(result)["floats"]["message"] == TEMPLATES["settings_changed"].format(settings=TEMPLATES["settings_unnamed"])
