"""A persona_filter round over several datasets (the generator writes life events and preferences as datasets of
their own): every --dataset's records become units, in the order given, each under its profile."""
from __future__ import annotations

import json

from annotator.cli import main
from storage.store import Store


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_events_and_preferences_in_one_round(tmp_path, capsys):
    db = str(tmp_path / "p.db")
    prof = _write(tmp_path / "prof.jsonl", [{"id": "u1:profile", "text": "Ana, 34, a nurse in Porto.",
                                              "record_type": "profile"}])
    ev = _write(tmp_path / "ev.jsonl", [{"id": f"u1:e{i}", "text": f"event {i}", "record_type": "event",
                                         "parent_external_id": "u1:profile"} for i in (1, 2)])
    pr = _write(tmp_path / "pr.jsonl", [{"id": f"u1:p{i}:preference", "text": f"preference {i}",
                                         "record_type": "preference", "parent_external_id": "u1:profile"}
                                        for i in (1, 2, 3)])
    for path, name in ((prof, "profiles"), (ev, "events"), (pr, "prefs")):
        assert main(["import", "jsonl", path, "--kind", "persona_record", "--dataset", name, "--db", db]) == 0
    assert main(["study", "create", "r1", "--task", "persona_filter", "--dataset", "events", "--dataset", "prefs",
                 "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        st = s.get_study("r1")
        units = s.units(st.id)
        items = s.get_items([u.item_id for u in units])
        profile = {i.external_id: i.id for i in s.items("profiles")}["u1:profile"]
    assert [items[u.item_id].external_id for u in units] == ["u1:e1", "u1:e2", "u1:p1:preference",
                                                             "u1:p2:preference", "u1:p3:preference"]
    assert all(u.extra.get("parent_item") == profile for u in units)  # each shown under its profile
    assert st.settings["datasets"] == ["events", "prefs"]
    capsys.readouterr()
    assert main(["study", "create", "r2", "--task", "persona_filter", "--dataset", "events", "--dataset", "events",
                 "--db", db]) == 1
    assert "prefval: error: --dataset events is given twice" in capsys.readouterr().err
    assert main(["study", "create", "r3", "--task", "persona_filter", "--dataset", "events", "--dataset", "profiles",
                 "--option", "record_types=preference", "--db", db]) == 1
    assert "datasets 'events', 'profiles' have no persona_record items of type preference" in capsys.readouterr().err
