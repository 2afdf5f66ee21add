"""The persona_filter task type: the task (task.py), its screen (view.py), its figures (figures.py) and the two-round chain rules (chain.py)."""
