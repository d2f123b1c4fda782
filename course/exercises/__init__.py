"""What a learner answers, and what is kept of it.

``annotation`` (mark what each kernel line does), ``coding`` (write a piece
of the kernel: the exercise, its file, ``coding_piece`` its lexical guard,
``coding_check`` the check in the sandbox, ``coding_widget`` the panel,
``code_editor`` the editor), ``reveal`` (an answer stays out of the page
until passed or asked for), ``progress`` (what the learner has passed).
"""
