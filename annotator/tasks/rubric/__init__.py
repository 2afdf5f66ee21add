"""The rubric task type: the task (task.py), its screen (view.py), its figures (figures.py), the rubric schema (schema.py) and the default rubric (default.yaml)."""
