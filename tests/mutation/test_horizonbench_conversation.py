"""storage/importers/horizonbench.py, parse_conversation: a scenario line before any date header is a system
message; the scenario lines under a date header are stripped and joined to it (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

from storage.importers import horizonbench


def test_a_scenario_line_before_any_date_header_is_a_system_message():
    msgs = horizonbench.parse_conversation("Scenario: at the beach\nUser: hi\nScenario: still user text")
    assert [(m.role, m.content) for m in msgs] == [
        ("system", "Scenario: at the beach"), ("user", "hi\nScenario: still user text")]


def test_scenario_lines_of_a_date_header_are_stripped_and_joined_to_it():
    msgs = horizonbench.parse_conversation("Date: 2024-05-01\nScenario: at the beach   \nsunny day\nUser: hi")
    assert [(m.role, m.content) for m in msgs] == [
        ("system", "Date: 2024-05-01\nScenario: at the beach\nsunny day"), ("user", "hi")]
