"""The names every reader of a prefval file sees: each table's columns (exact spelling and case, in order: they are
the keys of `SELECT *` rows and the columns of `pandas.read_sql`) and each index (name, table, columns, unique).
SQLite matches names without regard to case, so only a test of the stored names catches a column or index created
as "STUDY_ID" (docs/data-model.md; CONTRIBUTING.md, "Mutation testing"). The lists are the schema as documented; a migration
that adds a column or an index adds it here."""
from __future__ import annotations

COLUMNS = {
    "adjudications": "id study_id unit_id adjudicator_id kind answer reason submitted_at supersedes".split(),
    "annotations": ("id study_id unit_id item_id annotator_id assignment_id status answer note source started_at "
        "submitted_at seconds supersedes").split(),
    "annotators": "id name kind model created_at".split(),
    "assignments": "id study_id unit_id annotator_id position shuffle_seed created_at released_at".split(),
    "bundle_exports": "id study_id study_name annotator_id exported_at file_name n_items".split(),
    "bundle_merges": "id bundle_id study_id annotator_id merged_at file_name added".split(),
    "context_messages": "context_id idx role content".split(),
    "contexts": "id dataset_id external_id n_messages n_chars source message_sizes".split(),
    "datasets": "id name format source_path file_hash imported_at derived_from_study settings".split(),
    "events": "id at kind study_id annotator_id payload".split(),
    "gen_rows": ("id pipeline stage row_key status output parents run_id model template seed prompt_tokens "
        "completion_tokens cost_usd calls reason created_at seq").split(),
    "imports": "id dataset_id path file_hash imported_at n_added n_unchanged".split(),
    "items": "id dataset_id external_id kind payload content_hash context_id context_end created_at source".split(),
    "llm_batch_lines": "batch_id custom_id key status".split(),
    "llm_batches": ("id scope run_id provider api_base model provider_batch_id input_file_id output_file_id "
        "error_file_id status n_lines n_completed n_failed price_factor error created_at updated_at finished_at").split(),
    "llm_budget_shares": "scope owner host pid spent_usd ended lease_until updated_at".split(),
    "llm_calls": ("key run_id model api_base template request reply_text parsed finish_reason prompt_tokens "
        "completion_tokens usage_known cost_usd seconds attempts created_at key_version").split(),
    "llm_claims": "key owner host pid run_id claimed_at lease_until".split(),
    "meta": "key value".split(),
    "queue_lengths": "study_id annotator_id live".split(),
    "runs": "id kind name config started_at ended_at status totals".split(),
    "schema_migrations": "version name applied_at".split(),
    "sources": "id text".split(),
    "studies": "id name task_type settings seed created_at".split(),
    "study_items": "id study_id item_id item_b_id position extra open_slots".split(),
    "study_open_units": "study_id open".split(),
}

INDEXES = {
    "idx_adjudications_study_id_unit_id_submitted_at":
        ("adjudications", ["study_id", "unit_id", "submitted_at"], False),
    "idx_annotations_activity": ("annotations", ["study_id", "submitted_at"], False),
    "idx_annotations_annotator_time": ("annotations", ["study_id", "annotator_id", "submitted_at"], False),
    "idx_annotations_assignment_id_submitted_at": ("annotations", ["assignment_id", "submitted_at"], False),
    "idx_annotations_progress": ("annotations", ["study_id", "status", "annotator_id", "unit_id"], False),
    "idx_annotations_study_id_annotator_id": ("annotations", ["study_id", "annotator_id"], False),
    "idx_annotators_name": ("annotators", ["name"], True),
    "idx_assignments_live": ("assignments", ["study_id", "annotator_id", "position", "id"], False),
    "idx_assignments_queue": ("assignments", ["study_id", "annotator_id", "position", "id", "unit_id", "released_at"],
                              False),
    "idx_assignments_queue_unit": ("assignments", ["study_id", "annotator_id", "unit_id", "released_at"], False),
    "idx_assignments_released": ("assignments", ["study_id", "annotator_id"], False),
    "idx_assignments_study_id_annotator_id_position": ("assignments", ["study_id", "annotator_id", "position"], False),
    "idx_assignments_study_id_unit_id_annotator_id": ("assignments", ["study_id", "unit_id", "annotator_id"], True),
    "idx_bundle_exports_study_id_annotator_id": ("bundle_exports", ["study_id", "annotator_id"], False),
    "idx_bundle_merges_bundle_id": ("bundle_merges", ["bundle_id"], False),
    "idx_datasets_name": ("datasets", ["name"], True),
    "idx_events_at": ("events", ["at"], False),
    "idx_events_study_kind": ("events", ["study_id", "kind", "at"], False),
    "idx_gen_rows_pipeline_stage_row_key": ("gen_rows", ["pipeline", "stage", "row_key"], True),
    "idx_items_dataset_id_external_id": ("items", ["dataset_id", "external_id"], True),
    "idx_llm_batch_lines_key": ("llm_batch_lines", ["key", "batch_id"], False),
    "idx_llm_batches_status": ("llm_batches", ["status"], False),
    "idx_llm_calls_run_id": ("llm_calls", ["run_id"], False),
    "idx_runs_kind_started_at": ("runs", ["kind", "started_at"], False),
    "idx_studies_name": ("studies", ["name"], True),
    "idx_study_items_open": ("study_items", ["study_id", "position"], False),
    "idx_study_items_study_id_position": ("study_items", ["study_id", "position"], False),
}


def test_every_table_has_its_columns_spelled_as_documented(store):
    con = store.db.conn
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                        "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    assert tables == sorted(COLUMNS)
    for table, cols in COLUMNS.items():
        assert [r[1] for r in con.execute(f"PRAGMA table_info([{table}])")] == cols, table
        assert [d[0] for d in con.execute(f"SELECT * FROM [{table}] LIMIT 0").description] == cols, table


def test_every_index_has_its_name_columns_and_uniqueness(store):
    con = store.db.conn
    got = {}
    for name, table in con.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' "
                                   "AND name NOT LIKE 'sqlite_%' ORDER BY name"):
        cols = [r[2] for r in con.execute(f"PRAGMA index_info([{name}])")]
        unique = next(bool(r[2]) for r in con.execute(f"PRAGMA index_list([{table}])") if r[1] == name)
        got[name] = (table, cols, unique)
    assert got == INDEXES



# every table's primary key: "id" except where a row is named by other columns
PRIMARY_KEYS = {t: ["id"] for t in COLUMNS} | {
    "context_messages": ["context_id", "idx"], "llm_budget_shares": ["scope", "owner"], "llm_calls": ["key"],
    "llm_claims": ["key"], "meta": ["key"], "queue_lengths": ["study_id", "annotator_id"],
    "schema_migrations": ["version"], "study_open_units": ["study_id"], "llm_batch_lines": ["batch_id", "custom_id"],
}


def test_every_table_has_its_primary_key(store):
    con = store.db.conn
    for table, pk in PRIMARY_KEYS.items():
        got = [r[1] for r in sorted(con.execute(f"PRAGMA table_info([{table}])"), key=lambda r: r[5]) if r[5]]
        assert got == pk, table


def test_the_views_have_their_names(store):
    got = [r[0] for r in store.db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name")]
    assert got == ["annotation_history", "current_annotations", "current_answers"]
