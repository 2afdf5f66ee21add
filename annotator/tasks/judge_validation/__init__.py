"""The judge_validation task type: the task, with its screen and figures, in task.py."""
