"""The easy_test task type (an MCQ with its answer key shown after answering): the task (task.py) and its figures (figures.py); the screen is mcq's."""
