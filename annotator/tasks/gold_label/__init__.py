"""The gold_label task type: the task (task.py), its screen (view.py) and its gold labels and figures (figures.py)."""
