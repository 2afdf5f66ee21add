"""Reserved for the item generator and the evaluator (not built yet).

Planned: a resumable, cached, concurrent litellm pipeline from persona sentences to MCQ / T-F / open items, written
as datasets with provenance per row through storage.Store; and an evaluator whose model answers and LLM-judge scores
are stored as annotations of annotators of kind "llm", beside the human ones. litellm will be imported lazily inside
this package only, never on the TUI's start-up path.
"""
