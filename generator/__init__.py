"""Everything that calls an LLM: the one LLM client (``client``, contract in ``llm_types``), the item generator
(``stages``, ``pipeline``, prompt templates in ``templates/``) and the evaluator (``evaluate``: model answers and
LLM-judge runs stored as annotations of annotators of kind "llm", beside the human ones). litellm is imported lazily
inside this package only, never on the TUI's start-up path.
"""
