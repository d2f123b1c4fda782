"""How kernel code is shown: ``listing`` (a snippet region with its notes, the tokens coloured),
``diff`` (the one side-by-side diff), ``notes`` (annotations anchored to kernel lines)."""
