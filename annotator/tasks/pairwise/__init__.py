"""The pairwise task type: the task (task.py), its screen (view.py), its figures (figures.py) and the pairs file reader (pairs_file.py)."""
