"""grader.scoring: weighted share of probes passed, overall and per category."""

from __future__ import annotations

from grader.scoring import CategoryScore, Scored, score


def test_all_passed_scores_100_and_none_passed_scores_0():
    assert score([Scored("a", 1, True), Scored("b", 2, True)])[0] == 100.0
    assert score([Scored("a", 1, False), Scored("b", 2, False)])[0] == 0.0


def test_weights_decide_the_overall_score():
    results = [Scored("values", 2, True), Scored("dtype", 1, False), Scored("values", 1, True)]
    total, _ = score(results)
    assert total == 75.0
    # The same pass/fail pattern with the weights swapped gives a different score.
    total, _ = score([Scored("values", 1, True), Scored("dtype", 3, False), Scored("values", 1, True)])
    assert total == 40.0


def test_per_category_scores_counts_and_declaration_order():
    results = [
        Scored("values", 2, True),
        Scored("dtype", 1, False),
        Scored("values", 1, False),
        Scored("dtype", 1, True),
        Scored("edge", 5, True),
    ]
    total, categories = score(results)
    assert list(categories) == ["values", "dtype", "edge"]
    assert categories["values"] == CategoryScore(score=66.67, passed=1, total=2)
    assert categories["dtype"] == CategoryScore(score=50.0, passed=1, total=2)
    assert categories["edge"] == CategoryScore(score=100.0, passed=1, total=1)
    assert total == 80.0


def test_scores_round_to_two_decimals():
    total, _ = score([Scored("a", 1, True), Scored("a", 1, True), Scored("a", 1, False)])
    assert total == 66.67


def test_an_imperfect_run_never_rounds_to_100():
    # 99999 of 100000 is 99.999 %, which rounds to 100.00: it must stay below.
    results = [Scored("a", 1, True)] * 99_999 + [Scored("a", 1, False)]
    total, categories = score(results)
    assert total == 99.99
    assert categories["a"].score == 99.99
    assert score([Scored("a", 1, True)] * 100_000)[0] == 100.0


def test_an_imperfect_run_with_tiny_failed_weight_stays_below_100():
    total, _ = score([Scored("a", 1000, True), Scored("a", 0.001, False)])
    assert total == 99.99
    assert score([Scored("a", 1000, True), Scored("a", 0.001, True)])[0] == 100.0


def test_zero_total_weight_scores_zero_without_dividing_by_zero():
    total, categories = score([Scored("a", 0, True), Scored("a", 0, False)])
    assert total == 0.0
    assert categories["a"] == CategoryScore(score=0.0, passed=1, total=2)
    assert score([]) == (0.0, {})


def test_a_zero_weight_category_scores_zero_but_others_are_unaffected():
    total, categories = score([Scored("free", 0, True), Scored("real", 1, True)])
    assert total == 100.0
    assert categories["free"].score == 0.0
    assert categories["real"].score == 100.0


def test_a_failed_zero_weight_probe_keeps_the_score_below_100():
    total, categories = score([Scored("a", 1, True), Scored("a", 0, False)])
    assert total < 100.0
    assert categories["a"].score < 100.0
