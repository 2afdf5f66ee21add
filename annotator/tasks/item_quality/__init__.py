"""The item_quality task type: the task (task.py), its screen (view.py) and its figures (figures.py)."""
