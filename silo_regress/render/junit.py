"""The check report as JUnit XML: one testcase per task and artifact.

CI systems (GitLab, Jenkins, GitHub test reporters) show a failing testcase with
its message and text: here the behaviour summary and the capped diff. The
classname is the task (``crm-west/TASK-002``), the name the artifact, so a task's
two artifacts sit together.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from silo_regress.judging.outcome import Outcome, Report, Verdict
from silo_regress.render.excerpt import diff_lines, headline, made_by
from silo_regress.render.wording import word_sides

# Characters XML 1.0 cannot hold at all, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(text: str) -> str:
    """``text`` XML 1.0 can hold, with nothing invisible or controlling left raw."""
    from silo_regress.canon.visible import shielded

    return shielded(_NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def case_class(outcome: Outcome) -> str:
    if outcome.task.qualified or outcome.environment is None:
        return str(outcome.task)
    return f"{outcome.environment}/{outcome.task.task_id}"


def failure_text(outcome: Outcome) -> str:
    lines = [f"{outcome.verdict.value}: {case_class(outcome)} {outcome.artifact}"]
    if outcome.baseline_label:
        lines.append(f"baseline: {outcome.baseline_label}")
    if outcome.run_path:
        lines.append(f"run:      {outcome.run_path}")
    pedigree = made_by(outcome)
    if pedigree:
        lines.append(pedigree)
    if outcome.detail:
        lines.append(outcome.detail)
    if outcome.behaviour:
        lines.append("behaviour:")
        lines.extend(f"  - {word_sides(note)}" for note in outcome.behaviour)
    diff = diff_lines(outcome)
    if diff:
        lines.append("diff (- baseline, + run):")
        lines.extend(diff)
    return "\n".join(lines) + "\n"


def _advice(report: Report) -> tuple[str, dict[Verdict, str]]:
    """The closing advice (render/advice.py) laid out for JUnit: every step for the
    suite's output, and the steps answering each verdict for its failing testcases (a
    CI page that shows only the failing case still says what to do; the skip-the-hook
    step stays in the suite's output). Nothing for a passing report."""
    if report.ok:
        return "", {}
    from silo_regress.render.advice import advise, step_body

    everything: list[str] = []
    per_verdict: dict[Verdict, list[str]] = {}
    for step in advise(report):
        body = [f"  {line}" for line in step_body(step)]
        everything += [f"{step.why}:", *body]
        if step.kind is not None:
            per_verdict.setdefault(step.kind, []).extend([f"next step: {step.why}:", *body])
    suite = "next steps:\n" + "\n".join(everything) + "\n" if everything else ""
    return suite, {kind: "\n".join(lines) + "\n" for kind, lines in per_verdict.items()}


def _stats_cases(suite: ET.Element, report: Report) -> None:
    from silo_regress.render.statslines import suite_sentence, task_sentence

    assert report.stats is not None
    for task in report.stats.tasks:
        case = ET.SubElement(
            suite, "testcase", {"classname": xml_text(task.task), "name": "pass rate", "time": "0"}
        )
        if task.failed:
            failure = ET.SubElement(
                case, "failure", {"message": xml_text(task_sentence(task)), "type": task.tier.value}
            )
            failure.text = xml_text(task_sentence(task))
    case = ET.SubElement(
        suite, "testcase", {"classname": "suite", "name": "suite pass rate", "time": "0"}
    )
    if report.stats.suite.failed:
        sentence = xml_text(suite_sentence(report.stats.suite))
        failure = ET.SubElement(case, "failure", {"message": sentence, "type": "suite-regression"})
        failure.text = sentence


def render_junit(report: Report) -> str:
    failures = sum(1 for o in report.outcomes if not o.ok)
    tests = len(report.outcomes)
    if report.stats is not None:  # a test case per stats task, and one for the suite
        tests += len(report.stats.tasks) + 1
        failures += sum(t.failed for t in report.stats.tasks) + report.stats.suite.failed
    counts = {
        "tests": str(tests),
        "failures": str(failures),
        "errors": "0",
        "skipped": "0",
        "time": "0",
    }
    suites = ET.Element("testsuites", {"name": "silo-regress", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": "silo-regress check", **counts})
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(
        properties, "property", {"name": "baselines", "value": xml_text(report.source.label)}
    )
    suite_steps, own_steps = _advice(report)
    for outcome in report.outcomes:
        name = outcome.artifact
        if report.repeat is not None:  # one testcase per distinct result of the rollouts
            from silo_regress.render.tallies import outcome_rollouts

            name += f" ({outcome_rollouts(outcome, report)})"
        attributes = {"classname": xml_text(case_class(outcome)), "name": xml_text(name)}
        if outcome.baseline_path:
            attributes["file"] = xml_text(outcome.baseline_path)
        attributes["time"] = "0"
        case = ET.SubElement(suite, "testcase", attributes)
        if outcome.ok:
            continue
        failure = ET.SubElement(
            case,
            "failure",
            {"message": xml_text(headline(outcome)), "type": outcome.verdict.value},
        )
        failure.text = xml_text(failure_text(outcome) + own_steps.get(outcome.verdict, ""))
    if report.stats is not None:
        _stats_cases(suite, report)
    if suite_steps:  # after the testcases, where the JUnit schema puts a suite's output
        ET.SubElement(suite, "system-out").text = xml_text(suite_steps)
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
