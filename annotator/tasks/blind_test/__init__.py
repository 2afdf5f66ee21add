"""The blind_test task type (an MCQ answered without the conversation): the task (task.py) and its figures (figures.py); the screen is mcq's."""
