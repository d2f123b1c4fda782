"""Settings for every pytest run of the checkout, the notebooks under nbval included."""

import os
import tempfile

# Learner copies (page.my_copy, page.try_mine) go to a throwaway workspace in tests and in
# the notebooks nbval runs (their Jupyter kernels inherit this process's environment),
# never into the home folder of whoever runs the tests.
os.environ.setdefault("COURSE_WORKSPACE", tempfile.mkdtemp(prefix="course-workspace-"))
