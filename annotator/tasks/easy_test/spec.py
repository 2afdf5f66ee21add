"""The easy_test task's declaration: answered as an MCQ (annotator.tasks.mcq.spec.choice_spec)."""
from annotator.tasks.mcq.spec import choice_spec

SPEC = choice_spec("easy_test", "annotator.tasks.easy_test.task:EasyTestTask")
