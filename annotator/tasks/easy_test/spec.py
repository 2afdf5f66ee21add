"""The easy_test task's declaration: answered as an MCQ (annotator.tasks.mcq.spec.choice_spec)."""
from annotator.tasks.mcq.spec import SCREEN_OPTIONS, choice_spec

SPEC = choice_spec("easy_test", "annotator.tasks.easy_test.task:EasyTestTask", SCREEN_OPTIONS + (
    ("n_options=N", "generalized preferences (RealPref G.1): options per question, the generalized one and N - 1 "
                    "others"),))
