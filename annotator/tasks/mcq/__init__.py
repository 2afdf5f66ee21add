"""The mcq task type: the task (task.py), its screen (view.py), its figures (figures.py) and the per-item answer statistics shared with easy_test and blind_test (stats.py)."""
