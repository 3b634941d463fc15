"""The modules of ported public pipelines whose TensorFlow math runs unchanged (issue 23), with the
``tf`` each is written against and the fixture file (in tests/data/tfops_fixtures/) that holds what
tf.data yields for them. tools/record_tf_math_pipelines.py writes the fixtures; the test
tests/compat/test_pipelines_tf_math.py replays every module listed here."""

#: module -> (its ``tf``: "tf" for ``import headrace as tf``, "tf1" for ``import headrace.compat.v1 as tf``,
#: "eager" for ``import headrace.compat.eager as tf``, "eager_v1" for ``import headrace.compat.eager_v1 as tf``;
#: fixture)
MODULES = {
    "tests.helpers.tf_math_pipelines": ("tf", "pipelines.json"),
    "tests.helpers.tf1_math_pipelines": ("tf1", "pipelines.json"),
    "tests.helpers.tf_math_pipelines_guides": ("tf", "pipelines_guides.json"),
    "tests.helpers.tf_math_pipelines_repos": ("tf", "pipelines_repos.json"),
    "tests.helpers.tf1_math_pipelines_repos": ("tf1", "pipelines_repos.json"),
    "tests.helpers.tf_math_pipelines_eager": ("eager", "pipelines_eager.json"),
    "tests.helpers.tf1_math_pipelines_eager": ("eager_v1", "pipelines_eager.json"),
}

#: what each binding is in the tests (the recorder rebinds "tf" and "eager" to ``tensorflow``, "tf1" and
#: "eager_v1" to ``tensorflow.compat.v1``)
BINDINGS = {
    "tf": "headrace",
    "tf1": "headrace.compat.v1",
    "eager": "headrace.compat.eager",
    "eager_v1": "headrace.compat.eager_v1",
}
