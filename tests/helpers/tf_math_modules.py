"""The modules of ported public pipelines whose TensorFlow math runs unchanged (issue 23), with the
``tf`` each is written against and the fixture file (in tests/data/tfops_fixtures/) that holds what
tf.data yields for them. tools/record_tf_math_pipelines.py writes the fixtures; the test
tests/compat/test_pipelines_tf_math.py replays every module listed here."""

#: module -> ("tf" for ``import headrace as tf``, "tf1" for ``import headrace.compat.v1 as tf``; fixture)
MODULES = {
    "tests.helpers.tf_math_pipelines": ("tf", "pipelines.json"),
    "tests.helpers.tf1_math_pipelines": ("tf1", "pipelines.json"),
    "tests.helpers.tf_math_pipelines_guides": ("tf", "pipelines_guides.json"),
    "tests.helpers.tf_math_pipelines_repos": ("tf", "pipelines_repos.json"),
    "tests.helpers.tf1_math_pipelines_repos": ("tf1", "pipelines_repos.json"),
}
